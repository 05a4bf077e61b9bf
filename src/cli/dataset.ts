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
  { name: 'json', kind: 'boolean', help: 'print what was done as one JSON object' },
];

export const INFO_HELP: CommandHelp = {
  command: 'dataset info',
  summary: 'what a dataset holds: operations, rows, partitions, parts, writers, marks, schema, drift, staged runs',
  usage: ['dataset info DIR [--json]'],
  flags: INFO_FLAGS,
  examples: ['dataset info forums/', 'dataset info forums/ --json | jq .operations   # for scripts'],
};

export const COMPACT_HELP: CommandHelp = {
  command: 'dataset compact',
  summary: "rewrite a dataset's many small part files as few, or into another partitioning or Parquet layout, in place",
  usage: [`dataset compact DIR [--partition ${PARTITION_BYS.join('|')}] [--layout ${PARQUET_LAYOUTS.join('|')}] [--operation OP-ID] [--json]`],
  about: 'Refused while an export writes DIR.',
  flags: COMPACT_FLAGS,
  examples: ['dataset compact forums/', 'dataset compact forums/ --partition year --operation forum/subforum   # coarser partitions from now on'],
};

export const DATASET_HELP: CommandHelp = {
  command: 'dataset',
  summary: 'look into a dataset (info) or tidy its part files (compact)',
  usage: ['dataset info|compact DIR [options]', ...INFO_HELP.usage, ...COMPACT_HELP.usage],
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
  if (extra.length > 0) throw new UsageError(`dataset ${command} takes one directory, got also "${extra[0]}"`);
  if (positionals[0] === undefined) throw new UsageError(`dataset ${command} needs the dataset's directory: socialstream dataset ${command} DIR`);
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
  // The options are compactDataset's to check; its errors name the flags.
  const { compactDataset } = await import('../dataset/compact.ts');
  const summary = await compactDataset(dir, optionsOf(args.flags, COMPACT_FLAGS) as CompactOptions).catch((error: unknown) => {
    throw asFlags(error, COMPACT_FLAGS);
  });
  process.stdout.write((args.flags.json ? JSON.stringify(summary) : describeCompaction(summary)) + '\n');
  return 0;
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
