/** Picks the continuation strategy of an operation row. */
import { plainRecords } from '../operations/extract.ts';
import type { OperationSpec } from '../operations/spec.ts';
import { withBranchesAhead, withKnownPagesAhead } from './ahead.ts';
import { commentTreeWalk } from './comment-tree.ts';
import { cursorPairWalk } from './cursor-pair.ts';
import { cursorWalk } from './cursor.ts';
import { pageNumberWalk } from './page-number.ts';
import { singlePage } from './single.ts';
import type { Strategy } from './strategy.ts';
import { timelineWalk } from './timeline.ts';

export type { Lookahead, PageRead, Query, Strategy } from './strategy.ts';

/** The strategy that walks `op`'s pages. States are opaque JSON to everything outside `src/pagination/`. */
export function strategyFor(op: OperationSpec): Strategy<unknown> {
  const { records, continuation } = op;
  if (records.kind === 'timeline' || continuation.kind === 'timeline') {
    if (records.kind !== 'timeline' || continuation.kind !== 'timeline') throw mismatch(op);
    return erase(timelineWalk({ at: records.at, from: continuation.from, param: continuation.param }, op.id));
  }
  if (records.kind === 'tree' || continuation.kind === 'tree') {
    if (records.kind !== 'tree' || continuation.kind !== 'tree') throw mismatch(op);
    return erase(withBranchesAhead(commentTreeWalk({ at: records.at, param: continuation.param }, op.id), records.at));
  }
  const read = (body: unknown): unknown[] => plainRecords(body, records, op.id);
  switch (continuation.kind) {
    case 'none':
      return erase(singlePage(read));
    case 'cursor':
      return erase(cursorWalk(continuation, read));
    case 'cursorPair':
      return erase(cursorPairWalk(continuation, read));
    case 'page':
      return erase(withKnownPagesAhead(pageNumberWalk(continuation, read), continuation));
  }
}

/** Strategies are driven only through their own states, so their state type can be forgotten here. */
function erase<S>(strategy: Strategy<S>): Strategy<unknown> {
  return strategy;
}

function mismatch(op: OperationSpec): TypeError {
  return new TypeError(`${op.id}: records kind ${op.records.kind} does not fit continuation ${op.continuation.kind}`);
}
