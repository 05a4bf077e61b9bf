/**
 * The sandbox's virtual clock (docs/sandbox.md "The sandbox"). The seed's data is dated up to `EPOCH_SECONDS`,
 * where the clock starts. Each `advance()` is a round of virtual time after the last; the records it
 * adds to every resource are spread over that round in order, one slot each, so every round is newer
 * than the one before and a record keeps its time as later rounds come.
 *
 * The clock never passes the machine's: a round that would end after `Date.now()` ends there. The
 * epoch lies far enough back that hourly rounds reach the machine's time only after thousands of them
 * (8,760 a year); from then on a round spans only the real time since the last, and its records may
 * share a second with each other and with the round before.
 */

/** 2025-11-22T00:00:00Z: the seed's data is dated up to here, and the virtual clock starts here. */
export const EPOCH_SECONDS = 1_763_769_600;

/** How long a round lasts unless `advance()` says: an hour, as an hourly schedule sees it. */
const ROUND_SECONDS = 3_600;

/** One `advance()`: the records it added to every resource and the virtual time they were posted in. */
interface Round {
  /** Records every earlier round added. */
  before: number;
  records: number;
  /** Unix seconds: the round runs after `from`, up to and including `to`. */
  from: number;
  to: number;
}

/** The clock as a handler reads it: the time now and the times of the records `advance()` added. */
export interface SandboxClockReading {
  /** Virtual time now, in Unix seconds. */
  readonly now: number;
  /** Records every round so far added to every resource. */
  readonly records: number;
  /**
   * Unix seconds of the record `advance()` added at `index` (-1 the first ever added, -2 the next, …).
   * `fraction` (in [0, 1), a draw of the record's own seeded generator) places it within its slot.
   */
  addedAt(index: number, fraction: number): number;
}

export class SandboxClock implements SandboxClockReading {
  private readonly rounds: Round[] = [];
  private added = 0;
  private seconds = EPOCH_SECONDS;

  get now(): number {
    return this.seconds;
  }

  get records(): number {
    return this.added;
  }

  /**
   * A round: `seconds` of virtual time pass (by default an hour, or a second per record when that is
   * longer), cut at the machine's clock, and every resource gains `records` records posted in them.
   */
  advance(records: number, seconds = Math.max(ROUND_SECONDS, records)): void {
    const machine = Math.floor(Date.now() / 1000);
    const to = Math.max(this.seconds, Math.min(this.seconds + seconds, machine));
    if (records > 0) this.rounds.push({ before: this.added, records, from: this.seconds, to });
    this.added += records;
    this.seconds = to;
  }

  addedAt(index: number, fraction: number): number {
    const nth = -index - 1;
    const { before, records, from, to } = this.roundOf(nth);
    const span = to - from;
    const first = from + Math.floor(((nth - before) * span) / records) + 1;
    const last = from + Math.floor(((nth - before + 1) * span) / records);
    return last < first ? last : first + Math.floor(fraction * (last - first + 1));
  }

  /** The round that added the `nth` record (0-based, in the order they were added). */
  private roundOf(nth: number): Round {
    let low = 0;
    let high = this.rounds.length - 1;
    if (nth < 0 || high < 0 || nth >= this.added) throw new RangeError(`no record was added at index ${-nth - 1}`);
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.rounds[mid].before <= nth) low = mid;
      else high = mid - 1;
    }
    return this.rounds[low];
  }
}
