/**
 * The operation an `<op-id>` word names, for `export` and `ops`: the table's row, or a usage error
 * that suggests the id meant. People type an operation without its platform (`subforum` for
 * `forum/subforum`) or with a typo, so both are looked for.
 */
import type { OperationSpec } from '../operations/spec.ts';
import { findOperation, OPERATIONS } from '../operations/table.ts';
import { nearestName } from '../near-name.ts';
import { UsageError } from './args.ts';

export function operationNamed(id: string): OperationSpec {
  const op = findOperation(id);
  if (op) return op;
  throw new UsageError(`unknown operation "${id}"${suggestion(id)}`);
}

/** ` (did you mean "forum/subforum"?)`, ` (did you mean one of "a", "b"?)`, or a pointer to the list. */
function suggestion(id: string): string {
  const word = id.replace(/^\/+|\/+$/g, '').toLowerCase();
  // The id without its platform: `subforum`, `channel/shorts`; a typo of that counts too.
  const tails = OPERATIONS.filter((op) => op.id.slice(op.id.indexOf('/') + 1) === word).map((op) => op.id);
  const near = tails.length > 0 ? tails : nearIds(word);
  if (near.length === 0) return ' (see socialstream ops)';
  return near.length === 1 ? ` (did you mean "${near[0]}"?)` : ` (did you mean one of ${near.map((name) => `"${name}"`).join(', ')}?)`;
}

function nearIds(word: string): string[] {
  const whole = nearestName(word, OPERATIONS.map((op) => op.id));
  if (whole !== undefined) return [whole];
  const tails = OPERATIONS.map((op) => op.id.slice(op.id.indexOf('/') + 1));
  const tail = nearestName(word, tails);
  return tail === undefined ? [] : OPERATIONS.filter((op) => op.id.endsWith(`/${tail}`)).map((op) => op.id);
}
