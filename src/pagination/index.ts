/** Picks the continuation strategy of an operation row. */
import { payloadOf, payloadPath, plainRecords } from '../operations/extract.ts';
import type { OperationSpec } from '../operations/spec.ts';
import { withBranchesAhead, withKnownPagesAhead } from './ahead.ts';
import { commentTreeWalk } from './comment-tree.ts';
import { cursorPairWalk } from './cursor-pair.ts';
import { cursorWalk } from './cursor.ts';
import { pageNumberWalk } from './page-number.ts';
import { singlePage } from './single.ts';
import type { Strategy } from './strategy.ts';
import { timelineWalk } from './timeline.ts';

export type { Lookahead, PageRead, PagesAhead, Query, Strategy } from './strategy.ts';

/**
 * The strategy that walks `op`'s pages. States are opaque JSON to everything outside `src/pagination/`.
 * It is given whole bodies and hands each strategy the payload, in either envelope (`payloadOf`),
 * with the row's paths made relative to it.
 */
export function strategyFor(op: OperationSpec): Strategy<unknown> {
  const at = payloadPath(op.records.at);
  return onPayload(pick(op, at), at);
}

function pick(op: OperationSpec, at: string): Strategy<unknown> {
  const { records, continuation } = op;
  if (records.kind === 'timeline' || continuation.kind === 'timeline') {
    if (records.kind !== 'timeline' || continuation.kind !== 'timeline') throw mismatch(op);
    return timelineWalk({ at, from: payloadPath(continuation.from), param: continuation.param }, op.id);
  }
  if (records.kind === 'tree' || continuation.kind === 'tree') {
    if (records.kind !== 'tree' || continuation.kind !== 'tree') throw mismatch(op);
    return withBranchesAhead(commentTreeWalk({ at, param: continuation.param }, op.id), at);
  }
  const kind = records.kind;
  const read = (payload: unknown): unknown[] | null => plainRecords(payload, kind, at, op.id);
  switch (continuation.kind) {
    case 'none':
      return singlePage(read);
    case 'cursor':
      return cursorWalk({ ...continuation, from: payloadPath(continuation.from), while: continuation.while && payloadPath(continuation.while) }, read);
    case 'cursorPair':
      return cursorPairWalk({ ...continuation, from: [payloadPath(continuation.from[0]), payloadPath(continuation.from[1])] }, read);
    case 'page': {
      const rule = {
        ...continuation,
        while: continuation.while && payloadPath(continuation.while),
        total: continuation.total && payloadPath(continuation.total),
        perPage: continuation.perPage && payloadPath(continuation.perPage),
      };
      return withKnownPagesAhead(pageNumberWalk(rule, read), rule, read);
    }
  }
}

/** `strategy` reading the payload of each body rather than the body, also the bodies it looks ahead at. */
function onPayload(strategy: Strategy<unknown>, at: string): Strategy<unknown> {
  const payload = (body: unknown): unknown => (body === undefined ? undefined : payloadOf(body, at));
  const reading: Strategy<unknown> = { ...strategy, read: (body, state) => strategy.read(payloadOf(body, at), state) };
  if (strategy.ahead !== undefined) {
    reading.ahead = (state, look) => strategy.ahead!(state, { ...look, held: (query) => payload(look.held(query)), last: payload(look.last) });
  }
  return reading;
}

function mismatch(op: OperationSpec): TypeError {
  return new TypeError(`${op.id}: records kind ${op.records.kind} does not fit continuation ${op.continuation.kind}`);
}
