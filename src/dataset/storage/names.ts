/**
 * The names a store holds: `/`-joined relative paths under its location (`orders/month=2024-01/part
 * 1.parquet`), the same on a disk and in a bucket. A segment may hold any character but `/` and
 * control characters; it may not be empty, `.` or `..`, and may not begin with `.`: those names are
 * the store's own (a local write's temporary file, a lease's state, an S3 probe), which `list`
 * never shows, so nothing stored by name can collide with them or escape the location.
 */
import { StorageNameError } from '../../errors.ts';

/** What is wrong with `name` as a stored name, or undefined when it is one. */
export function nameProblem(name: string): string | undefined {
  if (name === '') return 'is empty';
  if (name.startsWith('/')) return 'may not begin with /';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'may not hold control characters';
  for (const segment of name.split('/')) {
    if (segment === '') return 'may not hold an empty segment (//, or a trailing /)';
    if (segment.startsWith('.')) return `may not hold a segment beginning with . (${JSON.stringify(segment)})`;
  }
  return undefined;
}

/** Throws `STORAGE_NAME` unless `name` is a stored name. */
export function checkName(name: string, location: string): void {
  const problem = nameProblem(name);
  if (problem !== undefined) throw new StorageNameError(`the name ${JSON.stringify(name)} ${problem}`, location);
}

/**
 * Throws `STORAGE_NAME` unless `prefix` is `''` or the beginning of a stored name: complete
 * segments followed by `/`, then perhaps the beginning of one (`walks/`, `walks/wa`).
 */
export function checkPrefix(prefix: string, location: string): void {
  if (prefix === '') return;
  checkName(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix, location);
}

/** Whether a listed name is one of the store's own (a segment beginning with `.`), which `list` leaves out. */
export function isOwnName(name: string): boolean {
  return name.startsWith('.') || name.includes('/.');
}
