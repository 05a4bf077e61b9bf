import { describe, expect, it } from 'vitest';
import { findOperation } from '../../src/index.ts';
import { strategyFor } from '../../src/pagination/index.ts';

/** The strategy of an operation, driven by hand over bodies written here. */
function strategy(id: string) {
  const op = findOperation(id);
  if (op === undefined) throw new Error(id);
  return strategyFor(op);
}

describe('the cursor strategy', () => {
  const walk = strategy('forum/subforum');

  it('sends nothing on the first page and the cursor after it', () => {
    const start = walk.start({});
    expect(walk.query(start)).toEqual({});
    const { next } = walk.read({ success: true, data: { posts: { 0: {} }, after: 't3_x' } }, start);
    expect(next).not.toBeNull();
    expect(walk.query(next)).toEqual({ after: 't3_x' });
    expect(walk.spends(next)).toBe('t3_x');
  });

  it('stops on an absent cursor and on an empty page', () => {
    const start = walk.start({});
    expect(walk.read({ data: { posts: { 0: {} } } }, start).next).toBeNull();
    expect(walk.read({ data: { posts: {}, after: 't3_x' } }, start).next).toBeNull();
  });

  it('with a has_more flag stops when the flag says no, even with a cursor', () => {
    const videos = strategy('shortvideo/videos');
    const start = videos.start({});
    expect(videos.read({ data: { aweme_list: { 0: {} }, max_cursor: 17, has_more: 0 } }, start).next).toBeNull();
    const next = videos.read({ data: { aweme_list: { 0: {} }, max_cursor: 17, has_more: 1 } }, start).next;
    expect(videos.query(next)).toEqual({ max_cursor: '17' });
  });
});

describe('the cursor pair strategy', () => {
  const walk = strategy('socialnet/profile/reels');

  it('sends both values together, and stops when either is missing', () => {
    const start = walk.start({});
    const next = walk.read({ data: { reels: { 0: {} }, cursor: 'c', next_page_id: 'p' } }, start).next;
    expect(walk.query(next)).toEqual({ cursor: 'c', next_page_id: 'p' });
    expect(walk.read({ data: { reels: { 0: {} }, cursor: 'c' } }, start).next).toBeNull();
  });
});

describe('the page number strategy', () => {
  it('counts up while has_more says yes', () => {
    const walk = strategy('shortvideo/videos/popular');
    const start = walk.start({});
    expect(walk.query(start)).toEqual({ page: '1' });
    const next = walk.read({ data: { videos: { 0: {} }, pagination: { has_more: true } } }, start).next;
    expect(walk.query(next)).toEqual({ page: '2' });
    expect(walk.read({ data: { videos: { 0: {} }, pagination: { has_more: false } } }, start).next).toBeNull();
  });

  it('stops at page 11 for web search', () => {
    const walk = strategy('search/search');
    expect(walk.read({ data: { results: { 0: {} } } }, { page: 11 }).next).toBeNull();
    expect(walk.read({ data: { results: { 0: {} } } }, { page: 10 }).next).toEqual({ page: 11 });
    expect(walk.isState({ page: 12 })).toBe(false);
  });
});

describe('the timeline strategy', () => {
  const walk = strategy('microblog/comments');
  const post = (id: string) => ({
    entryId: `tweet-${id}`,
    content: { entryType: 'TimelineTimelineItem', itemContent: { tweet_results: { result: { rest_id: id } } } },
  });
  const cursor = { entryId: 'cursor-bottom-1', content: { entryType: 'TimelineTimelineCursor', value: 'c2', cursorType: 'Bottom' } };

  it('yields post results and skips cursor entries', () => {
    const body = { data: { cursor: { bottom: 'c2' }, result: { instructions: [{ entries: [post('1'), cursor, post('2')] }] } } };
    const { records, next } = walk.read(body, walk.start({}));
    expect(records).toEqual([{ rest_id: '1' }, { rest_id: '2' }]);
    expect(walk.query(next)).toEqual({ cursor: 'c2' });
  });

  it('tells posts without an entryId apart by a rest_id past 2^53 (a bigint), as its digits', () => {
    const bare = (id: bigint) => ({ content: { entryType: 'TimelineTimelineItem', itemContent: { tweet_results: { result: { rest_id: id } } } } });
    const body = { data: { cursor: { bottom: 'c2' }, result: { instructions: [{ entries: [bare(1152921504606846977n), bare(1152921504606846978n)] }] } } };
    const { records, next } = walk.read(body, walk.start({}));
    expect(records).toEqual([{ rest_id: 1152921504606846977n }, { rest_id: 1152921504606846978n }]);
    expect(walk.isState(JSON.parse(JSON.stringify(next)))).toBe(true);
  });

  it('stops after a page with no new post entries', () => {
    const first = walk.read({ data: { cursor: { bottom: 'c2' }, result: { instructions: [{ entries: [post('1')] }] } } }, walk.start({}));
    const repeat = walk.read({ data: { cursor: { bottom: 'c3' }, result: { instructions: [{ entries: [post('1'), cursor] }] } } }, first.next);
    expect(repeat.next).toBeNull();
    const empty = walk.read({ data: { cursor: { bottom: 'c3' }, result: { instructions: [{ entries: [cursor] }] } } }, first.next);
    expect(empty.next).toBeNull();
  });
});

describe('the comment tree strategy', () => {
  const walk = strategy('forum/post/comments');
  const comment = (name: string, parent: string, extra: object = {}, items: object = {}, more = { has_more: false, cursor: '' }) => ({
    name,
    parent_id: parent,
    replies: { items, more },
    ...extra,
  });

  it('flattens inline replies right after their parent and stops at a cursor in depth-first order', () => {
    const body = {
      data: {
        comments: {
          0: comment('t1_a', 't3_p', {}, { 0: comment('t1_a1', 't1_a') }, { has_more: true, cursor: 'more-of-a' }),
          1: comment('t1_b', 't3_p', { more: { has_more: true, cursor: 'after-b' } }),
        },
      },
    };
    const first = walk.read(body, walk.start({}));
    expect(first.records).toEqual([
      { name: 't1_a', parent_id: 't3_p', depth: 0 },
      { name: 't1_a1', parent_id: 't1_a', depth: 1 },
    ]);
    expect(walk.query(first.next)).toEqual({ cursor: 'more-of-a' });
    const second = walk.read({ data: { comments: { 0: comment('t1_a2', 't1_a') } } }, first.next);
    expect(second.records).toEqual([
      { name: 't1_a2', parent_id: 't1_a', depth: 1 },
      { name: 't1_b', parent_id: 't3_p', depth: 0 },
    ]);
    expect(walk.query(second.next)).toEqual({ cursor: 'after-b' });
    expect(walk.read({ data: { comments: {} } }, second.next).next).toBeNull();
  });

  it('reports a more or replies it cannot read (a number, text, a list) and follows nothing from it; "", null, false and 0 say nothing', () => {
    for (const odd of [1152921504606846977n, 'x', [{ has_more: true, cursor: 'c' }], true]) {
      const asMore = walk.read({ data: { comments: { 0: { ...comment('t1_a', 't3_p'), more: odd } } } }, walk.start({}));
      expect(asMore.records).toHaveLength(1);
      expect(asMore.next).toBeNull();
      expect(asMore.ignored).toMatch(/^more = /);
      const asReplies = walk.read({ data: { comments: { 0: { ...comment('t1_a', 't3_p'), replies: odd } } } }, walk.start({}));
      expect(asReplies.ignored).toMatch(/^replies = /);
    }
    for (const nothing of ['', null, false, 0]) {
      const read = walk.read({ data: { comments: { 0: { ...comment('t1_a', 't3_p'), more: nothing, replies: nothing } } } }, walk.start({}));
      expect([read.records.length, read.next, read.ignored]).toEqual([1, null, undefined]);
    }
  });

  it('never changes the state it was given', () => {
    const state = { frames: [{ depth: 0, items: [comment('t1_x', 't3_p')], cursor: 'c' }] };
    const before = JSON.stringify(state);
    walk.read({ data: { comments: { 0: comment('t1_y', 't3_p') } } }, state);
    expect(JSON.stringify(state)).toBe(before);
  });
});
