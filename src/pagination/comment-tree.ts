/**
 * The forum comment tree (E23, docs/wire.md "Forum comment tree"), flattened depth first: each
 * comment is followed by all of its replies, at every depth, before its next sibling. A response
 * nests some replies inline; `replies.more` on a comment continues its children and `more` on the
 * last comment of a batch continues its siblings. The walk keeps a stack of frames (one per depth
 * being listed) and fetches a cursor exactly when depth-first order reaches it.
 *
 * The siblings' continuation may also sit beside `comments` at the top of the payload (`more`), as
 * the service sends it; wherever a `more` sits, one whose `has_more` is true is fetched exactly once.
 * `replies.more` may say `{ has_more: false, next_cursor: null }`; `next_cursor` is read like `cursor`.
 *
 * A "page" of this walk is therefore the run of records between two fetches, and the state between
 * pages is the frame stack: the comments already bought but not yet yielded, and the cursor to fetch
 * next. A checkpoint holds that whole stack, so resuming never buys a fetched comment twice. A caller
 * of `pages()` has taken whole bodies, so every buffered comment is marked `taken`: the walk still
 * follows their cursors but yields none of them again.
 */
import { parseExact, stringifyExact } from '../exact-json.ts';
import type { ForumComment } from '../records/index.ts';
import { collectionAt, flagOf } from '../operations/extract.ts';
import { unkey } from '../operations/unkey.ts';
import type { PageRead, Strategy } from './strategy.ts';
import { described, isCursor, isNothing, isObject, isStrange } from './strategy.ts';

interface Frame {
  /** Depth of the comments listed in this frame. */
  depth: number;
  /** Comments of this depth not yet yielded, as the API sent them (replies still nested). */
  items: unknown[];
  /**
   * In a state, `items` as exact JSON text instead, when an integer past 2^53 (a `bigint`) is among
   * them: a state is plain JSON (a checkpoint, the export's journal, a queue's job), which a `bigint`
   * is not, and a comment's own field may hold one.
   */
  exact?: string;
  /** Fetch this once `items` run out: the rest of the siblings. Null means the post's first page. */
  cursor?: string | null;
  /** `items` (and their inline replies) went to the caller inside a raw body (`pages()`): walk them for their cursors only. */
  taken?: boolean;
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
    read: (payload, state) => {
      const { records, next, ignored } = new TreePage(state, true).read(payload, rule, endpoint);
      return { records, next, ignored };
    },
    follow: (payload, state) => {
      const { next, count } = new TreePage(state, false).read(payload, rule, endpoint);
      return { next, records: count };
    },
    bodyTaken: (next) => ({ frames: next.frames.map((frame) => ({ ...frame, taken: true })) }),
    isState: isTreeState,
  };
}

/**
 * One fetched page read into the frame stack, building the records only when `withRecords`: a
 * look-ahead (`follow`) needs the cursors and a count alone, and unkeying every comment of every
 * page held ahead, again at each planning step, was most of its cost.
 */
class TreePage {
  readonly #frames: Frame[];
  readonly #records: ForumComment[] = [];
  #count = 0;
  #ignored: string | undefined;

  constructor(
    state: TreeState,
    private readonly withRecords: boolean,
  ) {
    // States go into checkpoints and may be read again: copy, never mutate.
    this.#frames = state.frames.map(({ exact, ...frame }) => ({ ...frame, items: exact === undefined ? frame.items.slice() : (parseExact(exact) as unknown[]) }));
  }

  read(payload: unknown, rule: TreeRule, endpoint: string): PageRead<TreeState> & { count: number } {
    const fetched = this.#frames[this.#frames.length - 1];
    if (fetched === undefined) return { records: [], next: null, count: 0 };
    fetched.items = collectionAt(payload, rule.at, endpoint).concat(fetched.items);
    delete fetched.cursor;
    delete fetched.taken;
    this.#continueSiblings(fetched, isObject(payload) ? payload.more : undefined);
    const next = this.#flatten();
    return { records: this.#records, next, ignored: this.#ignored, count: this.#count };
  }

  /** Depth first through the stack, until a frame must fetch its cursor (the next state) or none is left (null). */
  #flatten(): TreeState | null {
    const frames = this.#frames;
    while (frames.length > 0) {
      const frame = frames[frames.length - 1];
      const comment = frame.items.shift();
      if (comment === undefined) {
        if (frame.cursor !== undefined) return { frames: frames.map(inState) };
        frames.pop();
      } else if (isObject(comment)) {
        this.#visit(frame, comment);
      }
    }
    return null;
  }

  /** A comment: its record (unless its body was taken), its siblings' continuation, then a frame of its replies. */
  #visit(frame: Frame, comment: Record<string, unknown>): void {
    const { replies, more } = comment;
    if (frame.taken !== true) {
      this.#count++;
      if (this.withRecords) {
        const { replies: _replies, more: _more, ...fields } = comment;
        this.#records.push({ ...(unkey(fields) as Omit<ForumComment, 'depth'>), depth: frame.depth });
      }
    }
    this.#continueSiblings(frame, more);
    if (!isObject(replies)) {
      // No replies is `""` (as the service sends it), null or absent; anything else is a shape the walk cannot read.
      if (!isNothing(replies)) this.#ignored ??= described('replies', replies);
      return;
    }
    const children = isObject(replies.items) || Array.isArray(replies.items) ? Object.values(replies.items) : [];
    const child: Frame = { depth: frame.depth + 1, items: children };
    if (frame.taken === true) child.taken = true;
    this.#continueSiblings(child, replies.more);
    if (children.length > 0 || child.cursor !== undefined) this.#frames.push(child);
  }

  /** Sets the frame's sibling continuation; a second, different one is reported (a frame holds one). */
  #continueSiblings(frame: Frame, more: unknown): void {
    const found = continuation(more);
    if (found === undefined || found === frame.cursor) return;
    if (typeof found !== 'string') this.#ignored ??= found.ignored;
    else if (typeof frame.cursor === 'string') this.#ignored ??= `${described('more.cursor', found)} beside ${JSON.stringify(frame.cursor)}`;
    else frame.cursor = found;
  }
}

/** A frame as a state holds it: its comments as exact JSON text when a `bigint` is among them. */
function inState(frame: Frame): Frame {
  return holdsBigint(frame.items) ? { ...frame, items: [], exact: stringifyExact(frame.items) } : frame;
}

function holdsBigint(value: unknown): boolean {
  if (typeof value === 'bigint') return true;
  if (typeof value !== 'object' || value === null) return false;
  for (const item of Array.isArray(value) ? value : Object.values(value)) if (holdsBigint(item)) return true;
  return false;
}

function isExactList(text: unknown): boolean {
  try {
    return typeof text === 'string' && Array.isArray(parseExact(text));
  } catch {
    return false;
  }
}

function isTreeState(value: unknown): value is TreeState {
  return (
    isObject(value) &&
    Array.isArray(value.frames) &&
    value.frames.every(
      (frame) =>
        isObject(frame) &&
        Number.isSafeInteger(frame.depth) &&
        Array.isArray(frame.items) &&
        (frame.exact === undefined || isExactList(frame.exact)) &&
        (frame.cursor === undefined || frame.cursor === null || typeof frame.cursor === 'string') &&
        (frame.taken === undefined || typeof frame.taken === 'boolean'),
    )
  );
}

/**
 * The cursor of a `{ has_more, cursor }` (or `next_cursor`) object unless its flag says no; without
 * a flag, a cursor alone is followed (trimmed bodies). A `has_more: true` without a cursor, a
 * cursor that is no cursor (an object, an array), or a `more` that is no object but says something
 * (a number, text, a list), cannot be followed and is reported.
 */
function continuation(more: unknown): string | { ignored: string } | undefined {
  if (!isObject(more)) return isNothing(more) ? undefined : { ignored: described('more', more) };
  const flag = flagOf(more.has_more);
  if (flag === false) return undefined;
  const cursor = more.cursor ?? more.next_cursor;
  if (isCursor(cursor)) return String(cursor);
  if (isStrange(cursor)) return { ignored: described('more.cursor', cursor) };
  return flag === true ? { ignored: 'more.has_more = true without a cursor' } : undefined;
}
