/**
 * The public shapes of the export engine: what a caller asks (`ExportOptions`), what it is told while
 * the export runs (`ExportProgress`) and once it stops (`ExportSummary`). Shared by every module of
 * the engine and by the CLI, so they live apart from the code.
 */
import type { RequestGate } from '../control.ts';
import type { SchemaDrift } from '../errors.ts';
import type { AnyIterable } from '../operators/types.ts';
import type { ParquetLayout } from '../../sinks/parquet.ts';
import type { PartitionBy } from './partition-by.ts';

/** `'evolve'`: new fields become columns. `'freeze'`: the first drifting page stops the run, publishing nothing of it. */
export type SchemaPolicy = 'evolve' | 'freeze';

/** An output's format: a file's (by default its extension says it), or a dataset's parts. */
export type FileFormat = 'ndjson' | 'csv' | 'parquet';

/** What ended a run before every walk was done. */
export type StopReason = 'maxCredits' | 'maxPages' | 'limit' | 'signal' | 'balance';

/**
 * Options of `exportTo` (and, without `dataset`, of `toDataset`): the output, resume or restart,
 * caps, concurrency, deduplication, a transform, progress. docs/reference.md lists them; each field
 * says its rule.
 */
export interface ExportOptions {
  /** A file: `.ndjson`/`.jsonl`, `.csv` or `.parquet` (or say `format`). Exactly one of `out` and `dataset`. */
  out?: string;
  /** A growing dataset's directory, or its prefix in a bucket, `s3://bucket/prefix` (docs/datasets.md). Exactly one of `out` and `dataset`. */
  dataset?: string;
  /**
   * Datasets on a store (`s3://…`): the local working folder the writer stages in, its staging log
   * on the store being the durable copy (docs/storage.md). Default: `socialstream-work` under the
   * system's temporary folder. Each machine has its own; a local dataset stages in its own folder.
   */
  work?: string;
  /** A file's format when its name does not say it; a dataset's part format (default `'parquet'`; a dataset keeps the format of its first run). */
  format?: FileFormat;
  /** Datasets: `'evolve'` (default) or `'freeze'`. */
  schema?: SchemaPolicy;
  /** Datasets: this writer's share of the walks (`--shard K/N`): it walks the parameter sets whose hash picks share `index`, and writes only its own parts. */
  shard?: { index: number; count: number };
  /**
   * Datasets: the writer's name, instead of `all` or the shard's (letters, digits and `-`). A queue
   * worker writes each walk as writer `walk-<walkName>`, so a walk another worker takes over continues
   * from its own staging (docs/queue.md).
   */
  writer?: string;
  /**
   * Datasets: the run of a scheduler this export is (any text up to 200 characters, e.g. a queue's
   * `<export>:<run>`). Once the writer has published this run complete, the same run again with
   * `resume` buys nothing and returns at once: a job a scheduler hands out twice (its worker lost,
   * its lease run out) is not walked again. The record of it is written in the same atomic step as
   * the publish. Without it, every run of a dataset is a new, incremental one.
   */
  runId?: string;
  /**
   * Datasets: a run that finishes while another writer publishes leaves its pages to that publish
   * (durable on disk, published by it or the next) and returns at once, without `dataset` in its
   * summary; the next run of the same writer first sees them published. A queue worker's walks do
   * this (docs/datasets.md "Group commit"). Default false: the run waits for its pages to be published.
   */
  handOff?: boolean;
  /** Datasets: stop a newest-first walk at the first page wholly held (under the high-water mark, or by key). Default true. */
  incremental?: boolean;
  /**
   * Datasets: how finely part files split by their records' own time, under the Hive key `_date`:
   * `'day'`, `'month'` (the default), `'year'` or `'none'`. A dataset keeps the partitioning of its first run.
   */
  partition?: PartitionBy;
  /**
   * A Parquet file (`out`) or Parquet dataset: `'nested'` (STRUCT and LIST, the default) or `'flat'`
   * (dotted columns), docs/guide/first-export.md. A dataset records the layout of its first run and keeps it; a run
   * asking for another is refused (`DATASET_LAYOUT`); `compactDataset(dir, { layout })` converts one.
   */
  layout?: ParquetLayout;
  /**
   * Datasets: how a new dataset lays each partition's rows into part files (docs/datasets.md "Part files"):
   * `buckets` parts by record key to start with (default 1), a part split in two once written larger
   * than `splitBytes` (default 32 MiB). A dataset keeps the bucketing of its first run.
   */
  bucketing?: { buckets?: number; splitBytes?: number };
  /**
   * Datasets: keep only records whose own time is at or after this (an ISO 8601 date or time, read
   * as UTC unless it names an offset, or a `Date`): a newest-first walk stops at its first page wholly older, buying no page past it. Records
   * whose time does not read are kept. E.g. `since: '2025-10-01'` starts a dataset of a long feed from October.
   */
  since?: string | Date;
  /** Datasets: keep only records whose own time is before this (ISO 8601 or a `Date`); the walk goes on past newer ones. */
  until?: string | Date;
  /** Deepest dotted path nested objects flatten into in CSV, Parquet and dataset parts. Default 3. */
  maxDepth?: number;
  /**
   * Per-record shaping, applied to each staged page's records before they are written (so a resume
   * stays exact): e.g. `(records) => pipe(records, filter(p => p.score > 10), map(toRow))`. Use
   * `limit` rather than `take` to bound the export.
   */
  transform?: (records: AsyncIterable<unknown>) => AnyIterable<unknown>;
  /**
   * Continue what this output holds (nothing held: start fresh, and say so; a complete file this very
   * export made: buy nothing, `alreadyComplete`). A file another export made, or one that records no
   * export, is refused before any request (`OTHER_EXPORT`). Default false: held state is refused (`HELD_STATE`).
   */
  resume?: boolean;
  /** Discard whatever this output holds from earlier runs and start fresh. Default false. */
  restart?: boolean;
  /** Credits this run may spend, every attempt that may be charged counted before it is sent; exact across crashes. */
  maxCredits?: number;
  /** Pages this run may buy, across every walk. */
  maxPages?: number;
  /** Records this run may write, across every walk; exact across crashes. */
  limit?: number;
  /** Walks in flight at once. Default 4. */
  concurrency?: number;
  /** Pages of one walk in flight at once where its rule allows. Default: the stream's (16). */
  pageConcurrency?: number;
  /** Web search: buy pages ahead before the end is known, paying for empty pages past it. Default false. */
  overfetch?: boolean;
  /** Keep every record, even one whose key was already written by this export. Default false. */
  keepDuplicates?: boolean;
  /** The field (a dotted path) that tells duplicates apart, instead of the operation's own key. */
  dedupe?: string;
  /** CSV: prefix `'` to text a spreadsheet would run as a formula. Default false. */
  escapeFormulae?: boolean;
  /**
   * More gates every request attempt of every walk passes before it is sent, after the engine's own
   * and before its credit ledger: e.g. a budget shared by several machines. A gate that refuses ends
   * the walk cleanly, its checkpoint still at that page (like a cap).
   */
  gates?: readonly RequestGate[];
  /**
   * Locks of the caller's instead of pid files, which mean nothing across machines: a queue worker's
   * are Redis leases (`socialstream/queue`). Default: pid files.
   */
  locks?: ExportLocks;
  /** Aborting stops the export cleanly: it resolves with `stoppedBy: 'signal'`, the output valid and resumable. */
  signal?: AbortSignal;
  /** `true`: a live view fit for where it runs; a function: called with every update. */
  progress?: boolean | ((progress: ExportProgress) => void);
}

/** How an export holds its output against other runs (`ExportOptions.locks`). */
export interface ExportLocks {
  /** Takes the output's one writer lock (`path`: where the pid file would be), or throws `LockedError` naming the holder. */
  output(
    output: string,
    path: string,
  ): Promise<{
    /** Lets the output's lock go. */
    release(): Promise<void>;
  }>;
  /**
   * Runs `fn` holding the lock a dataset's writers publish under (`path`: the lock folder's), waiting
   * for it while another holds it. A lock that can be lost while held (a lease) gives `fn` its fence.
   */
  publish<T>(path: string, fn: (fence?: PublishFence) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` holding that lock if nobody holds it, else resolves undefined at once: a writer waiting
   * to publish then also sees when another's publish took its pages (group commit). Without it, `publish`.
   */
  tryPublish?<T>(path: string, fn: (fence?: PublishFence) => Promise<T>): Promise<{ value: T } | undefined>;
  /**
   * Takes at once every lock of `paths` that nobody holds (a publish pass's partitions: one round
   * trip for them all, not one each), holding them until released. Without it, they are tried one by one.
   */
  tryHold?(paths: readonly string[]): Promise<HeldLocks>;
}

/** Locks taken together (`ExportLocks.tryHold`): which of those asked for, one fence for them all, one release. */
export interface HeldLocks {
  /** Per path asked for, whether it was taken (the others are held by someone else). */
  taken: boolean[];
  /** Whether every lock taken is still this holder's. */
  fence: PublishFence;
  /** Lets every lock taken go. */
  release(): Promise<void>;
}

/**
 * Whether the publish lock is still this holder's. A lease runs out when its holder stalls past it
 * (a long synchronous stretch blocks its renewal), and another writer may then take the lock: a
 * publish asks before its journal, after which it changes the dataset, and stops if the lock is gone.
 */
export type PublishFence = () => Promise<boolean>;

/** A snapshot of a running export, as `progress` receives it (the notebook's view draws it). */
export interface ExportProgress {
  pages: number;
  records: number;
  credits: number;
  walks: { done: number; total: number };
  elapsedMs: number;
  finished: boolean;
  /** What ended it early (`maxCredits`, `signal`, an error's code…); absent when it ran to the end or still runs. */
  stoppedBy?: string;
}

/** What a dataset publish changed. */
export interface DatasetChanges {
  /** Rows whose key the dataset did not hold before. */
  added: number;
  /** Rows that replaced an older version of their record. */
  updated: number;
  /** Partitions whose part file was rewritten. */
  partitions: string[];
  drift: SchemaDrift;
  /** The writer: `all`, `shard-K-of-N`, or the one named by `writer` (a queue worker's `walk-<walkName>`). */
  writer: string;
  /** Walks that stopped at their high-water mark (newest-first walks of a later run). */
  stoppedAtMark: number;
  /** Records without a usable key that the operation's `stableKey` could not key either: not written. */
  setAside: number;
  /** The parts of a narrower type this writer rewrote after its publish, when a column widened (`src/dataset/widen.ts`). */
  widening?: WideningRewrite;
}

/** The widening rewrite a writer did after its publish: the partitions it rewrote, and how long it took. */
export interface WideningRewrite {
  /** Partitions whose parts were rewritten to the widened types. */
  partitions: number;
  /** Seconds from the start of the rewrite to its end, the commits published between partitions included. */
  seconds: number;
}

/** How an export ended; one type for both destinations. */
export interface ExportSummary {
  /** Every walk is done and the output holds all of it. */
  complete: boolean;
  /** What ended the run before that. */
  stoppedBy?: StopReason;
  /** With `stoppedBy: 'balance'`: what the service said the account had and the next request needed. */
  balance?: { available: number; required: number };
  /** Records written this run (after dedupe, `limit` and `transform`). */
  records: number;
  /** Records the walks delivered this run. */
  received: number;
  /** Records of this run whose key this export had already written: dropped from a file, merged over in a dataset (the newest kept). */
  duplicates: number;
  /** Strings with invalid UTF-16 that were repaired in the output. */
  repaired: number;
  /** Pages read this run. */
  pages: number;
  /** Credits this run may have been charged (every attempt counted, free ones given back). */
  credits: number;
  /** The same over every run of this export. */
  exportCredits: number;
  /** Credits of this run spent on pages bought ahead that no walk will read. */
  unread: number;
  walks: { done: number; total: number };
  /** Walks a resume would continue. */
  remaining: number;
  /** Parameter sets the service rejected (400, 404): the others were exported; a resume tries them again. */
  rejected: { params: Record<string, string>; message: string }[];
  /** Continuations a walk met that its rule does not follow: its records may be short. */
  ignoredContinuations: string[];
  /** This run continued state an earlier run left. */
  resumed: boolean;
  /**
   * Present (true) when a resume found the output already complete, made by this very export (a file),
   * or published complete by this `runId` (a dataset): it bought and wrote nothing.
   */
  alreadyComplete?: boolean;
  /** The output file or dataset directory. */
  output: string;
  /**
   * Records the output file holds after this run, over every run of the export (`records` counts
   * this run's only). Files only; absent when this run published nothing (the file is as it was).
   */
  totalRecords?: number;
  /** Bytes of the output file (files only). */
  bytes?: number;
  elapsedMs: number;
  /** What the publish changed (datasets only). */
  dataset?: DatasetChanges;
}
