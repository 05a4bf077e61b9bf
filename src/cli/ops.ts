/** `socialstream ops`: the operation table, read from the same data the client walks by. */
import { OPERATIONS } from '../operations/table.ts';
import type { ContinuationSpec, OperationSpec, ParamSpec } from '../operations/spec.ts';
import { describeFlags, parseArgs, type FlagSpec } from './args.ts';

const FLAGS: FlagSpec[] = [
  { name: 'json', kind: 'boolean', help: 'print the table as JSON (the same data as client.operations)' },
  { name: 'help', kind: 'boolean', help: 'show this help' },
];

export async function runOps(argv: string[]): Promise<number> {
  const args = parseArgs(argv, FLAGS);
  if (args.flags.help) {
    process.stdout.write(`usage: socialstream ops [--json]\n\n${describeFlags(FLAGS)}\n`);
    return 0;
  }
  const table: readonly OperationSpec[] = OPERATIONS;
  if (args.flags.json) {
    process.stdout.write(JSON.stringify(table, null, 2) + '\n');
    return 0;
  }
  const rows = table.map((op) => [op.id, `${op.group}.${op.method}`, describeParams(op), describePaging(op.continuation)]);
  const header = ['op-id', 'client method', 'params (* required)', 'pages'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd();
  process.stdout.write([line(header), ...rows.map(line)].join('\n') + '\n');
  return 0;
}

function describeParams(op: OperationSpec): string {
  const inPair = new Set((op.oneOf ?? []).flat());
  const names = Object.entries(op.params)
    .filter(([name]) => !inPair.has(name))
    .map(([name, spec]) => describeParam(name, spec));
  const pairs = (op.oneOf ?? []).map(([a, b]) => `${a}|${b}*`);
  return [...pairs, ...names].join(' ');
}

function describeParam(name: string, spec: ParamSpec): string {
  const values = spec.values ? `(${spec.values.length > 6 ? `${spec.values.length} values` : spec.values.join('|')})` : '';
  return `${name}${spec.required ? '*' : ''}${values}`;
}

function describePaging(continuation: ContinuationSpec): string {
  switch (continuation.kind) {
    case 'none':
      return 'one page';
    case 'cursor':
      return `${continuation.param} ← ${continuation.from}${continuation.while ? ` while ${continuation.while}` : ''}`;
    case 'cursorPair':
      return `${continuation.params.join(' + ')} ← ${continuation.from.join(' + ')}`;
    case 'page':
      return `${continuation.param} + 1${continuation.while ? ` while ${continuation.while}` : ''}${continuation.max ? ` up to ${continuation.max}` : ''}`;
    case 'timeline':
      return `${continuation.param} ← ${continuation.from} while new entries`;
    case 'tree':
      return `every more.cursor, once (${continuation.param})`;
  }
}
