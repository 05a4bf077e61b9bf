/**
 * When a layout uses its fast path, the code made for its shape (`compiled-code.ts`): from a file's
 * `fastPaths.makeAfter`th record on, made again when the shape grew, dropped when it does not pay.
 */

/**
 * `makeAfter`: the record of a layout from which its fast path writes (the walk writes those
 * before): a dataset's small parts never pay for making it. The tests set it to 1, to check the
 * fast path against the walk on every record, and to Infinity, for the walk alone.
 */
export const fastPaths = { makeAfter: 200 };
/** Refusals a fast path may meet before it is dropped for refusing more than half the records. */
const REFUSALS_ALLOWED = 500;
/** Keys without a place in the shape that a level's fast path skips when they hold nothing, at most (more refuse the record, for the walk). */
const MAX_SKIPPED = 64;
/** How often a fast path is made again as its layout's shape grows, at most. */
const MAX_MAKES = 64;

/**
 * A layout's fast path, made by `make`: from the layout's `fastPaths.makeAfter`th record on, made
 * again when the shape it was made for grew (`stale`), and dropped for good when it refuses most
 * records (keys that differ record by record: each would be paid for twice) or the shape keeps growing.
 */
export class FastPath<F> {
  /** The shape grew since the fast path was made (a field added, a key seen holding nothing). */
  stale = true;
  private compiled: F | undefined;
  private records = 0;
  /** Records the fast path was given, and how many of those it refused. */
  private offered = 0;
  private refused = 0;
  private makes = 0;

  constructor(private readonly make: () => F | undefined) {}

  /** The fast path for the next record, or undefined when the walk is to write it. */
  next(): F | undefined {
    if (++this.records < fastPaths.makeAfter) return undefined;
    if (this.stale) {
      this.stale = false;
      this.compiled = ++this.makes > MAX_MAKES ? undefined : this.make();
    }
    if (this.compiled !== undefined) this.offered++;
    return this.compiled;
  }

  /**
   * Notes in `keys` (those of one struct or level the shape lacks) that the walk saw `key` holding
   * nothing, so the code made next skips it too rather than refuse the record; nothing once the fast
   * path is dropped for good.
   */
  skipLater(keys: string[], key: string): void {
    if (this.makes > MAX_MAKES || keys.length >= MAX_SKIPPED || keys.includes(key)) return;
    keys.push(key);
    this.stale = true;
  }

  /** The fast path refused the record `next` gave it for. */
  refusedOne(): void {
    if (++this.refused > REFUSALS_ALLOWED && this.refused * 2 > this.records) {
      this.compiled = undefined;
      this.makes = MAX_MAKES + 1;
    }
  }

  /** How many records the fast path wrote (for tests and benches: it is working). */
  get taken(): number {
    return this.offered - this.refused;
  }
}
