/**
 * A gate before every request attempt of an export: the folder it stages into must still be there.
 * A folder removed mid-run (by hand, by a cleaner) does not make the writes fail, since the open
 * files live on unnamed, so a run would otherwise buy every remaining page into files nobody can
 * read back. The spool's name is checked instead (a `stat`, microseconds), and a missing one stops
 * every walk before its next request, naming the folder that went.
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { RequestGate } from '../control.ts';
import { NotWritableError } from '../errors.ts';
import type { Spool } from './durable.ts';
import type { WalkHalt } from './ledger.ts';

export class StagingGuard implements RequestGate {
  constructor(
    private readonly spool: Spool,
    private readonly halt: WalkHalt,
  ) {}

  acquire(): Promise<boolean> {
    if (this.spool.isInPlace()) return Promise.resolve(true);
    this.halt.fail(-1, stagingGone(this.spool.path));
    return Promise.resolve(false);
  }

  /** A failure of the file system while staging, told as the staging folder's removal when that is what it was. */
  explain(error: unknown): unknown {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    const fromFiles = typeof code === 'string' && /^E[A-Z]+$/.test(code);
    return fromFiles && !this.spool.isInPlace() ? stagingGone(this.spool.path) : error;
  }
}

/** The error of a run whose staging went: it names the outermost folder that is gone. */
export function stagingGone(spool: string): NotWritableError {
  let gone = dirname(spool);
  while (dirname(gone) !== gone && !existsSync(dirname(gone))) gone = dirname(gone);
  if (existsSync(gone)) gone = spool;
  return new NotWritableError(
    `${gone} was removed while the export was staging into it, and the pages staged there with it, so the export stopped before buying another; ` +
      `run the export again to start over (nothing of this run is left to continue)`,
    gone,
  );
}
