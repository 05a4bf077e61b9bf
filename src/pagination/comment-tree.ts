/**
 * The forum comment tree (E23, docs/wire.md "Forum comment tree"), flattened depth first: each
 * comment is followed by all of its replies, at every depth, before its next sibling. A response
 * nests some replies inline; `replies.more` on a comment continues its children and `more` on the
 * last comment of a batch continues its siblings. The walk keeps a stack of frames (one per depth
 * being listed) and fetches a cursor exactly when depth-first order reaches it.
 *
 * A "page" of this walk is therefore the run of records between two fetches, and the state between
 * pages is the frame stack: the comments already bought but not yet yielded, and the cursor to fetch
 * next. A checkpoint holds that whole stack, so resuming never buys a fetched comment twice.
 */
import type { ForumComment } from '../records/index.ts';
import { collectionAt } from '../operations/extract.ts';
import { unkey } from '../operations/unkey.ts';
import type { Strategy } from './strategy.ts';
import { isObject } from './strategy.ts';

interface Frame {
  /** Depth of the comments listed in this frame. */
  depth: number;
  /** Comments of this depth not yet yielded, as the API sent them (replies still nested). */
  items: unknown[];
  /** Fetch this once `items` run out: the rest of the siblings. Null means the post's first page. */
  cursor?: string | null;
}

interface TreeState {
  /** The last frame is the deepest. */
  frames: Frame[];
}

export interface TreeRule {
  at: string;
  param: string;
}

export function commentTreeWalk(rule: TreeRule, endpoint: string): Strategy<TreeState> {
  const top = (state: TreeState): Frame | undefined => state.frames[state.frames.length - 1];
  return {
    start: () => ({ frames: [{ depth: 0, items: [], cursor: null }] }),
    query: (state) => {
      const cursor = top(state)?.cursor;
      return typeof cursor === 'string' ? { [rule.param]: cursor } : {};
    },
    spends: (state) => top(state)?.cursor ?? undefined,
    read(body, state) {
      // States go into checkpoints and may be read again: copy, never mutate.
      const frames = state.frames.map((frame) => ({ ...frame, items: frame.items.slice() }));
      const fetched = frames[frames.length - 1];
      if (fetched === undefined) return { records: [], next: null };
      fetched.items = collectionAt(body, rule.at, endpoint).concat(fetched.items);
      delete fetched.cursor;
      const records: ForumComment[] = [];
      while (frames.length > 0) {
        const frame = frames[frames.length - 1];
        const comment = frame.items.shift();
        if (comment === undefined) {
          if (frame.cursor !== undefined) return { records, next: { frames } };
          frames.pop();
          continue;
        }
        if (!isObject(comment)) continue;
        const { replies, more, ...fields } = comment;
        records.push({ ...(unkey(fields) as Omit<ForumComment, 'depth'>), depth: frame.depth });
        const siblings = continuation(more);
        if (siblings !== undefined) frame.cursor = siblings;
        if (isObject(replies)) {
          const children = isObject(replies.items) || Array.isArray(replies.items) ? Object.values(replies.items) : [];
          const rest = continuation(replies.more);
          if (children.length > 0 || rest !== undefined) {
            frames.push(rest === undefined ? { depth: frame.depth + 1, items: children } : { depth: frame.depth + 1, items: children, cursor: rest });
          }
        }
      }
      return { records, next: null };
    },
    isState: (value): value is TreeState =>
      isObject(value) &&
      Array.isArray(value.frames) &&
      value.frames.every(
        (frame) =>
          isObject(frame) &&
          Number.isSafeInteger(frame.depth) &&
          Array.isArray(frame.items) &&
          (frame.cursor === undefined || frame.cursor === null || typeof frame.cursor === 'string'),
      ),
  };
}

/** The cursor of a `{ has_more, cursor }` object when it says there is more. */
function continuation(more: unknown): string | undefined {
  if (!isObject(more) || more.has_more !== true) return undefined;
  return typeof more.cursor === 'string' && more.cursor !== '' ? more.cursor : undefined;
}
