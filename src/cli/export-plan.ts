/**
 * What `socialstream export` was asked to do: its words and flags turned into a checked plan. Every
 * parameter set and every option is validated here, before any connection is made; the options by the
 * engine's own rules (`src/export/options.ts`), which this module only maps flags to and from.
 */
import { readFile } from 'node:fs/promises';
import { text as readText } from 'node:stream/consumers';
import { counted } from '../export/progress.ts';
import { checkParams } from '../operations/params.ts';
import type { OperationSpec } from '../operations/spec.ts';
import type { OperationId } from '../operations/table.ts';
import { asFlags, optionsOf, parseInputLine, UsageError, type FlagSpec } from './args.ts';
import type { CommandHelp } from './help.ts';
import { operationNamed } from './operation-id.ts';
import { walkName } from '../operations/walk-name.ts';
import { checkOptions, checkOptionsFor } from '../export/options.ts';
import { PARTITION_BYS } from '../export/partition-by.ts';
import type { ExportOptions } from '../export/types.ts';

/** The flags of `export`; a flag that sets a library option names it (`option`), and the library checks it. */
export const EXPORT_FLAGS: FlagSpec[] = [
  { name: 'out', option: 'out', kind: 'string', value: 'FILE', help: 'output file: .ndjson/.jsonl, .csv or .parquet; - for NDJSON on stdout' },
  { name: 'limit', option: 'limit', kind: 'integer', value: 'N', help: 'stop after N records in all' },
  { name: 'max-pages', option: 'maxPages', kind: 'integer', value: 'N', help: 'buy at most N pages this run, across every parameter set' },
  { name: 'max-credits', option: 'maxCredits', kind: 'integer', value: 'N', help: 'spend at most N credits this run (every attempt counts; a crash does not end a run)' },
  { name: 'dedupe', option: 'dedupe', kind: 'string', value: 'FIELD', help: "tell duplicates by FIELD (a dotted path) instead of the operation's record key" },
  { name: 'keep-duplicates', option: 'keepDuplicates', kind: 'boolean', help: 'keep every record, even one whose key this export already wrote' },
  { name: 'resume', option: 'resume', kind: 'boolean', help: "continue what the output holds (nothing held: start fresh; this export's complete file: buy nothing; another's: refused)" },
  { name: 'restart', option: 'restart', kind: 'boolean', help: 'discard what earlier runs of this output left staged, and start fresh' },
  { name: 'json', kind: 'boolean', help: 'print the export summary as one JSON object on stdout (for schedulers)' },
  { name: 'inputs', kind: 'string', value: 'FILE', help: 'one parameter set per line (key=value ... or a JSON object); # comments; - reads them from stdin' },
  { name: 'concurrency', option: 'concurrency', kind: 'integer', value: 'N', help: 'walks in flight at once with --inputs (default 4)' },
  {
    name: 'csv-escape-formulae',
    option: 'escapeFormulae',
    kind: 'boolean',
    help: "in a .csv, prefix ' to text starting with = + - @ tab or CR, so a spreadsheet shows it instead of running it (off by default: it alters those values)",
  },
  { name: 'layout', option: 'layout', kind: 'string', value: 'nested|flat', help: 'a .parquet output or a new dataset: objects as STRUCT and arrays as LIST (nested, the default), or one column per dotted leaf path (flat); a dataset keeps the layout of its first run' },
  { name: 'page-concurrency', option: 'pageConcurrency', kind: 'integer', value: 'N', help: 'pages of one walk in flight at once where its rule allows: forum comment trees, popular videos (default 16)' },
  { name: 'overfetch', option: 'overfetch', kind: 'boolean', help: 'web search: buy pages ahead before the end is known, paying for empty pages past it' },
  { name: 'dataset', option: 'dataset', kind: 'string', value: 'DIR', help: 'instead of --out: merge into a growing dataset (Parquet parts, one row per record key), a folder or s3://BUCKET/PREFIX' },
  {
    name: 'work',
    option: 'work',
    kind: 'string',
    value: 'DIR',
    help: 'with --dataset s3://…: the local folder the writer stages in, its staging log on the store the durable copy (default socialstream-work in the system temporary folder)',
  },
  { name: 'schema', option: 'schema', kind: 'string', value: 'evolve|freeze', help: 'with --dataset: new fields become columns (evolve), or the first drifting page stops the run (freeze)' },
  { name: 'partition', option: 'partition', kind: 'string', value: PARTITION_BYS.join('|'), help: "with --dataset: how finely part files split by the records' own time (default month; a dataset keeps its first)" },
  { name: 'since', option: 'since', kind: 'string', value: 'DATE', help: "with --dataset: only records whose own time is at or after DATE (YYYY-MM-DD, UTC, or an ISO time); a newest-first walk stops at its first page wholly older" },
  { name: 'until', option: 'until', kind: 'string', value: 'DATE', help: "with --dataset: only records whose own time is before DATE (YYYY-MM-DD, UTC, or an ISO time)" },
  { name: 'shard', option: 'shard', kind: 'string', value: 'K/N', help: 'with --dataset and --inputs: run the K-th of N shares of the parameter sets' },
  { name: 'sandbox', kind: 'boolean', help: 'use a built-in sandbox (synthetic data, no key, no credits)' },
  { name: 'queue', kind: 'string', value: 'URL', help: 'with --dataset: put one job a walk in the queue at redis://HOST:PORT/DB and return; workers do the walking' },
  { name: 'rate', option: 'rate', kind: 'integer', value: 'N', help: 'with --queue: request attempts per second across every worker of the run' },
  {
    name: 'locks',
    kind: 'string',
    value: 'URL',
    help: 'with --dataset: lock the dataset with Redis leases at redis://HOST:PORT/DB instead of lock files, for shards or scheduled runs on several machines at once',
  },
  { name: 'lease', option: 'leaseMs', kind: 'integer', value: 'MS', help: "with --locks: how long a lease lasts unless renewed (default 30000); a killed writer's locks free themselves after it" },
];

export const EXPORT_HELP: CommandHelp = {
  command: 'export',
  summary: 'walk every page of one operation into a file (NDJSON, CSV, Parquet), stdout or a dataset; or enqueue it for workers',
  usage: [
    'export <op-id> key=value ... (--out FILE.(ndjson|csv|parquet) | --out - | --dataset DIR) [options]',
    'export <op-id> ... --inputs FILE --dataset DIR --queue redis://HOST:PORT/DB [--max-credits N] [--rate N]',
  ],
  about: `<op-id> is an operation from 'socialstream ops', e.g. forum/subforum ('socialstream ops <op-id>'
shows its parameters). key=value pairs are its parameters; with --inputs they apply to every line,
and a line that repeats an earlier one (the same parameter set) is walked once. With --out -,
NDJSON goes to stdout, and a reader that stops early (| head) ends the export quietly, with exit 0.`,
  flags: EXPORT_FLAGS,
  examples: [
    'export forum/subforum subforum=node --out posts.parquet --max-credits 50   # one walk into a Parquet file',
    'export forum/subforum subforum=node --out posts.parquet --resume           # continue it after Ctrl-C or a limit',
    'export search/search query=duckdb --out - --limit 20 | head -3             # NDJSON on stdout',
    'export forum/subforum sort=new --inputs subforums.txt --dataset forums/    # one walk per line, merged into a dataset',
    'export forum/subforum --inputs - --out posts.ndjson < subforums.txt       # the parameter sets from stdin',
    'export forum/subforum --inputs subs.txt --shard 1/2 --dataset /data/forums --locks redis://10.0.0.5:6379/0   # shard 1 of 2; shard 2 on another machine',
    'export forum/subforum subforum=node --out posts.csv --sandbox              # try it offline, no key',
  ],
  notes: `exit codes: 0 done (also when --limit, --max-pages or --max-credits ended it: --resume with a higher
one continues), 2 usage, invalid parameters, an output in use, state that does not verify or a
dataset that refuses the run (another partitioning), 3 key refused, 4 out of credits, 5 service failure after retries, 6 disk full,
129/130/143 stopped by SIGHUP/SIGINT/SIGTERM.
After 3, 4, 5, 6 and 129-143 the output so far is a valid file and --resume continues where it stopped.`,
};

export interface ExportPlan {
  opId: OperationId;
  /** The engine's options, less the signal and progress the command adds. */
  options: ExportOptions;
  json: boolean;
  inputs: Record<string, string>[];
  /** `--inputs` lines skipped because an earlier line holds the same parameter set. */
  repeatedLines: number[];
  /** The `--inputs` file, when there is one, and the line of each parameter set in it. */
  inputsFile: string | undefined;
  lines: number[];
  /** The file, `-` for stdout, or the dataset directory. */
  output: string;
  stdout: boolean;
  sandbox: boolean;
  /** `--queue`: enqueue the walks instead of walking them (`--max-credits` is then the run's budget). */
  queue: { url: string; rate: number | undefined } | undefined;
  /** `--locks` and `--lease`: the Redis whose leases lock the dataset, instead of lock files, and how long a lease lasts. */
  locks: { url: string; leaseMs: number | undefined } | undefined;
}

export async function planExport(
  positionals: string[],
  params: Record<string, string>,
  flags: Record<string, string | number | boolean>,
): Promise<ExportPlan> {
  const op = operationOf(positionals);
  const options = exportOptions(op, flags);
  const stdout = options.out === '-';
  checkCommandFlags(flags, stdout);
  const queue = queueOf(flags, options.dataset);
  const locks = locksOf(flags, options.dataset);
  const { inputs, lines, repeated } = await parameterSets(op, params, flags.inputs);
  return {
    opId: op.id as OperationId,
    options,
    json: flags.json === true,
    inputs,
    repeatedLines: repeated,
    inputsFile: typeof flags.inputs === 'string' ? inputsName(flags.inputs) : undefined,
    lines,
    output: options.out ?? options.dataset!,
    stdout,
    sandbox: flags.sandbox === true,
    queue,
    locks,
  };
}

function operationOf(positionals: readonly string[]): OperationSpec {
  const [opId, ...extra] = positionals;
  if (opId === undefined) throw new UsageError('export needs an operation id, e.g. forum/subforum (see socialstream ops)');
  if (extra.length > 0) throw new UsageError(`unexpected word "${extra[0]}": parameters are key=value`);
  return operationNamed(opId);
}

/**
 * The flags as the engine's options, checked by the engine's own rules (`checkOptions`) before any
 * connection is made, its errors naming the flags. `--out -` is NDJSON on stdout.
 */
function exportOptions(op: OperationSpec, flags: Record<string, string | number | boolean>): ExportOptions {
  // `--rate` sets enqueueExport's `rate` and `--lease` openRedisLocks's `leaseMs`, which an export does not take:
  // `queueOf` and `locksOf` hand them on.
  const { rate: _queueRate, leaseMs: _leaseMs, ...exportFlags } = optionsOf(flags, EXPORT_FLAGS);
  const options = {
    ...exportFlags,
    ...(typeof flags.shard === 'string' ? { shard: parseShard(flags.shard) } : {}),
    ...(flags.out === '-' ? { format: 'ndjson' } : {}),
  } as ExportOptions;
  try {
    checkOptions(options);
    checkOptionsFor(op, options);
  } catch (error) {
    throw asFlags(error, EXPORT_FLAGS);
  }
  return options;
}

/** What only the command line has: `--out -` (stdout, where nothing is staged) and `--inputs` (the lines a shard shares). */
function checkCommandFlags(flags: Record<string, string | number | boolean>, stdout: boolean): void {
  for (const name of ['resume', 'restart']) if (stdout && flags[name] === true) throw new UsageError(`--${name} needs a file: with --out - nothing is staged`);
  // Stdout holds one thing: the records, or the summary, never both in one stream a reader must pull apart.
  if (stdout && flags.json === true) throw new UsageError('--json prints the summary on stdout, where --out - writes the records: use one (the summary of --out - is on stderr)');
  if (flags.shard !== undefined && typeof flags.inputs !== 'string') throw new UsageError('--shard K/N shares the lines of an --inputs file');
}

/** Workers walk a queued export, each with its own key and settings: flags that only a walking process can honour are refused. */
function queueOf(flags: Record<string, string | number | boolean>, dataset: string | undefined): ExportPlan['queue'] {
  const url = text(flags.queue);
  if (url === undefined) {
    if (flags.rate !== undefined) throw new UsageError('--rate is a shared request rate: it goes with --queue');
    return undefined;
  }
  if (dataset === undefined) throw new UsageError('--queue fills a dataset: pass --dataset DIR (on storage every worker sees)');
  for (const name of ['limit', 'max-pages', 'shard', 'resume', 'restart', 'sandbox', 'concurrency', 'dedupe', 'keep-duplicates', 'overfetch']) {
    if (flags[name] !== undefined) throw new UsageError(`--${name} does not go with --queue (workers walk the export; a run continues by itself)`);
  }
  // Its value is `enqueueExport`'s to check, by the library's rule.
  return { url, rate: typeof flags.rate === 'number' ? flags.rate : undefined };
}

/** `--locks URL`: a dataset's writers on several machines lock it in one Redis; a file has one writer, and a queue's workers lock already. */
function locksOf(flags: Record<string, string | number | boolean>, dataset: string | undefined): ExportPlan['locks'] {
  const url = text(flags.locks);
  if (url === undefined) {
    if (flags.lease !== undefined) throw new UsageError('--lease is how long a Redis lease lasts: it goes with --locks');
    return undefined;
  }
  if (dataset === undefined) throw new UsageError('--locks locks a dataset that writers on several machines share: it goes with --dataset DIR');
  if (flags.queue !== undefined) throw new UsageError("--locks does not go with --queue: a queue's workers lock the dataset with its Redis already");
  // Its address and lease are `openRedisLocks`'s to check, by the queue's rules.
  return { url, leaseMs: typeof flags.lease === 'number' ? flags.lease : undefined };
}

function text(value: string | number | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** `--shard K/N` as the option `{ index: K, count: N }` (which the engine checks). */
function parseShard(text: string): { index: number; count: number } {
  const match = /^(\d+)\/(\d+)$/.exec(text);
  if (!match) throw new UsageError(`--shard must be K/N, two whole numbers, got "${text}"`);
  return { index: Number(match[1]), count: Number(match[2]) };
}

/** The parameter sets of a run: the command line's, or one per `--inputs` line over it; all checked. */
export async function parameterSets(
  op: OperationSpec,
  params: Record<string, string>,
  inputsPath: string | number | boolean | undefined,
): Promise<{ inputs: Record<string, string>[]; lines: number[]; repeated: number[] }> {
  const { sets: lines, repeated } = typeof inputsPath === 'string' ? await readInputs(inputsPath, params) : { sets: [{ params, line: 0 }], repeated: [] };
  // Every parameter set is checked before the first request, so a typo on line 90 costs nothing.
  for (const { params: set, line } of lines) {
    try {
      checkParams(op, set);
    } catch (error) {
      if (line > 0 && error instanceof Error) error.message = `${inputsName(String(inputsPath))} line ${line}: ${error.message}`;
      throw error;
    }
  }
  return { inputs: lines.map((input) => input.params), lines: lines.map((input) => input.line), repeated };
}

/**
 * The parameter sets of an `--inputs` file, each merged over the command line's, with its line number.
 * A set equal to an earlier line's is left out (and its line listed in `repeated`): walking it again
 * would buy the same pages twice.
 */
async function readInputs(
  path: string,
  common: Record<string, string>,
): Promise<{ sets: { params: Record<string, string>; line: number }[]; repeated: number[] }> {
  let text: string;
  const name = inputsName(path);
  try {
    text = path === '-' ? await readText(process.stdin) : await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the inputs file ${name}: ${whyUnreadable(error)}`);
  }
  const sets: { params: Record<string, string>; line: number }[] = [];
  const repeated: number[] = [];
  const seen = new Set<string>();
  text.split(/\r?\n/).forEach((text, index) => {
    const params = parseInputLine(text, `${name} line ${index + 1}`);
    if (!params) return;
    const merged = { ...common, ...params };
    const identity = walkName(merged);
    if (seen.has(identity)) repeated.push(index + 1);
    else {
      seen.add(identity);
      sets.push({ params: merged, line: index + 1 });
    }
  });
  if (sets.length === 0) throw new UsageError(`the inputs file ${name} holds no parameter sets`);
  return { sets, repeated };
}

/** How messages name the inputs: `--inputs -` is standard input, not a file named `-`. */
function inputsName(path: string): string {
  return path === '-' ? 'stdin' : path;
}

function whyUnreadable(error: unknown): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    default:
      return error instanceof Error ? error.message : String(error);
  }
}

/** The summary's word on `--inputs` lines that were not walked because they repeat earlier ones. */
export function repeatsNote(plan: ExportPlan): string {
  const lines = plan.repeatedLines;
  if (lines.length === 0) return '';
  const shown = lines.length > 5 ? `${lines.slice(0, 5).join(', ')}, …` : lines.join(', ');
  return `; ${counted(lines.length, 'input line')} (${shown}) repeated an earlier line and ${lines.length === 1 ? 'was' : 'were'} walked once`;
}
