/**
 * A dataset's state files checked as they are opened, so that state which is valid JSON but wrong (a
 * column listed twice, a partitioning or kind this version does not know, `null` where a list
 * belongs) is refused with `STATE_DAMAGED`, naming the file and what to do, before a run buys a page
 * or writes a part, and before `dataset info` counts anything (docs/datasets.md).
 *
 * The shapes are data: each file is a `shape` of rules, and the values a rule accepts come from where
 * the dataset code defines them (`COLUMN_KINDS`, `PARTITION_BYS`, `DATASET_FORMATS`), so a kind or a
 * partitioning added there is known here too. A field a rule does not name is let through: a newer
 * version may add one. Part files are checked as far as a cheap read goes: a Parquet footer, the last
 * line of NDJSON and CSV.
 */
import { mapAtOnce } from '../at-once.ts';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { StateDamagedError } from '../errors.ts';
import { DATASET_FORMATS, PART_EXTENSION, type DatasetFormat } from './parts.ts';
import type { SchemaColumn } from './schema.ts';
import { PARQUET_LAYOUTS, type ParquetLayout } from '../../sinks/parquet.ts';
import { COLUMN_KINDS } from '../column-kinds.ts';
import { MAX_BUCKETS } from './buckets.ts';
import { walkName } from '../operations/walk-name.ts';
import { LEGACY_PARTITIONING, PARTITION_BYS, PARTITION_COLUMN, passFolders, type DatasetPaths } from './store.ts';
import { objectPlace, readObject } from './objects.ts';
import type { Storage } from './storage/types.ts';
import { RECORDED_LOCKS } from './locks.ts';
import { readPartFooter } from './part-footer.ts';

/** What is wrong with a value, and when a fix of its own is known, that fix. */
interface Problem {
  what: string;
  remedy?: string;
}

/** One rule of a shape: what it expects (for messages) and the problem with a value at `at`, if any. */
interface Rule<T> {
  readonly expected: string;
  readonly optional?: true;
  problem(value: unknown, at: string): Problem | undefined;
  /** Never set: carries the type a value that passes has. */
  readonly type?: T;
}

type Infer<R> = R extends Rule<infer T> ? T : never;
type Fields = Record<string, Rule<unknown>>;
type Required_<F extends Fields> = { [K in keyof F as F[K] extends { optional: true } ? never : K]: Infer<F[K]> };
type Optional_<F extends Fields> = { [K in keyof F as F[K] extends { optional: true } ? K : never]?: Infer<F[K]> };
type ShapeOf<F extends Fields> = Required_<F> & Optional_<F>;

function shown(value: unknown): string {
  if (value === undefined) return 'missing';
  const json = JSON.stringify(value);
  return json.length > 40 ? `${json.slice(0, 37)}…` : json;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function rule<T>(expected: string, holds: (value: unknown) => boolean, remedy?: string): Rule<T> {
  return {
    expected,
    problem: (value, at) => (holds(value) ? undefined : { what: `${at} is ${shown(value)}, not ${expected}`, ...(remedy === undefined ? {} : { remedy }) }),
  };
}

const text = rule<string>('text', (value) => typeof value === 'string' && value !== '');
/** Text that may be empty: a parameter's value, a column's name. */
const anyText = rule<string>('text', (value) => typeof value === 'string');
const number = rule<number>('a number', (value) => typeof value === 'number' && Number.isFinite(value));
const boolean = rule<boolean>('true or false', (value) => typeof value === 'boolean');
const count = rule<number>('a whole number above 0', (value) => Number.isSafeInteger(value) && (value as number) > 0);

function exactly<const T>(expected: T): Rule<T> {
  return rule(JSON.stringify(expected), (value) => value === expected);
}

/** One of `values`, which come from the definition the dataset code writes by. */
function oneOf<T extends string>(values: readonly T[], remedy?: string): Rule<T> {
  return rule(`one of ${values.join(', ')}`, (value) => (values as readonly unknown[]).includes(value), remedy);
}

function optional<T>(inner: Rule<T>): Rule<T> & { optional: true } {
  return { ...inner, optional: true, problem: (value, at) => (value === undefined ? undefined : inner.problem(value, at)) };
}

function nullable<T>(inner: Rule<T>): Rule<T | null> {
  return { expected: `${inner.expected} or null`, problem: (value, at) => (value === null ? undefined : inner.problem(value, at)) };
}

function shape<F extends Fields>(fields: F): Rule<ShapeOf<F>> {
  const expected = `an object { ${Object.entries(fields).map(([name, field]) => `${name}${field.optional ? '?' : ''}: ${field.expected}`).join('; ')} }`;
  return {
    expected,
    problem(value, at) {
      // A whole file is named by its path; its fields are spelled out only for a part of it.
      if (!isObject(value)) return { what: `${at} is ${shown(value)}, not ${at === '' ? 'an object' : expected}` };
      for (const [name, field] of Object.entries(fields)) {
        const problem = field.problem(value[name], at === '' ? name : `${at}.${name}`);
        if (problem !== undefined) return problem;
      }
      return undefined;
    },
  };
}

/** An object whose every value follows `each` (walks by name, a walk's parameters). */
function recordOf<T>(each: Rule<T>): Rule<Record<string, T>> {
  return {
    expected: 'an object',
    problem(value, at) {
      if (!isObject(value)) return { what: `${at} is ${shown(value)}, not an object` };
      for (const [name, item] of Object.entries(value)) {
        const problem = each.problem(item, `${at}[${JSON.stringify(name)}]`);
        if (problem !== undefined) return problem;
      }
      return undefined;
    },
  };
}

/** A list whose items follow `each`; with `unique`, no two items have the same value of that field. */
function listOf<T>(each: Rule<T>, unique?: { field: keyof T & string; noun: string; remedy: string }): Rule<T[]> {
  return {
    expected: 'a list',
    problem(value, at) {
      if (!Array.isArray(value)) return { what: `${at} is ${shown(value)}, not a list` };
      const first = new Map<unknown, number>();
      for (const [index, item] of value.entries()) {
        const problem = each.problem(item, `${at}[${index}]`);
        if (problem !== undefined) return problem;
        if (unique === undefined) continue;
        const key = (item as Record<string, unknown>)[unique.field];
        const seen = first.get(key);
        if (seen !== undefined) {
          return { what: `${at} lists the ${unique.noun} ${JSON.stringify(key)} twice (${at}[${seen}] and ${at}[${index}])`, remedy: unique.remedy };
        }
        first.set(key, index);
      }
      return undefined;
    },
  };
}

/** The Hive keys a dataset's folders use: `_date`, or `date` in datasets of socialstream 0.1. */
const PARTITION_COLUMNS = [PARTITION_COLUMN, LEGACY_PARTITIONING.column];

const NEWER_REMEDY = 'a newer socialstream may have written it: open the dataset with that version, or restore the file from a backup';
/** A leaf's kind (`COLUMN_KINDS`), or a nested dataset's STRUCT, LIST and MAP (`src/dataset/schema-nested.ts`). */
const COLUMN_KIND = oneOf([...COLUMN_KINDS, 'struct', 'list', 'map', 'untyped'], NEWER_REMEDY);
/** Deeper than any `maxDepth` a run would type: a file nested so deep is damage, and checking it would exhaust the stack. */
const MAX_NESTING = 1_000;

/**
 * A column of the schema: its name and its shape: a leaf kind, a STRUCT with its (named, distinct, at
 * least one) fields, a LIST with its element's shape, or a MAP with its values' shape.
 */
function column(depth: number): Rule<SchemaColumn> {
  return {
    expected: 'an object { name: text; kind: text }',
    problem(value, at) {
      if (!isObject(value)) return { what: `${at} is ${shown(value)}, not an object { name; kind }` };
      // A record's field may be named "" (`{"": 1}`), and its column so.
      return anyText.problem(value.name, `${at}.name`) ?? shapeProblem(value, at, depth);
    },
  };
}

function shapeProblem(value: unknown, at: string, depth: number): Problem | undefined {
  if (!isObject(value)) return { what: `${at} is ${shown(value)}, not an object { kind }` };
  // Named by the column it is in: the path down to it would be thousands of `.element`s long.
  if (depth > MAX_NESTING) return { what: `${at.split('.')[0]} nests deeper than ${MAX_NESTING} levels` };
  const problem = COLUMN_KIND.problem(value.kind, `${at}.kind`);
  if (problem !== undefined) return problem;
  if (value.kind === 'list') return shapeProblem(value.element, `${at}.element`, depth + 1);
  if (value.kind === 'map') return shapeProblem(value.value, `${at}.value`, depth + 1);
  if (value.kind !== 'struct') return undefined;
  if (Array.isArray(value.fields) && value.fields.length === 0) return { what: `${at}.fields is [], and a struct needs a field` };
  return columnList(depth + 1).problem(value.fields, `${at}.fields`);
}

function columnList(depth: number): Rule<SchemaColumn[]> {
  // Two entries of a column put its values in the overflow column instead (docs/datasets.md: 112 of 1,000 ids went there).
  return listOf(column(depth), { field: 'name', noun: 'column', remedy: 'remove the repeated entry (the first is the one the part files were written with)' });
}

/**
 * The schema file's fields that must agree: a Parquet layout only for Parquet parts, and STRUCT,
 * LIST and MAP columns only in a nested dataset (a flat one's parts have dotted leaf columns, and
 * MAPs of leaves in Parquet).
 */
function agreeing<T extends { format: DatasetFormat; columns: SchemaColumn[]; parquetLayout?: ParquetLayout }>(inner: Rule<T>): Rule<T> {
  return {
    ...inner,
    problem(value, at) {
      const problem = inner.problem(value, at);
      if (problem !== undefined) return problem;
      const { format, columns, parquetLayout } = value as T;
      const prefix = at === '' ? '' : `${at}.`;
      if (parquetLayout !== undefined && format !== 'parquet') {
        return { what: `${prefix}parquetLayout is ${shown(parquetLayout)}, and the parts are ${format}, which has none`, remedy: 'remove parquetLayout' };
      }
      // A flat Parquet dataset's MAP of leaves is an object keyed by data (`foldKeyedColumns`).
      const flatMap = (each: SchemaColumn) => each.kind === 'map' && format === 'parquet' && each.value.kind !== 'struct' && each.value.kind !== 'list' && each.value.kind !== 'map';
      const nested = columns.findIndex((each) => each.kind === 'struct' || each.kind === 'list' || (each.kind === 'map' && !flatMap(each)));
      if (parquetLayout !== 'nested' && nested !== -1) {
        return {
          what: `${prefix}columns[${nested}] is a ${columns[nested].kind}, and the parts are ${format === 'parquet' ? 'flat (parquetLayout is not "nested")' : format}`,
          remedy: 'restore the file from a backup (a nested dataset records parquetLayout "nested")',
        };
      }
      return undefined;
    },
  };
}

/** `_dataset/<op>/schema.json` (`dataset.ts` writes it on every publish). */
const SCHEMA_FILE = agreeing(shape({
  version: exactly(1),
  operation: text,
  format: oneOf(DATASET_FORMATS),
  columns: columnList(0),
  // Absent in datasets recorded before layouts, whose parts are flat (`nesting.ts`).
  parquetLayout: optional(oneOf(PARQUET_LAYOUTS, NEWER_REMEDY)),
  partitioning: optional(
    shape({
      by: oneOf(PARTITION_BYS, 'set it to the grain of the partition folders (_date=2025-11-21 is day, _date=2025-11 month, _date=2025 year, _date=all none)'),
      column: oneOf(PARTITION_COLUMNS, 'set it to the name before "=" in the partition folders'),
    }),
  ),
  // Bucket datasets (`buckets.ts`): fixed when the dataset is created; absent before buckets, which migrate on open.
  layout: optional(
    shape({
      buckets: rule<number>(`a whole number from 1 to ${MAX_BUCKETS}`, (value) => Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= MAX_BUCKETS),
      splitBytes: rule<number>('a number of bytes from 1', (value) => typeof value === 'number' && value >= 1 && Number.isFinite(value)),
    }),
  ),
  locks: optional(oneOf(RECORDED_LOCKS)),
  shards: optional(count),
}));

/** What a writer's staging held in all when it published a run complete (`marks.ts` `RunTotals`). */
const RUN_TOTALS = shape({ records: number, pages: number });

/** `_dataset/<op>/state-<writer>.json` (`marks.ts`): the run it last completed, and before walks kept their own files, their marks. */
const MARKS_FILE = shape({
  version: exactly(1),
  operation: text,
  walks: recordOf(shape({ params: recordOf(anyText), mark: number, markTime: text })),
  completedRun: optional(text),
  completedTotals: optional(RUN_TOTALS),
});

/** A key a walk met near its mark, and that record's believable time (`marks.ts` `NearKey`). */
const NEAR_KEY = rule<[string, number | null]>(
  'a pair of a key and a time or null',
  (value) => Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && (value[1] === null || (typeof value[1] === 'number' && Number.isFinite(value[1]))),
);

/** `_dataset/<op>/walks/<walkName>.json`: a walk's mark and the keys near it (`marks.ts` `WalkMark`). */
const WALK_MARK = shape({ version: exactly(1), params: recordOf(anyText), mark: number, markTime: text, near: listOf(NEAR_KEY) });

/** `_dataset/<op>/clock.json`: the latest fetch stamp the dataset published (`fetch-clock.ts`). */
const CLOCK_FILE = shape({ version: exactly(1), operation: text, latest: text });

/** A walk of a checkpoint, as far as a publish reads it (`journal.ts` `WalkState`). */
const WALK_STATE = shape({
  params: recordOf(anyText),
  done: boolean,
  newest: optional(number),
  stoppedAtMark: optional(boolean),
  near: optional(listOf(NEAR_KEY)),
});

/** A writer's staging state as a commit or a publish journal carries it (`journal.ts` `ExportState`). */
const EXPORT_STATE = shape({
  version: exactly(3),
  op: text,
  walks: listOf(WALK_STATE),
  spool: shape({ bytes: number, sha256: text }),
  records: number,
  pages: number,
  credits: number,
  run: shape({ records: number, pages: number, credits: number, received: number, duplicates: number, repaired: number, ended: boolean }),
  finished: optional(boolean),
});

const DRIFT = shape({
  added: listOf(shape({ column: anyText, kind: text })),
  missing: listOf(anyText),
  conflicting: listOf(shape({ column: anyText, recorded: text, seen: text, values: optional(number) })),
  widened: optional(listOf(shape({ column: anyText, from: text, to: text }))),
});

/** `_dataset/<op>/drift-<writer>.json`: the last run's drift, a report for people and machines. */
const DRIFT_FILE = shape({ operation: text, at: text, frozen: boolean, drift: DRIFT });

/** A rename of a journal: from, to. */
const RENAME = rule<[string, string]>('a pair of paths', (value) => Array.isArray(value) && value.length === 2 && value.every((path) => typeof path === 'string' && path !== ''));

/** `staging-<writer>/publish.json`: a writer's own publish killed half done, as versions before group commit wrote it (`rewrite.ts` finishes it). */
const PUBLISH_JOURNAL = shape({ renames: listOf(RENAME), schema: SCHEMA_FILE, marks: MARKS_FILE, drift: DRIFT, next: nullable(EXPORT_STATE) });

/** What a publish changed for one writer (`types.ts` `DatasetChanges`), as a receipt and a publish journal carry it. */
const CHANGES = shape({ added: number, updated: number, partitions: listOf(anyText), drift: DRIFT, writer: text, stoppedAtMark: number, setAside: number });

/**
 * Where a publish copied the records a commit kept staged (a lowered limit): the file
 * `_dataset/<op>/staging-<writer>/spool-rest.ndjson`, relative to the dataset, which finishing the
 * publish renames over that writer's spool, so it must stay inside the dataset's staging folders.
 */
const KEPT_REST = rule<string>(
  'a path _dataset/<op>/staging-<writer>/spool-rest.ndjson',
  (value) => typeof value === 'string' && /^_dataset\/[^/]+\/staging-[a-z0-9][a-z0-9-]*\/spool-rest\.ndjson$/.test(value.replaceAll('\\', '/')),
);

/** The first records of a spool a commit publishes (`destination.ts` `SpoolPrefix`). */
const SPOOL_PREFIX = shape({ records: number, bytes: number });

/** `_dataset/<op>/publishing/<pass>/journal.json` (or an older version's `_dataset/<op>/publish.json`): a publish pass killed half done (`rewrite.ts` `GroupJournal`). */
const GROUP_JOURNAL = shape({
  version: exactly(2),
  renames: listOf(RENAME),
  removes: listOf(text),
  /** Where the renames placed after the others begin (none in journals of versions that placed them in turn). */
  placedAfter: optional(number),
  schema: SCHEMA_FILE,
  walks: listOf(WALK_MARK),
  /** The partitions whose locks the pass held (none in journals of versions before passes published at once). */
  partitions: optional(listOf(text)),
  members: listOf(shape({ writer: text, commit: optional(text), completedRun: optional(text), completedTotals: optional(RUN_TOTALS), next: nullable(EXPORT_STATE), rest: optional(KEPT_REST), changes: CHANGES, repaired: number }), {
    field: 'writer',
    noun: 'writer',
    remedy: 'remove the repeated entry',
  }),
  drift: DRIFT,
  /** The latest fetch stamp among its records (none in journals of versions before the fetch clock). */
  fetched: optional(text),
});

/** `_dataset/<op>/commits/<writer>.json`: a writer's staged pages waiting for a publish (`dataset.ts`). */
const COMMIT_FILE = shape({ writer: text, id: optional(text), partitions: optional(listOf(text)), complete: boolean, runId: optional(text), state: EXPORT_STATE, through: optional(SPOOL_PREFIX), handOff: optional(boolean) });

/** `_dataset/<op>/publishing/<pass>/claim.json`: the commits a publish pass took (`passes.ts`). */
const CLAIM_FILE = shape({ commits: listOf(shape({ writer: text, id: optional(text) })), partitions: optional(listOf(text)) });

/** `_dataset/<op>/widening.json`: parts of a narrower type wait for the widening rewrite (`widen.ts`); a new id each widening. */
const WIDENING_FILE = shape({ id: text });

/** `_dataset/<op>/receipts/<writer>.json` (an older version's `commits/<writer>.done.json`): what the publish that took a writer's pages changed (`dataset.ts`). */
const RECEIPT_FILE = shape({ changes: CHANGES, repaired: number });

/** `_dataset/<op>/compact.json` (`compaction-journal.ts`); `walks` and `writers` when it moves writers' marks into walk files (a migration). */
const COMPACTION_JOURNAL = shape({
  version: exactly(1),
  operation: text,
  renames: listOf(RENAME),
  removes: listOf(text),
  schema: SCHEMA_FILE,
  walks: optional(listOf(WALK_MARK)),
  writers: optional(recordOf(MARKS_FILE)),
});

export type CheckedSchema = Infer<typeof SCHEMA_FILE>;
export type CheckedMarks = Infer<typeof MARKS_FILE>;
export type CheckedDrift = Infer<typeof DRIFT_FILE>;
export type CheckedPublishJournal = Infer<typeof PUBLISH_JOURNAL>;
export type CheckedCompactionJournal = Infer<typeof COMPACTION_JOURNAL>;
export type CheckedWalkMark = Infer<typeof WALK_MARK>;
export type CheckedGroupJournal = Infer<typeof GROUP_JOURNAL>;
export type CheckedCommit = Infer<typeof COMMIT_FILE>;
export type CheckedClaim = Infer<typeof CLAIM_FILE>;
export type CheckedReceipt = Infer<typeof RECEIPT_FILE>;

/**
 * The object `name` of `storage`, as `file` wants it; undefined when there is none; else
 * `STATE_DAMAGED` naming the object (`objectPlace`), the problem and the fix.
 */
async function readChecked<T>(storage: Storage, name: string, file: Rule<T>, remedy: string, operation?: string): Promise<T | undefined> {
  const value = await readObject(storage, name, remedy);
  return value === undefined ? undefined : checked(objectPlace(storage, name), value, file, remedy, operation);
}

/** `value`, read from `path`, as `shape` wants it; else `STATE_DAMAGED` naming the file, the problem and the fix. */
function checked<T>(path: string, value: unknown, file: Rule<T>, remedy: string, operation?: string): T {
  const problem = file.problem(value, '');
  const what = problem?.what.replace(/^ is /, 'holds ');
  if (what !== undefined) throw new StateDamagedError(`${path} is damaged: ${what}; ${problem?.remedy ?? remedy}`, path);
  const named = (value as { operation?: unknown }).operation;
  if (operation !== undefined && named !== operation) {
    throw new StateDamagedError(`${path} is damaged: it names the operation ${JSON.stringify(named)}, and its folder is ${operation}'s; ${remedy}`, path);
  }
  return value as T;
}

const SCHEMA_REMEDY = 'restore it from a backup, or export into a new directory (the part files cannot be merged into without it)';
/**
 * A writer's file holds the run it last completed, and in datasets before walks kept their own
 * files, their marks: without them a run buys what is new, walking those in full, which writes
 * their records again: nothing is lost.
 */
const MARKS_REMEDY = 'delete it: the next run walks in full every parameter set whose mark only it held, and buys what is new';
/** Without its state a walk is walked in full once, which writes its records again: nothing is lost. */
const WALK_MARK_REMEDY = 'delete it to walk this parameter set in full again';
const CLOCK_REMEDY = 'delete it: writers then order fetches within a second only among their own, until the next publish records it again';
const DRIFT_REMEDY = "delete it (it only reports the last run's schema drift)";

/**
 * The schema of `paths.operation`, checked; undefined for an operation no run has published. A
 * schema file missing while part files exist is damage, not a new operation: a run would record a
 * schema afresh and type the old parts' columns anew, and `dataset info` would count nothing.
 */
export async function readSchemaFile(paths: DatasetPaths): Promise<CheckedSchema | undefined> {
  const schema = await readChecked(paths.storage, paths.names.schema, SCHEMA_FILE, SCHEMA_REMEDY, paths.operation);
  if (schema !== undefined) return schema;
  const part = await firstPart(paths);
  if (part !== undefined && !(await publishing(paths))) {
    const place = objectPlace(paths.storage, paths.names.schema);
    throw new StateDamagedError(`${place} is missing, while ${paths.operation} has part files (${part}); ${SCHEMA_REMEDY}`, place);
  }
  return undefined;
}

/**
 * Checks the schema of every other operation of the dataset: an operation new to it takes its Hive
 * key from theirs (`partitioningFor`), which must then be one this version writes.
 */
export async function checkOtherSchemas(paths: DatasetPaths): Promise<void> {
  const folders = await readdir(join(paths.dir, '_dataset'), { withFileTypes: true }).catch(() => []);
  for (const folder of folders) {
    const operation = folder.name.replaceAll('__', '/');
    if (folder.isDirectory() && operation !== paths.operation) await readSchemaFile(paths.ofOperation(operation));
  }
}

/** A writer's marks (`names.state`), checked; undefined when it has none. */
export function readMarksFile(paths: DatasetPaths): Promise<CheckedMarks | undefined> {
  return readChecked(paths.storage, paths.names.state, MARKS_FILE, MARKS_REMEDY, paths.operation);
}

/** The latest fetch stamp the dataset published (`names.clock`), checked; undefined when none is recorded. */
export async function readClockFile(paths: DatasetPaths): Promise<string | undefined> {
  return (await readChecked(paths.storage, paths.names.clock, CLOCK_FILE, CLOCK_REMEDY, paths.operation))?.latest;
}

/** The state of the walk named `name` (`names.walkMark`), checked; undefined when it has none. Its parameters must be the ones its name is made of. */
export async function readWalkMarkFile(paths: DatasetPaths, name: string): Promise<CheckedWalkMark | undefined> {
  const object = paths.names.walkMark(name);
  const mark = await readChecked(paths.storage, object, WALK_MARK, WALK_MARK_REMEDY);
  // A walk reads its state by its name: a file whose parameters name another walk would stop this one at that one's mark.
  if (mark !== undefined && walkName(mark.params) !== name) {
    const place = objectPlace(paths.storage, object);
    throw new StateDamagedError(`${place} is damaged: its params ${shown(mark.params)} are not those of the walk it is named for; ${WALK_MARK_REMEDY}`, place);
  }
  return mark;
}

/** A writer's last drift (`names.drift`), checked; undefined when it has none. */
export function readDriftFile(paths: DatasetPaths): Promise<CheckedDrift | undefined> {
  return readChecked(paths.storage, paths.names.drift, DRIFT_FILE, DRIFT_REMEDY, paths.operation);
}

/** A writer's own publish journal (`names.journal`, versions before group commit), checked; undefined when none is pending. */
export function readPublishJournal(paths: DatasetPaths, remedy: string): Promise<CheckedPublishJournal | undefined> {
  return readChecked(paths.storage, paths.names.journal, PUBLISH_JOURNAL, remedy);
}

/** A group publish journal named `name` (a pass's, or `names.publishJournal` of an older version), checked; undefined when no publish is pending there. */
export function readGroupJournal(paths: DatasetPaths, name: string, remedy: string): Promise<CheckedGroupJournal | undefined> {
  return readChecked(paths.storage, name, GROUP_JOURNAL, remedy);
}

/** The commits the publish pass `pass` claimed (`names.passClaim`), checked; undefined when it has none (yet, or any more). */
export function readClaimFile(paths: DatasetPaths, pass: string, remedy: string): Promise<CheckedClaim | undefined> {
  return readChecked(paths.storage, paths.names.passClaim(pass), CLAIM_FILE, remedy);
}

/** The sign that a widening rewrite waits, checked; undefined when none waits. */
export function readWideningFile(paths: DatasetPaths): Promise<Infer<typeof WIDENING_FILE> | undefined> {
  const remedy = 'delete it and run `dataset compact`, which rewrites every part of a narrower type';
  return readChecked(paths.storage, paths.names.widening, WIDENING_FILE, remedy);
}

/** The commit of `writer` waiting for a publish (`names.commit`), checked; undefined when it was taken meanwhile. */
export async function readCommitFile(paths: DatasetPaths, writer: string, remedy: string): Promise<CheckedCommit | undefined> {
  const object = paths.names.commit(writer);
  const commit = await readChecked(paths.storage, object, COMMIT_FILE, remedy);
  // A publish takes the pages of the writer a commit names, and removes the commit by that name.
  if (commit !== undefined && commit.writer !== writer) {
    const place = objectPlace(paths.storage, object);
    throw new StateDamagedError(`${place} is damaged: it names the writer ${JSON.stringify(commit.writer)}, and its name is ${writer}'s; ${remedy}`, place);
  }
  return commit;
}

/**
 * This writer's receipt (`names.receipt`, or where an older version's pass left it,
 * `names.legacyReceipt`), checked, with the name it was read from; undefined when there is none.
 */
export async function readReceiptFile(paths: DatasetPaths, remedy: string): Promise<{ receipt: CheckedReceipt; name: string } | undefined> {
  for (const name of [paths.names.receipt(), paths.names.legacyReceipt()]) {
    const receipt = await readChecked(paths.storage, name, RECEIPT_FILE, remedy);
    if (receipt !== undefined) return { receipt, name };
  }
  return undefined;
}

/** The operation's compaction journal (`names.compactionJournal`), checked; undefined when no compaction is pending. */
export function readCompactionJournal(paths: DatasetPaths, remedy: string): Promise<CheckedCompactionJournal | undefined> {
  return readChecked(paths.storage, paths.names.compactionJournal, COMPACTION_JOURNAL, remedy, paths.operation);
}

/** Parts checked at once: a footer read waits on the disk or the store, not the CPU (1,825 parts by day: 1.1 s one at a time, 0.3 s eight at once). */
const CHECKS_AT_ONCE = 8;

/** A part as a listing shows it, to be checked (`ScannedPart` is one). */
export interface ListedPart {
  /** Its name in the dataset's store. */
  readonly name: string;
  /** Where a user finds it, for the message. */
  readonly path: string;
  /** Its size in the listing. */
  readonly bytes: number;
  /** What tells it was replaced since (S3's ETag, else its time): a part checked before and unchanged is not read again. */
  readonly version: string;
}

/**
 * The parts this process found whole, by place, with the version they had then: a queue worker opens
 * the dataset for every walk, and a part unchanged since is not read again (on S3 a GET a part).
 */
const checkedParts = new Map<string, string>();

/**
 * The checks under way in this process, by part and version: walks that open the dataset at once (a
 * queue worker's, an export's lanes) wait on the one read of a part rather than each reading it
 * (64 walks opened at once read each part 64 times, since none had found it whole yet).
 */
const checking = new Map<string, Promise<string | undefined>>();

/**
 * Refuses, naming the first, part files that cannot be read: a Parquet part whose footer does not
 * parse (cut short, overwritten), an NDJSON or CSV part whose last line is cut short. Only the end of
 * each is read, through the store (`Storage.readTail`: one GET a part on S3), and only of parts the
 * listing shows new or changed since this process last found them whole. A part gone meanwhile (a
 * compaction removed it) is no damage.
 */
export async function checkParts(parts: readonly ListedPart[], format: DatasetFormat, paths: DatasetPaths): Promise<void> {
  const unchecked = parts.filter((part) => checkedParts.get(part.path) !== part.version);
  const problems = await mapAtOnce(unchecked, CHECKS_AT_ONCE, (part) => checkOnce(paths.storage, part, format));
  const damaged = problems.findIndex((problem) => problem !== undefined);
  if (damaged === -1) return;
  const part = unchecked[damaged].path;
  throw new StateDamagedError(
    `the part file ${part} cannot be read (${problems[damaged]}); restore it from a backup, or move it out of ${paths.place} and delete ${objectPlace(paths.storage, paths.names.walks.slice(0, -1))} (the walks' marks) and ${objectPlace(paths.storage, `${paths.names.states}*.json`)}: ` +
      'the next export then walks every parameter set in full and writes its records again',
    part,
  );
}

/** What is wrong with `part` (see `partProblem`), read once however many walks ask at once; a part found whole is remembered. */
function checkOnce(storage: Storage, part: ListedPart, format: DatasetFormat): Promise<string | undefined> {
  const key = `${part.version}\n${part.path}`;
  let check = checking.get(key);
  if (check === undefined) {
    check = partProblem(storage, part, format)
      .then((problem) => {
        if (problem === undefined) checkedParts.set(part.path, part.version);
        return problem;
      })
      .finally(() => checking.delete(key));
    checking.set(key, check);
  }
  return check;
}

async function partProblem(storage: Storage, part: ListedPart, format: DatasetFormat): Promise<string | undefined> {
  if (format === 'parquet') {
    const footer = await readPartFooter(storage, part.name, part.bytes);
    return footer === undefined || !('problem' in footer) ? undefined : footer.problem;
  }
  const end = await storage.readTail(part.name, 1, part.bytes);
  return end === undefined || end.size === 0 || end.bytes[0] === 0x0a ? undefined : 'its last line is cut short';
}

/** The first part file of any format under a Hive folder of the operation (at any depth below it), if there is one: one listing of the operation's prefix, where it is (`objectPlace`). */
async function firstPart(paths: DatasetPaths): Promise<string | undefined> {
  const root = `${paths.operation}/`;
  const extensions = DATASET_FORMATS.map((format) => PART_EXTENSION[format]);
  for await (const { name } of paths.storage.list(root)) {
    const [folder, ...below] = name.slice(root.length).split('/');
    // Only this operation's own folders: `shortvideo/videos/popular` lives inside `shortvideo/videos`.
    if (below.length === 0 || !PARTITION_COLUMNS.some((column) => folder.startsWith(`${column}=`))) continue;
    const last = below[below.length - 1];
    if (last.startsWith('part-') && extensions.some((extension) => last.endsWith(extension))) return objectPlace(paths.storage, name);
  }
  return undefined;
}

/**
 * Whether a publish is under way or was killed half done: the first publish of an operation
 * renames its parts into place before it writes the schema, and its journal (the group's, or a
 * writer's own from before group commit) says so until the schema is written.
 */
async function publishing(paths: DatasetPaths): Promise<boolean> {
  if (await paths.storage.exists(paths.names.publishJournal)) return true;
  for (const pass of await passFolders(paths)) if (await paths.storage.exists(paths.names.passJournal(pass))) return true;
  const staging = `${paths.names.meta}/staging-`;
  const writers = new Set<string>();
  for await (const { name } of paths.storage.list(staging)) writers.add(name.slice(staging.length).split('/')[0]);
  for (const writer of writers) if (await paths.storage.exists(paths.ofWriter(writer).names.journal)) return true;
  return false;
}
