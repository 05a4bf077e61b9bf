/**
 * `socialstream dataset info DIR [--json]` and `socialstream dataset compact DIR [--partition P] [--layout L] [--json]`:
 * the library's `datasetInfo` and `compactDataset`, their results as text or one JSON object.
 */
import { compactDataset, type CompactionSummary, type CompactOptions } from '../export/compact.ts';
import { PARTITION_BYS } from '../export/partition-by.ts';
import { PARQUET_LAYOUTS } from '../../sinks/parquet.ts';
import { datasetInfo, describeDatasetInfo } from '../export/info.ts';
import { counted } from '../export/progress.ts';
import { asFlags, describeFlags, optionsOf, parseArgs, UsageError, type FlagSpec } from './args.ts';

const INFO_FLAGS: FlagSpec[] = [
  { name: 'json', kind: 'boolean', help: 'print the info as one JSON object (for scripts)' },
  { name: 'help', kind: 'boolean', help: 'show this help' },
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
  { name: 'help', kind: 'boolean', help: 'show this help' },
];

const COMPACT_USAGE = `socialstream dataset compact DIR [--partition ${PARTITION_BYS.join('|')}] [--layout ${PARQUET_LAYOUTS.join('|')}] [--operation OP-ID] [--json]`;

const USAGE = `usage:
  socialstream dataset info DIR [--json]          what a dataset holds: operations, rows, partitions, parts, writers, marks, schema, drift, staged runs
  ${COMPACT_USAGE}
                                                  rewrite many small part files as few, or into another Parquet layout, in place (refused while an export writes DIR)`;

export async function runDataset(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb === 'info') return info(rest);
  if (verb === 'compact') return compact(rest);
  if (verb === undefined || verb === '--help' || verb === '-h' || verb === 'help') {
    process.stdout.write(USAGE + '\n');
    return verb === undefined ? 2 : 0;
  }
  throw new UsageError(`dataset has no command "${verb}": info or compact`);
}

function directory(command: string, positionals: readonly string[], params: Record<string, string>): string {
  const extra = [...positionals.slice(1), ...Object.keys(params)];
  if (extra.length > 0) throw new UsageError(`dataset ${command} takes one directory, got also "${extra[0]}"`);
  if (positionals[0] === undefined) throw new UsageError(`dataset ${command} needs the dataset's directory: socialstream dataset ${command} DIR`);
  return positionals[0];
}

async function info(argv: string[]): Promise<number> {
  const args = parseArgs(argv, INFO_FLAGS);
  if (args.flags.help) {
    process.stdout.write(`usage: socialstream dataset info DIR [--json]\n\n${describeFlags(INFO_FLAGS)}\n`);
    return 0;
  }
  const held = await datasetInfo(directory('info', args.positionals, args.params));
  process.stdout.write((args.flags.json ? JSON.stringify(held) : describeDatasetInfo(held)) + '\n');
  return 0;
}

async function compact(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMPACT_FLAGS);
  if (args.flags.help) {
    process.stdout.write(`usage: ${COMPACT_USAGE}\n\n${describeFlags(COMPACT_FLAGS)}\n`);
    return 0;
  }
  const dir = directory('compact', args.positionals, args.params);
  // The options are compactDataset's to check; its errors name the flags.
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
