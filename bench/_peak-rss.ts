/**
 * A bench child's own peak resident set, in MB.
 *
 * Why not `process.resourceUsage().maxRSS` alone: on Linux, a process started by fork and exec
 * reports at least the resident set its parent had when it forked, since the kernel keeps the larger
 * of the old and new address spaces' peaks. A bench parent that has run DuckDB's COPY holds about
 * 670 MB, and a child whose own peak was 255 MB then reported 576 MB. `VmHWM` in `/proc/self/status`
 * is the peak of this process's address space alone. Where there is no `/proc` (macOS), `maxRSS` is
 * what there is.
 */
import { readFileSync } from 'node:fs';

export function peakRssMb(): number {
  const kilobytes = vmHwmKilobytes();
  return (kilobytes ?? process.resourceUsage().maxRSS) / 1024;
}

function vmHwmKilobytes(): number | undefined {
  let status: string;
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch {
    return undefined;
  }
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(status);
  return match === null ? undefined : Number(match[1]);
}
