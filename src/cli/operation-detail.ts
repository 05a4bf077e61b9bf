/**
 * `socialstream ops <op-id>`: one row of the operation table (`src/operations/table.ts`) as a person
 * reads it: each parameter, how its pages are walked, what keys its records, and what a page costs.
 * Everything shown is read off the row, so it cannot disagree with what the client does.
 */
import type { ContinuationSpec, OperationSpec, ParamSpec } from '../operations/spec.ts';

/** The text of `ops <op-id>`; `paging` is the rule in the table's short form (`after ← data.after`). */
export function describeOperation(op: OperationSpec, paging: string): string {
  const inPair = new Map((op.oneOf ?? []).flatMap(([a, b]) => [[a, b], [b, a]] as const));
  const rows = Object.entries(op.params).map(([name, spec]) => [
    name,
    spec.required ? 'yes' : inPair.has(name) ? `or ${inPair.get(name)}` : 'no',
    kindOf(spec),
  ]);
  const header = ['parameter', 'required', 'type or values'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd();
  const needs = (op.dependencies ?? []).map(({ param, equals, needs: other }) => `  ${param}=${String(equals)} needs ${other}`);
  return [
    `${op.id}  (client.${op.group}.${op.method}, GET ${op.path})`,
    '',
    ...[line(header), ...rows.map(line)].map((text) => `  ${text}`),
    ...needs,
    '',
    `paging:      ${explainPaging(op.continuation)} (${paging})`,
    `record key:  ${keyOf(op)}`,
    `record time: ${timeOf(op)}`,
    // Every answered request is charged one credit (docs/wire.md); a request refused as invalid is free.
    `cost:        1 credit a page (each answered request); a request refused as invalid costs nothing, and`,
    `             socialstream checks the parameters above before the first one`,
  ].join('\n');
}

/** A parameter's type, or its values when the table lists them, with bounds and pattern. */
function kindOf(spec: ParamSpec): string {
  if (spec.values) return spec.values.join('|');
  const bounds = spec.min !== undefined || spec.max !== undefined ? ` ${spec.min ?? ''}..${spec.max ?? ''}` : '';
  const pattern = spec.pattern ? ` (${spec.pattern.description})` : '';
  return `${spec.type}${bounds}${pattern}`;
}

function explainPaging(continuation: ContinuationSpec): string {
  switch (continuation.kind) {
    case 'none':
      return 'one request, one page';
    case 'cursor':
      return `sends ${continuation.param} = the page's ${continuation.from} while it is there${continuation.while ? ` and ${continuation.while} is true` : ''}`;
    case 'cursorPair':
      return `sends ${continuation.params.join(' and ')} = the page's ${continuation.from.join(' and ')}, together, while both are there`;
    case 'page':
      return `sends ${continuation.param} = 1, 2, …${continuation.while ? ` while ${continuation.while} is true` : ''}${continuation.max ? `, up to ${continuation.max}` : ''}, stopping at an empty page`;
    case 'timeline':
      return `sends ${continuation.param} = the page's ${continuation.from} while the page gave entries the one before did not`;
    case 'tree':
      return `fetches every more.cursor whose has_more is true, once each, as ${continuation.param}`;
  }
}

function keyOf(op: OperationSpec): string {
  const stable = op.stableKey;
  const fallback =
    stable === undefined
      ? ''
      : `${(stable.params ?? []).map((name) => `the parameter ${name} + `).join('')}the first of ${stable.fields.map((fields) => fields.join(' + ')).join(' / ')} that is present`;
  if (op.key === null) return stable === undefined ? 'none' : `none of its own: a dataset keys records by ${fallback}`;
  return `${op.key} (a dataset merges rows by it, an export drops repeats of it)${stable === undefined ? '' : `; a record without it by ${fallback}`}`;
}

function timeOf(op: OperationSpec): string {
  if (op.time === null) return 'none (a dataset files its records under _date NULL)';
  const unit = { s: 'Unix seconds', ms: 'Unix milliseconds', iso: 'ISO 8601 text' }[op.time.unit];
  const newest = op.newestFirst;
  const order = newest === undefined ? '' : `; newest first when ${newest.param}=${newest.values.join('|')}${newest.byDefault ? ' or absent' : ''}`;
  return `${op.time.at} (${unit})${order}`;
}
