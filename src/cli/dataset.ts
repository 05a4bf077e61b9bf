/**
 * `socialstream dataset info DIR [--json]` and `socialstream dataset compact DIR [--partition P] [--layout L] [--json]`:
 * the library's `datasetInfo` and `compactDataset`, their results as text or one JSON object.
 */
import type { CompactionSummary, CompactOptions } from '../dataset/compact.ts';
import { PARTITION_BYS } from '../export/partition-by.ts';
import { PARQUET_LAYOUTS } from '../../sinks/parquet.ts';
import { counted } from '../export/progress.ts';
import { didYouMean } from '../near-name.ts';
import { renderHelp, type CommandHelp } from './help.ts';
import { asFlags, optionsOf, parseArgs, UsageError, type FlagSpec } from './args.ts';

const INFO_FLAGS: FlagSpec[] = [
  { name: 'json', kind: 'boolean', help: 'print the info as one JSON object (for scripts)' },
];

const COMPACT_FLAGS: FlagSpec[] = [
  {
    name: 'partition',
    option: 'partition',
    kind: 'string',
    value: PARTITION_BYS.join('|'),
    help: "merge partitions into coarser ones (a dataset by day into one part a month); every later run keeps it (default: as recorded)",
  },
  { name: 'operation', option: 'operation', kind: 'string', value: 'OP-ID', help: 'only this operation (default: every operation of the dataset)' },
  {
    name: 'layout',
    option: 'layout',
    kind: 'string',
    value: PARQUET_LAYOUTS.join('|'),
    help: 'rewrite Parquet parts into this layout (nested: STRUCT and LIST; flat: dotted columns); every later run keeps it (default: as recorded)',
  },
  {
    name: 'locks',
    kind: 'string',
    value: 'URL',
    help: 'lock the dataset with Redis leases at redis://HOST:PORT/DB, as its writers do (written through a queue or with --locks, or a bucket that ignores conditional writes)',
  },
  { name: 'lease', kind: 'integer', value: 'MS', help: "with --locks: how long a lease lasts unless renewed (default 30000)" },
  { name: 'json', kind: 'boolean', help: 'print what was done as one JSON object' },
];

export const INFO_HELP: CommandHelp = {
  command: 'dataset info',
  summary: 'what a dataset holds: operations, rows, partitions, parts, writers, marks, schema, drift, staged runs',
  usage: ['dataset info DIR|s3://BUCKET/PREFIX [--json]'],
  flags: INFO_FLAGS,
  examples: ['dataset info forums/', 'dataset info forums/ --json | jq .operations   # for scripts', 'dataset info s3://my-bucket/forums   # AWS_* settings as the AWS tools take them'],
};

export const COMPACT_HELP: CommandHelp = {
  command: 'dataset compact',
  summary: "rewrite a dataset's many small part files as few, or into another partitioning or Parquet layout, in place",
  usage: [`dataset compact DIR|s3://BUCKET/PREFIX [--partition ${PARTITION_BYS.join('|')}] [--layout ${PARQUET_LAYOUTS.join('|')}] [--operation OP-ID] [--locks URL [--lease MS]] [--json]`],
  about: 'Refused while an export writes the dataset. It takes the locks its exports take: lock files in a folder, leases on a bucket that honours conditional writes, or with --locks Redis leases.',
  flags: COMPACT_FLAGS,
  examples: ['dataset compact forums/', 'dataset compact forums/ --partition year --operation forum/subforum   # coarser partitions from now on'],
};

export const DATASET_HELP: CommandHelp = {
  command: 'dataset',
  summary: 'look into a dataset (info) or tidy its part files (compact)',
  usage: ['dataset info|compact DIR|s3://BUCKET/PREFIX [options]', ...INFO_HELP.usage, ...COMPACT_HELP.usage],
  about: `dataset info: ${INFO_HELP.summary}.\ndataset compact: ${COMPACT_HELP.summary}.\n'socialstream dataset <info|compact> --help' for each one's options.`,
  flags: [],
  examples: [...INFO_HELP.examples.slice(0, 1), ...COMPACT_HELP.examples.slice(0, 1)],
};

export async function runDataset(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb === 'info') return info(rest);
  if (verb === 'compact') return compact(rest);
  if (verb === undefined || verb === 'help') {
    process.stdout.write(renderHelp(DATASET_HELP));
    return verb === undefined ? 2 : 0;
  }
  throw new UsageError(`dataset has no command "${verb}": info or compact${didYouMean(verb, ['info', 'compact'])}`);
}

function directory(command: string, positionals: readonly string[], params: Record<string, string>): string {
  const extra = [...positionals.slice(1), ...Object.keys(params)];
  if (extra.length > 0) throw new UsageError(`dataset ${command} takes one directory or s3:// location, got also "${extra[0]}"`);
  if (positionals[0] === undefined) throw new UsageError(`dataset ${command} needs the dataset's directory or s3:// location: socialstream dataset ${command} DIR`);
  return positionals[0];
}

async function info(argv: string[]): Promise<number> {
  const args = parseArgs(argv, INFO_FLAGS);
  // The dataset code is loaded only when it runs: `help` reads this module for its help alone.
  const { datasetInfo, describeDatasetInfo } = await import('../dataset/info.ts');
  const held = await datasetInfo(directory('info', args.positionals, args.params));
  process.stdout.write((args.flags.json ? JSON.stringify(held) : describeDatasetInfo(held)) + '\n');
  return 0;
}

async function compact(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMPACT_FLAGS);
  const dir = directory('compact', args.positionals, args.params);
  const locks = redisLocksOf(args.flags);
  // The options are compactDataset's to check; its errors name the flags.
  const { compactDataset } = await import('../dataset/compact.ts');
  // Before anything is read: an address that cannot work is refused first. Loaded only then.
  const session =
    locks === undefined
      ? undefined
      : await import('../queue/redis-locks.ts')
          .then(({ openRedisLocks }) => openRedisLocks(locks.url, locks.leaseMs === undefined ? {} : { leaseMs: locks.leaseMs }))
          .catch((error: unknown) => {
            // Its `leaseMs` is `--lease` here.
            throw asFlags(error, [{ name: 'lease', option: 'leaseMs', kind: 'integer', help: '' }]);
          });
  try {
    const options = { ...(optionsOf(args.flags, COMPACT_FLAGS) as CompactOptions), ...(session === undefined ? {} : { locks: session.locks }) };
    const summary = await compactDataset(dir, options).catch((error: unknown) => {
      throw asFlags(error, COMPACT_FLAGS);
    });
    process.stdout.write((args.flags.json ? JSON.stringify(summary) : describeCompaction(summary)) + '\n');
    return 0;
  } finally {
    await session?.close();
  }
}

/** `--locks URL` and `--lease MS`: the Redis whose leases the compaction takes, and how long one lasts. */
function redisLocksOf(flags: Record<string, string | number | boolean>): { url: string; leaseMs: number | undefined } | undefined {
  if (typeof flags.locks !== 'string') {
    if (flags.lease !== undefined) throw new UsageError('--lease is how long a Redis lease lasts: it goes with --locks');
    return undefined;
  }
  return { url: flags.locks, leaseMs: typeof flags.lease === 'number' ? flags.lease : undefined };
}

function describeCompaction(summary: CompactionSummary): string {
  return summary.operations
    .map((operation) => {
      const { parts, partitioning, layout } = operation;
      const recovered = operation.recovered ? ' (first finished what a killed run left half done)' : '';
      if (operation.rows === 0) {
        const apart = operation.writers.length > 1 ? `; the parts of its ${operation.writers.length} writers stay apart, as each merges later runs into its own` : '';
        return `${operation.operation}: nothing to compact, one part per writer and partition by ${partitioning.after} (${counted(parts.before, 'part file')})${apart}${recovered}; --partition month|year|none merges partitions`;
      }
      const converted = layout.before === layout.after ? '' : `, ${layout.before} → ${layout.after} layout`;
      return `${operation.operation}: ${counted(parts.before, 'part file')} → ${parts.after}, ${counted(operation.rows, 'row')}, partitioned by ${partitioning.before} → ${partitioning.after}${converted}${recovered}`;
    })
    .join('\n');
}
