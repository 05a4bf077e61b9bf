/**
 * `exportTo`'s options, checked in one place (a bad value is a `TypeError` naming it: a programming
 * error, raised before anything is touched) and given their defaults.
 */
import { PARQUET_LAYOUTS, type ParquetLayout } from '../../sinks/parquet.ts';
import { inspect } from 'node:util';
import type { RequestGate } from '../control.ts';
import type { ExportOptions, FileFormat, SchemaPolicy } from './types.ts';

export interface ExportSettings {
  out: string | undefined;
  dataset: string | undefined;
  format: FileFormat | undefined;
  schema: SchemaPolicy;
  shard: { index: number; count: number } | undefined;
  runId: string | undefined;
  writer: string | undefined;
  incremental: boolean;
  maxDepth: number | undefined;
  partition: ExportOptions['partition'];
  /** A dataset's bucketing of its part files. */
  bucketing: ExportOptions['bucketing'];
  /** `since` and `until` in Unix ms. */
  since: number | undefined;
  until: number | undefined;
  transform: ExportOptions['transform'];
  resume: boolean;
  restart: boolean;
  maxCredits: number | undefined;
  maxPages: number | undefined;
  limit: number | undefined;
  concurrency: number;
  pageConcurrency: number | undefined;
  overfetch: boolean;
  keepDuplicates: boolean;
  dedupe: string | undefined;
  escapeFormulae: boolean;
  /** A Parquet file's or a new Parquet dataset's layout (`'nested'` or `'flat'`). */
  parquetLayout: ParquetLayout | undefined;
  gates: readonly RequestGate[];
  locks: ExportOptions['locks'];
  signal: AbortSignal | undefined;
  progress: ExportOptions['progress'];
}

const FORMATS: readonly FileFormat[] = ['ndjson', 'csv', 'parquet'];
const PARTITIONS: readonly NonNullable<ExportOptions['partition']>[] = ['day', 'month', 'year', 'none'];

export function checkOptions(options: ExportOptions): ExportSettings {
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object');
  const {
    out,
    dataset,
    format,
    schema = 'evolve',
    shard,
    writer,
    runId,
    incremental = true,
    maxDepth,
    partition,
    layout,
    bucketing,
    since,
    until,
    transform,
    resume = false,
    restart = false,
    maxCredits,
    maxPages,
    limit,
    concurrency = 4,
    pageConcurrency,
    overfetch = false,
    keepDuplicates = false,
    dedupe,
    escapeFormulae = false,
    gates = [],
    locks,
    signal,
    progress = false,
  } = options;
  if ((out === undefined) === (dataset === undefined)) throw new TypeError('exportTo needs exactly one of out (a file) and dataset (a directory)');
  for (const [name, value] of [
    ['out', out],
    ['dataset', dataset],
    ['dedupe', dedupe],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value === '')) throw new TypeError(`${name} must be a non-empty string, got ${String(value)}`);
  }
  if (format !== undefined && !FORMATS.includes(format)) throw new TypeError(`format must be one of ${FORMATS.join(', ')}, got ${String(format)}`);
  if (schema !== 'evolve' && schema !== 'freeze') throw new TypeError(`schema must be 'evolve' or 'freeze', got ${String(schema)}`);
  if (shard !== undefined) {
    const valid = typeof shard === 'object' && Number.isSafeInteger(shard.count) && shard.count >= 1 && Number.isSafeInteger(shard.index) && shard.index >= 1 && shard.index <= shard.count;
    if (!valid) throw new TypeError(`shard must be { index, count } with 1 ≤ index ≤ count, got ${JSON.stringify(shard)}`);
  }
  if (writer !== undefined && (typeof writer !== 'string' || !/^[a-z0-9][a-z0-9-]{0,63}$/.test(writer))) {
    throw new TypeError(`writer must be 1–64 lowercase letters, digits and -, got ${String(writer)}`);
  }
  if (writer !== undefined && shard !== undefined) throw new TypeError('writer and shard contradict each other: a shard is its own writer');
  if (runId !== undefined && (typeof runId !== 'string' || runId === '' || runId.length > 200)) throw new TypeError(`runId must be a string of 1–200 characters, got ${String(runId)}`);
  if (!Array.isArray(gates) || gates.some((gate: unknown) => typeof (gate as RequestGate | null)?.acquire !== 'function')) {
    throw new TypeError('gates must be an array of RequestGate ({ acquire(signal) })');
  }
  if (locks !== undefined && (typeof locks?.output !== 'function' || typeof locks.publish !== 'function')) throw new TypeError('locks must be { output(output, path), publish(path, fn) }');
  if (out !== undefined && (shard !== undefined || writer !== undefined || runId !== undefined || options.schema !== undefined || options.incremental !== undefined || partition !== undefined || bucketing !== undefined)) {
    throw new TypeError('schema, shard, writer, runId, incremental, partition and bucketing apply to a dataset, not to a file');
  }
  const sinceMs = instantOf('since', since);
  const untilMs = instantOf('until', until);
  if (out !== undefined && (since !== undefined || until !== undefined)) throw new TypeError('since and until apply to a dataset, not to a file');
  if (sinceMs !== undefined && untilMs !== undefined && sinceMs >= untilMs) {
    throw new TypeError(`since must be before until, got since ${new Date(sinceMs).toISOString()} and until ${new Date(untilMs).toISOString()}`);
  }
  if (partition !== undefined && !PARTITIONS.includes(partition)) throw new TypeError(`partition must be one of ${PARTITIONS.join(', ')}, got ${String(partition)}`);
  if (dataset !== undefined && (dedupe !== undefined || escapeFormulae)) throw new TypeError('dedupe and escapeFormulae apply to a file: a dataset merges rows by the record key');
  const parquetLayout = layout;
  if (parquetLayout !== undefined && !PARQUET_LAYOUTS.includes(parquetLayout)) throw new TypeError(`layout must be one of ${PARQUET_LAYOUTS.join(', ')}, got ${String(parquetLayout)}`);
  if (parquetLayout !== undefined && format !== undefined && format !== 'parquet') throw new TypeError(`layout '${parquetLayout}' applies to Parquet, not to ${format}`);
  for (const [name, value] of [
    ['resume', resume],
    ['restart', restart],
    ['overfetch', overfetch],
    ['keepDuplicates', keepDuplicates],
    ['escapeFormulae', escapeFormulae],
    ['incremental', incremental],
  ] as const) {
    if (typeof value !== 'boolean') throw new TypeError(`${name} must be a boolean, got ${String(value)}`);
  }
  if (resume && restart) throw new TypeError('resume and restart contradict each other: pass one');
  for (const [name, value, least] of [
    ['maxCredits', maxCredits, 0],
    ['maxPages', maxPages, 0],
    ['limit', limit, 0],
    ['concurrency', concurrency, 1],
    ['pageConcurrency', pageConcurrency, 1],
    ['maxDepth', maxDepth, 1],
  ] as const) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < least)) throw new TypeError(`${name} must be an integer of at least ${least}, got ${String(value)}`);
  }
  if (transform !== undefined && typeof transform !== 'function') throw new TypeError('transform must be a function: (records) => AsyncIterable');
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('signal must be an AbortSignal');
  if (typeof progress !== 'boolean' && typeof progress !== 'function') throw new TypeError('progress must be true, false or a function');
  return {
    out,
    dataset,
    format,
    schema,
    shard,
    writer,
    runId,
    incremental,
    maxDepth,
    partition,
    bucketing,
    since: sinceMs,
    until: untilMs,
    transform,
    resume,
    restart,
    maxCredits,
    maxPages,
    limit,
    concurrency,
    pageConcurrency,
    overfetch,
    keepDuplicates,
    dedupe,
    escapeFormulae,
    parquetLayout,
    gates,
    locks,
    signal,
    progress,
  };
}

/** A bound as Unix ms: an ISO 8601 date (`2025-10-01`, read as UTC) or time, or a valid `Date`. */
function instantOf(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' && /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ? Date.parse(value) : NaN;
  if (!Number.isFinite(ms)) throw new TypeError(`${name} must be an ISO 8601 date (YYYY-MM-DD, or a time) or a valid Date, got ${inspect(value)}`);
  return ms;
}
