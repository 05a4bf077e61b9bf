/**
 * Where an export's staged pages end up: a file or a dataset. The engine owns the walks, the
 * staging (journal, spool, held pages), the lock and the ledger, the same for both; a destination
 * says where those files live, checks a page before it is staged, and publishes the spool.
 */
import type { SchemaDriftError } from '../errors.ts';
import type { DatasetChanges } from './types.ts';
import type { ExportState, WalkState } from './journal.ts';

/** The staging files of an output: where the engine keeps what survives a crash. */
export interface StagingFiles {
  /** One writer at a time. */
  lock: string;
  /** The journal: walks, checkpoints, totals. */
  journal: string;
  /** Records of the staged pages, NDJSON. */
  spool: string;
  /** Pages bought ahead of their turn. */
  held: string;
}

/** The first `records` records of the spool, which end at byte `bytes`. */
export interface SpoolPrefix {
  records: number;
  bytes: number;
}

/** A complete output with nothing staged: a resume has nothing to buy. */
export interface CompleteOutput {
  /** Records it holds, when the destination can tell (a file). */
  records?: number;
}

export interface Published {
  /** The output file's size (files). */
  bytes?: number;
  /** Records the output file holds now, over every run (files). */
  records?: number;
  /** What the publish changed (datasets). */
  dataset?: DatasetChanges;
  /** Strings with invalid UTF-16 the writers repaired. */
  repaired: number;
  /** The spool was taken into the output and a fresh one starts (a dataset after a partial publish). */
  spoolTaken: boolean;
}

/** What a destination declares about itself (as dlt's destinations declare what they can load). */
export interface DestinationCapabilities {
  /**
   * A record whose key the export staged before: `'drop'` it while staging (a file holds each record
   * once), or stage it and let publishing `'merge'` the versions by key (a dataset keeps the latest).
   */
  readonly duplicates: 'drop' | 'merge';
  /**
   * What a run that stopped early publishes: `'new-records'`, only when it staged records of its own
   * (a file is rewritten whole, for nothing otherwise), or `'staged'`, whatever is staged (a dataset's
   * marks and merged rows move even when the run added no record).
   */
  readonly partialPublish: 'new-records' | 'staged';
  /**
   * Can publish a prefix of the spool (`publish`'s `through`): a limit lowered on resume then holds,
   * the records staged past it kept for the next run. Without it the whole spool is published.
   */
  readonly publishesPrefix: boolean;
  /** A frozen schema's drift: `'record'` it (`recordFrozenDrift`), or `'none'` to handle (files keep no schema). */
  readonly drift: 'record' | 'none';
}

export interface Destination {
  /** The file or directory, as the caller named it. */
  readonly output: string;
  /** The folder that must be writable, and whose disk may fill up. */
  readonly folder: string;
  readonly files: StagingFiles;
  /** What a caller is told to do with held state it cannot use. */
  readonly remedy: string;
  /** Makes the folders staging needs (the output's folder is already known to be writable). */
  prepare(): Promise<void>;
  /**
   * Holding the lock: finishes what a killed run left half done, and sweeps its temporary files.
   * `restart`: staging this version cannot read is dropped rather than refused.
   */
  recover(restart: boolean): Promise<void>;
  /**
   * Just before the run's first request: fixes how the output is written where writers share it (a
   * new dataset's settings), or refuses a run that asks otherwise than another writer fixed.
   */
  bind?(): Promise<void>;
  /** Undoes `bind` for a run that ended having bought nothing. Never throws. */
  unbind?(): Promise<void>;
  /**
   * The output is complete and nothing is staged: a resume has nothing to buy. Undefined when it
   * has; throws when what is there is not this export's to continue (`OtherExportError`).
   */
  completeOutput(): Promise<CompleteOutput | undefined>;
  /**
   * Makes what is staged so far durable beyond this machine (a dataset on a store: one object of
   * what the staging files gained, `staging-log.ts`); resolves once it is. The engine calls it before
   * every request attempt, so a page is stored before the next is bought. Absent where the staging's
   * own disk is the durable copy.
   */
  readonly persist?: () => Promise<void>;
  /** Drops everything earlier runs staged (the published output stays). */
  discard(): Promise<void>;
  /**
   * Looks at a page's records before they are staged, and may end the walk: `'stop'` when the walk
   * has everything new (a dataset's high-water mark). Throws to refuse the page (a frozen schema).
   */
  inspect(walk: WalkState, records: readonly unknown[]): 'more' | 'stop';
  /**
   * The records of a page to stage, of those kept: a dataset drops records outside `since`/`until`
   * and gives a record without a usable key its stable key, which may need the walk's params, and
   * every record its fetch time, by `servedAt` (the service's `Date` on the page) when it said.
   */
  admit?(walk: WalkState, records: unknown[], servedAt: number | undefined): unknown[];
  /**
   * Starts writing the output while pages are staged (CSV, Parquet), from the records of the first
   * `bytes` bytes of the spool, so that publishing only has to finish it.
   */
  follow?(spool: string, bytes: number): void;
  /**
   * The records of a page just staged; `exact` when the spool holds them as they are (no key
   * scrubbed out, no transform whose values JSON would change). Resolves when the output's writer has room.
   */
  staged?(records: readonly unknown[], exact: boolean): Promise<void>;
  /** What the destination does with what the engine stages: the engine asks this, never its class. */
  readonly capabilities: DestinationCapabilities;
  /**
   * A frozen schema's drift stopped the run (`capabilities.drift` is `'record'`): nothing of it is
   * published, and the drift is recorded for whoever looks next.
   */
  recordFrozenDrift?(drift: SchemaDriftError): Promise<void>;
  /** Writes the spool into the output: whole (`complete`), or what there is so far, or only `through`. */
  publish(state: ExportState, complete: boolean, through?: SpoolPrefix): Promise<Published>;
  /** Drops a writer `follow` started that publishing did not finish. */
  release?(): Promise<void>;
  /** Lets go of what the destination opened (a dataset's store), once the export is over, however it ended. */
  close?(): Promise<void>;
}
