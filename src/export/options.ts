/**
 * `exportTo`'s options, checked in one place and given their defaults: the one set of option rules,
 * which the CLI applies to its flags too (docs/architecture.md "Where option rules live"). A bad
 * value, or options that contradict each other, is an `OptionError` naming the options, raised
 * before anything is touched or bought.
 */
import { PARQUET_LAYOUTS, type ParquetLayout } from '../../sinks/parquet.ts';
import { inspect } from 'node:util';
import type { RequestGate } from '../control.ts';
import { option, optionError } from './option-message.ts';
import { refuseUnknownOptions, type KnownOptions } from '../known-options.ts';
import type { OperationSpec } from '../operations/spec.ts';
import { isKeyPath } from '../operators/record-key.ts';
import { formatOf } from './file.ts';
import { INSTANT_GRAMMAR, instantOf } from './instant.ts';
import { isPartitionBy, PARTITION_BYS } from './partition-by.ts';
import type { ExportOptions, FileFormat, SchemaPolicy } from './types.ts';

export interface ExportSettings {
  out: string | undefined;
  dataset: string | undefined;
  /** A store dataset's local working folder (`ExportOptions.work`). */
  work: string | undefined;
  format: FileFormat | undefined;
  schema: SchemaPolicy;
  shard: { index: number; count: number } | undefined;
  runId: string | undefined;
  writer: string | undefined;
  /** A finished writer that finds the publish lock held leaves its commit to the holder. */
  handOff: boolean;
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

/** Options that shape a dataset, and mean nothing to a file. */
const DATASET_ONLY = ['schema', 'shard', 'writer', 'runId', 'handOff', 'incremental', 'partition', 'bucketing', 'since', 'until', 'work'] as const;
const BOOLEANS = ['resume', 'restart', 'overfetch', 'keepDuplicates', 'escapeFormulae', 'incremental', 'handOff'] as const;
/** Whole-number options and the least each may be. */
const COUNTS = [
  ['maxCredits', 0],
  ['maxPages', 0],
  ['limit', 0],
  ['concurrency', 1],
  ['pageConcurrency', 1],
  ['maxDepth', 1],
] as const;

/** Every option of `ExportOptions`: `exportTo` refuses any other name. */
export const EXPORT_OPTIONS = {
  out: true,
  dataset: true,
  work: true,
  format: true,
  schema: true,
  shard: true,
  writer: true,
  runId: true,
  handOff: true,
  incremental: true,
  partition: true,
  layout: true,
  bucketing: true,
  since: true,
  until: true,
  maxDepth: true,
  transform: true,
  resume: true,
  restart: true,
  maxCredits: true,
  maxPages: true,
  limit: true,
  concurrency: true,
  pageConcurrency: true,
  overfetch: true,
  keepDuplicates: true,
  dedupe: true,
  escapeFormulae: true,
  gates: true,
  locks: true,
  signal: true,
  progress: true,
} as const satisfies KnownOptions<ExportOptions>;

export function checkOptions(options: ExportOptions): ExportSettings {
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object');
  refuseUnknownOptions(options, EXPORT_OPTIONS, 'exportTo');
  checkOutput(options);
  checkValues(options);
  checkHooks(options);
  checkCombinations(options);
  return settingsOf(options);
}

/**
 * The rules that need the operation the export walks (`exportTo` knows it from its source, the CLI
 * from its words): a time bound needs records that carry a time.
 */
export function checkOptionsFor(op: OperationSpec, options: ExportOptions): void {
  for (const name of ['since', 'until'] as const) {
    if (options[name] !== undefined && op.time === null) throw optionError`${option(name)} bounds records by their own time, and ${op.id} records carry none`;
  }
}

/** Exactly one of a file and a dataset, each named by a non-empty string. */
function checkOutput({ out, dataset, dedupe, format, work }: ExportOptions): void {
  if ((out === undefined) === (dataset === undefined)) throw optionError`an export needs ${option('out')} (a file) or ${option('dataset')} (a directory), exactly one of them`;
  for (const [name, value] of [
    ['out', out],
    ['dataset', dataset],
    ['dedupe', dedupe],
    ['work', work],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value === '')) throw optionError`${option(name)} must be a non-empty string, got ${shown(value)}`;
  }
  if (format !== undefined && !FORMATS.includes(format)) throw optionError`${option('format')} must be one of ${FORMATS.join(', ')}, got ${shown(format)}`;
}

/** Each option's value on its own. */
function checkValues(options: ExportOptions): void {
  const { schema, shard, writer, runId, partition, layout, dedupe } = options;
  if (schema !== undefined && schema !== 'evolve' && schema !== 'freeze') throw optionError`${option('schema')} must be evolve or freeze, got ${shown(schema)}`;
  if (shard !== undefined) {
    const valid = typeof shard === 'object' && Number.isSafeInteger(shard.count) && shard.count >= 1 && Number.isSafeInteger(shard.index) && shard.index >= 1 && shard.index <= shard.count;
    if (!valid) throw optionError`${option('shard')} must be share K of N with 1 ≤ K ≤ N, got ${typeof shard === 'object' ? `${shard.index}/${shard.count}` : shown(shard)}`;
  }
  if (writer !== undefined && (typeof writer !== 'string' || !/^[a-z0-9][a-z0-9-]{0,63}$/.test(writer))) {
    throw optionError`${option('writer')} must be 1–64 lowercase letters, digits and -, got ${shown(writer)}`;
  }
  if (runId !== undefined && (typeof runId !== 'string' || runId === '' || runId.length > 200)) throw optionError`${option('runId')} must be a string of 1–200 characters, got ${shown(runId)}`;
  checkShape({ partition, layout });
  if (dedupe !== undefined && !isKeyPath(dedupe)) throw optionError`${option('dedupe')} must be a dotted path such as author.id, got ${shown(dedupe)}`;
  for (const name of BOOLEANS) {
    if (options[name] !== undefined && typeof options[name] !== 'boolean') throw optionError`${option(name)} must be a boolean, got ${shown(options[name])}`;
  }
  for (const [name, least] of COUNTS) {
    const value = options[name];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value)) throw optionError`${option(name)} must be a whole number, got ${shown(value)}`;
    if (value < least) throw optionError`${option(name)} must be at least ${least}, got ${value}`;
  }
  checkBounds(options);
}

/** A dataset's partitioning and Parquet layout, as an export and a compaction (`compact.ts`) are given them. */
export function checkShape({ partition, layout }: Pick<ExportOptions, 'partition' | 'layout'>): void {
  if (partition !== undefined && !isPartitionBy(partition)) throw optionError`${option('partition')} must be one of ${PARTITION_BYS.join(', ')}, got ${shown(partition)}`;
  if (layout !== undefined && !PARQUET_LAYOUTS.includes(layout)) throw optionError`${option('layout')} must be ${PARQUET_LAYOUTS.join(' or ')}, got ${shown(layout)}`;
}

/** `since` and `until` read by the date grammar (`instant.ts`), and in order. */
function checkBounds({ since, until }: ExportOptions): void {
  for (const [name, value] of [
    ['since', since],
    ['until', until],
  ] as const) {
    if (value !== undefined && instantOf(value) === undefined) throw optionError`${option(name)} must be ${INSTANT_GRAMMAR}, got ${shown(value)}`;
  }
  if (since !== undefined && until !== undefined && instantOf(since)! >= instantOf(until)!) {
    throw optionError`${option('since')} must be before ${option('until')}, got ${shownInstant(since)} and ${shownInstant(until)}`;
  }
}

/** The caller's functions and objects. */
function checkHooks({ gates, locks, transform, signal, progress }: ExportOptions): void {
  if (gates !== undefined && (!Array.isArray(gates) || gates.some((gate: unknown) => typeof (gate as RequestGate | null)?.acquire !== 'function'))) {
    throw optionError`${option('gates')} must be an array of RequestGate ({ acquire(signal) })`;
  }
  if (locks !== undefined && (typeof locks?.output !== 'function' || typeof locks.publish !== 'function')) throw optionError`${option('locks')} must be { output(output, path), publish(path, fn) }`;
  if (transform !== undefined && typeof transform !== 'function') throw optionError`${option('transform')} must be a function: (records) => AsyncIterable`;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw optionError`${option('signal')} must be an AbortSignal`;
  if (progress !== undefined && typeof progress !== 'boolean' && typeof progress !== 'function') throw optionError`${option('progress')} must be true, false or a function`;
}

/** Options that contradict each other, or the output they were given with. */
function checkCombinations(options: ExportOptions): void {
  const { out, dataset, format, dedupe, keepDuplicates, resume, restart, writer, shard, escapeFormulae, layout } = options;
  if (resume === true && restart === true) throw optionError`${option('resume')} and ${option('restart')} contradict each other: pass one`;
  if (dedupe !== undefined && keepDuplicates === true) throw optionError`${option('dedupe')} and ${option('keepDuplicates')} contradict each other: pass one`;
  if (writer !== undefined && shard !== undefined) throw optionError`${option('writer')} and ${option('shard')} contradict each other: a shard is its own writer`;
  if (out !== undefined) {
    for (const name of DATASET_ONLY) if (options[name] !== undefined) throw optionError`${option(name)} goes only with ${option('dataset')}`;
  }
  if (dataset !== undefined) {
    if (escapeFormulae === true) throw optionError`${option('escapeFormulae')} does not go with ${option('dataset')} (dataset parts are Parquet)`;
    if (dedupe !== undefined) throw optionError`${option('dedupe')} does not go with ${option('dataset')}: a dataset merges rows by the record key`;
  }
  const fileFormat = out === undefined ? undefined : formatOf(out, format);
  if (escapeFormulae === true && fileFormat !== 'csv') throw optionError`${option('escapeFormulae')} applies to a .csv output only`;
  if (layout !== undefined && fileFormat !== undefined && fileFormat !== 'parquet') throw optionError`${option('layout')} applies to a .parquet output or a dataset only (CSV is always flat)`;
  if (layout !== undefined && dataset !== undefined && format !== undefined && format !== 'parquet') throw optionError`${option('layout')} '${layout}' applies to Parquet, not to ${format}`;
}

/** The checked options with their defaults. */
function settingsOf(options: ExportOptions): ExportSettings {
  const { schema = 'evolve', incremental = true, resume = false, restart = false, concurrency = 4, overfetch = false, keepDuplicates = false } = options;
  const { escapeFormulae = false, gates = [], progress = false, since, until } = options;
  return {
    out: options.out,
    dataset: options.dataset,
    work: options.work,
    format: options.format,
    schema,
    shard: options.shard,
    writer: options.writer,
    runId: options.runId,
    handOff: options.handOff ?? false,
    incremental,
    maxDepth: options.maxDepth,
    partition: options.partition,
    bucketing: options.bucketing,
    since: since === undefined ? undefined : instantOf(since),
    until: until === undefined ? undefined : instantOf(until),
    transform: options.transform,
    resume,
    restart,
    maxCredits: options.maxCredits,
    maxPages: options.maxPages,
    limit: options.limit,
    concurrency,
    pageConcurrency: options.pageConcurrency,
    overfetch,
    keepDuplicates,
    dedupe: options.dedupe,
    escapeFormulae,
    parquetLayout: options.layout,
    gates,
    locks: options.locks,
    signal: options.signal,
    progress,
  };
}

/** A value as a message shows it: a string quoted, anything else as `inspect` shows it. */
function shown(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : inspect(value);
}

function shownInstant(value: string | Date): string {
  return value instanceof Date ? value.toISOString() : value;
}
