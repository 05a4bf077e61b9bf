/**
 * `socialstream ops`: the operation table, read from the same data the client walks by. It fits the
 * terminal (its width, else COLUMNS, else 80): one row per operation when that fits, else one block
 * per operation with its parameters wrapped. `--wide` always gives one row per operation.
 * `socialstream ops <op-id>`: one operation in full, from the same row (`operation-detail.ts`).
 */
import { OPERATIONS } from '../operations/table.ts';
import type { ContinuationSpec, OperationSpec, ParamSpec } from '../operations/spec.ts';
import { noArguments, parseArgs, UsageError, type FlagSpec, type ParsedArgs } from './args.ts';
import type { CommandHelp } from './help.ts';
import { describeOperation } from './operation-detail.ts';
import { operationNamed } from './operation-id.ts';

const FLAGS: FlagSpec[] = [
  { name: 'json', kind: 'boolean', help: 'print the table (or the one operation) as JSON: the same data as the library\'s client.operations' },
  { name: 'wide', kind: 'boolean', help: 'one line per operation, however wide the terminal' },
];

export const OPS_HELP: CommandHelp = {
  command: 'ops',
  summary: 'the operations, their parameters and paging; or one operation in full',
  usage: ['ops [--json | --wide]', 'ops <op-id> [--json]'],
  about: `With an <op-id>: each parameter (required or not, its type or values), how its pages are
walked (the continuation rule), the field that keys its records, and what its pages cost.`,
  flags: FLAGS,
  examples: ['ops', 'ops forum/subforum   # its parameters, paging, record key and cost', 'ops --json | jq \'.[].id\''],
};

export async function runOps(argv: string[]): Promise<number> {
  const args = parseArgs(argv, FLAGS);
  // Both shape what stdout gets; one of them would be dropped in silence.
  if (args.flags.json && args.flags.wide) throw new UsageError('--json and --wide are two ways to print the table: use one');
  if (args.positionals.length > 0) return showOperation(args);
  noArguments('ops', args);
  const table: readonly OperationSpec[] = OPERATIONS;
  if (args.flags.json) {
    process.stdout.write(JSON.stringify(table, null, 2) + '\n');
    return 0;
  }
  const rows = table.map((op) => [op.id, `${op.group}.${op.method}`, describeParams(op), describePaging(op.continuation)]);
  const header = ['op-id', 'client method', 'params (* required)', 'pages'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd();
  const lines = [line(header), ...rows.map(line)];
  const width = terminalWidth();
  if (args.flags.wide || lines.every((text) => text.length < width)) {
    process.stdout.write(lines.join('\n') + '\n');
    return 0;
  }
  const blocks = rows.map(([id, method, params, paging]) =>
    [...wrap(`${id} (client.${method})`, width, ''), ...wrap(`params: ${params}`, width, '    '), ...wrap(`pages: ${paging}`, width, '    ')]
      .map((text, index) => (index === 0 ? text : `  ${text}`))
      .join('\n'),
  );
  process.stdout.write(`operations, parameters (* required) and paging; --wide for one line each\n\n${blocks.join('\n')}\n`);
  return 0;
}

/** `ops <op-id>`: that operation's row, as text or JSON. */
function showOperation(args: ParsedArgs): number {
  const [id, ...extra] = args.positionals;
  const [word] = [...extra, ...Object.entries(args.params).map(([name, value]) => `${name}=${value}`)];
  if (word !== undefined) throw new UsageError(`ops takes one operation id, got also "${word}"`);
  if (args.flags.wide) throw new UsageError('--wide shapes the table of every operation: leave it out with an <op-id>');
  const op = operationNamed(id);
  process.stdout.write((args.flags.json ? JSON.stringify(op, null, 2) : describeOperation(op, describePaging(op.continuation))) + '\n');
  return 0;
}

function terminalWidth(): number {
  if (process.stdout.isTTY && process.stdout.columns > 0) return process.stdout.columns;
  const columns = Number(process.env.COLUMNS);
  return Number.isSafeInteger(columns) && columns >= 40 ? columns : 80;
}

/**
 * `text` in lines of at most `width` characters (less the two-space block indent), breaking between
 * words, and inside a word after a `|` (long value lists) or anywhere if it must. Later lines start
 * with `indent`.
 */
function wrap(text: string, width: number, indent: string): string[] {
  // One column spare: a line as wide as the terminal wraps early in some of them.
  const room = width - 3;
  const pieces = text.split(/ +(?![^()]*\))/).flatMap((word) => splitWord(word, room - indent.length));
  const lines: string[] = [];
  let current = '';
  for (const piece of pieces) {
    const joined = current === '' ? piece : current.endsWith('|') ? current + piece : `${current} ${piece}`;
    if (joined.length <= room || current === '' || current === indent) current = joined;
    else {
      lines.push(current);
      current = indent + piece;
    }
  }
  lines.push(current);
  return lines;
}

/** A word cut after its `|`s (and, failing that, every `room` characters) into pieces of at most `room`. */
function splitWord(word: string, room: number): string[] {
  if (word.length <= room) return [word];
  const pieces: string[] = [];
  let rest = word;
  while (rest.length > room) {
    const cut = rest.lastIndexOf('|', room - 1);
    const at = cut > 0 ? cut + 1 : room;
    pieces.push(rest.slice(0, at));
    rest = rest.slice(at);
  }
  return [...pieces, rest];
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
