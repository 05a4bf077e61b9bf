import { describe, expect, it } from 'vitest';
import { expectFields, expectSometimesNull } from './field-types.ts';
import { fromKeyed, get, useSandboxes, walk, type Body } from './helpers.ts';
import { startSandbox } from '../../src/sandbox/index.ts';

const PROFILE = '/v1/scrape/shortvideo/profile';
const VIDEOS = '/v1/scrape/shortvideo/videos';
const POPULAR = '/v1/scrape/shortvideo/videos/popular';
const REPLIES = '/v1/scrape/shortvideo/comment-replies';
const VIDEO_URL = 'https://www.shortvideo.example/@creator/video/7301234567890123456';

const sandboxes = useSandboxes();

const videosWalk = {
  records: (body: Body) => fromKeyed(body.data.aweme_list),
  next: (body: Body, query: Record<string, string | number>) =>
    body.data.has_more === 1 ? { ...query, max_cursor: body.data.max_cursor } : undefined,
};
const popularWalk = {
  records: (body: Body) => fromKeyed(body.data.videos),
  next: (body: Body, query: Record<string, string | number>) =>
    body.data.pagination.has_more ? { ...query, page: body.data.pagination.page + 1 } : undefined,
};
const repliesWalk = {
  records: (body: Body) => fromKeyed(body.data.comments),
  next: (body: Body, query: Record<string, string | number>) =>
    body.data.has_more === 1 ? { ...query, cursor: body.data.cursor } : undefined,
};

const AVATAR = { uri: 'string', url_list: 'keyed', width: 'integer', height: 'integer', url_prefix: 'string|null' };

describe('shortvideo profile', () => {
  it('answers with the envelope and endpoint shortvideo/profile', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, PROFILE, { handle: 'creator' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, credits_used: 1, endpoint: 'shortvideo/profile', data: { success: true } });
  });

  it('gives the user every field the API reference lists, with its type', async () => {
    const { body } = await get(sandboxes.sandbox.url, PROFILE, { handle: 'creator' });
    const { user } = body.data;
    const strings = ['id', 'shortId', 'uniqueId', 'nickname', 'signature', 'secUid', 'roomId', 'recommendReason',
      'nowInvitationCardUrl', 'language', 'avatarLarger', 'avatarMedium', 'avatarThumb'];
    const booleans = ['verified', 'ftc', 'openFavorite', 'privateAccount', 'secret', 'isADVirtual', 'ttSeller',
      'isEmbedBanned', 'canExpPlaylist', 'suggestAccountBind'];
    const integers = ['relation', 'commentSetting', 'duetSetting', 'stitchSetting', 'downloadSetting', 'followingVisibility',
      'profileEmbedPermission', 'isOrganization', 'UserStoryStatus'];
    expectFields(user, {
      ...Object.fromEntries(strings.map((name) => [name, 'string'])),
      ...Object.fromEntries(booleans.map((name) => [name, 'boolean'])),
      ...Object.fromEntries(integers.map((name) => [name, 'integer'])),
      createTime: 'seconds',
      uniqueIdModifyTime: 'seconds',
      nickNameModifyTime: 'seconds',
      bioLink: 'object',
      commerceUserInfo: 'object',
      profileTab: 'object',
      eventList: 'object',
    });
    expectFields(user.bioLink, { link: 'string', risk: 'integer' });
    expectFields(user.commerceUserInfo, { commerceUser: 'boolean' });
    expectFields(user.profileTab, { showMusicTab: 'boolean', showQuestionTab: 'boolean', showPlayListTab: 'boolean' });
    expect(user.uniqueId).toBe('creator');
    expect(body.data.itemList).toEqual({});
  });

  it('gives integer stats and the same counts as exact strings in statsV2', async () => {
    const { body } = await get(sandboxes.sandbox.url, PROFILE, { handle: 'creator' });
    const names = ['followerCount', 'followingCount', 'heart', 'heartCount', 'videoCount', 'diggCount', 'friendCount'];
    expectFields(body.data.stats, Object.fromEntries(names.map((name) => [name, 'integer'])));
    expectFields(body.data.statsV2, Object.fromEntries(names.map((name) => [name, 'string'])));
    for (const name of names) {
      const exact = Number(body.data.statsV2[name]);
      expect(String(exact)).toBe(body.data.statsV2[name]);
      // Rounded, never more than 10% away from the exact count.
      expect(Math.abs(body.data.stats[name] - exact)).toBeLessThanOrEqual(exact * 0.1);
    }
  });

  it('refuses a missing handle without charging', async () => {
    await sandboxes.expectFreeRefusal(PROFILE, {}, { error: 'Missing required parameter: handle', endpoint: 'shortvideo/profile', credits_required: 1 });
  });
});

describe('shortvideo videos', () => {
  it('answers pages of 30 keyed videos with an integer max_cursor and has_more', async () => {
    const { body } = await get(sandboxes.sandbox.url, VIDEOS, { handle: 'creator-n75' });
    expect(body.endpoint).toBe('shortvideo/videos');
    expectFields(body.data, { max_cursor: 'millis', has_more: 'integer', status_code: 'integer', aweme_list: 'keyed' });
    expect(fromKeyed(body.data.aweme_list)).toHaveLength(30);
    expect(body.data.has_more).toBe(1);
  });

  it('sends music.id as a 19-digit JSON number with the digits of the id_str beside it', async () => {
    const service = await startSandbox({ port: 0, dialect: 'service' });
    try {
      for (const url of [sandboxes.sandbox.url, service.url]) {
        const { text } = await get(url, VIDEOS, { handle: 'creator-n40' });
        const pairs = [...text.matchAll(/"id":(-?\d+),"id_str":"(\d+)"/g)];
        expect(pairs).toHaveLength(30);
        for (const [, id, idStr] of pairs) {
          expect(id).toHaveLength(19);
          expect(id).toBe(idStr);
        }
      }
    } finally {
      await service.close();
    }
  });

  it('gives every video, author and avatar the fields the API reference lists', async () => {
    const { body } = await get(sandboxes.sandbox.url, VIDEOS, { handle: 'creator-n40' });
    const videos = fromKeyed(body.data.aweme_list);
    expectFields(videos, { aweme_id: 'string', desc: 'string', create_time: 'seconds', author: 'object', music: 'object' });
    const authors = videos.map((video) => video.author);
    expectFields(authors, {
      uid: 'string', short_id: 'string', nickname: 'string', signature: 'string', unique_id: 'string', sec_uid: 'string',
      follower_count: 'integer', following_count: 'integer', aweme_count: 'integer', total_favorited: 'integer',
      custom_verify: 'string', avatar_larger: 'object', avatar_thumb: 'object', avatar_medium: 'object',
      avatar_168x168: 'object', avatar_300x300: 'object',
    });
    for (const name of ['avatar_larger', 'avatar_thumb', 'avatar_medium', 'avatar_168x168', 'avatar_300x300']) {
      expectFields(authors.map((author) => author[name]), AVATAR);
    }
    expectFields(videos.map((video) => video.music), {
      id: 'number', id_str: 'string', title: 'string', author: 'string', album: 'string', cover_large: 'object', cover_medium: 'object',
    });
  });

  it('walks exactly the -n count with no video twice', async () => {
    const { records, pages } = await walk(sandboxes.sandbox.url, VIDEOS, { handle: 'creator-n95' }, videosWalk);
    expect(records).toHaveLength(95);
    expect(new Set(records.map((video) => video.aweme_id)).size).toBe(95);
    expect(pages).toBe(4);
  });

  it('sends a descending max_cursor', async () => {
    const first = await get(sandboxes.sandbox.url, VIDEOS, { handle: 'creator-n95' });
    const second = await get(sandboxes.sandbox.url, VIDEOS, { handle: 'creator-n95', max_cursor: first.body.data.max_cursor });
    expect(second.body.data.max_cursor).toBeLessThan(first.body.data.max_cursor);
  });

  it('repeats the last video of a page at the start of the next with the duplicate fault', async () => {
    const first = await get(sandboxes.duplicating.url, VIDEOS, { handle: 'creator-n95' });
    const second = await get(sandboxes.duplicating.url, VIDEOS, { handle: 'creator-n95', max_cursor: first.body.data.max_cursor });
    const last = fromKeyed(first.body.data.aweme_list).at(-1);
    expect(fromKeyed(second.body.data.aweme_list)[0].aweme_id).toBe(last.aweme_id);
  });

  it('walks 95 + 3 records with the duplicate fault, 95 of them distinct', async () => {
    const { records } = await walk(sandboxes.duplicating.url, VIDEOS, { handle: 'creator-n95' }, videosWalk);
    expect(records).toHaveLength(98);
    expect(new Set(records.map((video) => video.aweme_id)).size).toBe(95);
  });

  it('refuses a max_cursor it did not issue', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, VIDEOS, { handle: 'creator-n95', max_cursor: 12345 });
    expect(status).toBe(400);
    expect(body.error).toBe('Invalid cursor');
  });

  it('refuses a sort_by outside latest and popular', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, VIDEOS, { handle: 'creator', sort_by: 'oldest' });
    expect(status).toBe(400);
    expect(body.error).toBe('Invalid value for sort_by: oldest');
  });

  it('walks a million-video profile page by page without building it', async () => {
    const first = await get(sandboxes.sandbox.url, VIDEOS, { handle: 'big-n1000000' });
    expect(first.body.data.has_more).toBe(1);
    expect(fromKeyed(first.body.data.aweme_list)).toHaveLength(30);
  });
  it('keeps create_time a plausible Unix time on the last page of a million videos', async () => {
    const first = await get(sandboxes.sandbox.url, VIDEOS, { handle: 'big-n1000000' });
    // max_cursor steps down by 1,000 per video (docs/wire.md: a descending ms-like number).
    const lastPage = first.body.data.max_cursor + 30 * 1_000 - 999_990 * 1_000;
    const { status, body } = await get(sandboxes.sandbox.url, VIDEOS, { handle: 'big-n1000000', max_cursor: lastPage });
    expect(status).toBe(200);
    const videos = fromKeyed(body.data.aweme_list);
    expect(videos).toHaveLength(10);
    expect(body.data.has_more).toBe(0);
    expectFields(videos, { create_time: 'seconds' });
  });
});

describe('shortvideo popular videos', () => {
  it('answers pages of 20 with pagination has_more, limit, page and total_count', async () => {
    const { body } = await get(sandboxes.sandbox.url, POPULAR, { countryCode: 'GB', period: 30, orderBy: 'hot' });
    expect(body.endpoint).toBe('shortvideo/videos/popular');
    expectFields(body.data.pagination, { has_more: 'boolean', limit: 'integer', page: 'integer', total_count: 'integer' });
    expect(body.data.pagination).toMatchObject({ limit: 20, page: 1, has_more: true });
    expect(fromKeyed(body.data.videos)).toHaveLength(20);
  });

  it('gives every video the fields the API reference lists, with id equal to item_id', async () => {
    const { body } = await get(sandboxes.sandbox.url, POPULAR, { countryCode: 'JP' });
    const videos = fromKeyed(body.data.videos);
    expectFields(videos, {
      country_code: 'string', region: 'string', cover: 'string', duration: 'integer', id: 'string', item_id: 'string',
      item_url: 'string', title: 'string',
    });
    for (const video of videos) {
      expect(video.id).toBe(video.item_id);
      expect(video.country_code).toBe('JP');
      expect(video.region).toBe('Japan');
    }
  });

  it('walks every page to total_count with no video twice', async () => {
    const { records, last } = await walk(sandboxes.sandbox.url, POPULAR, { countryCode: 'DE' }, popularWalk);
    expect(records).toHaveLength(last.data.pagination.total_count);
    expect(new Set(records.map((video) => video.id)).size).toBe(records.length);
  });

  it('refuses a period other than 7 or 30, a country outside the 24 and a bad orderBy', async () => {
    expect((await get(sandboxes.sandbox.url, POPULAR, { period: 14 })).body.error).toBe('Invalid value for period: 14');
    expect((await get(sandboxes.sandbox.url, POPULAR, { countryCode: 'NL' })).body.error).toBe('Invalid value for countryCode: NL');
    expect((await get(sandboxes.sandbox.url, POPULAR, { orderBy: 'views' })).body.error).toBe('Invalid value for orderBy: views');
  });

  it('refuses page 0', async () => {
    const { status, body } = await get(sandboxes.sandbox.url, POPULAR, { page: 0 });
    expect(status).toBe(400);
    expect(body.error).toBe('Invalid value for page: 0');
  });
});

describe('shortvideo comment replies', () => {
  it('answers pages of 20 with the integer cursor, has_more, total and status fields', async () => {
    const { body } = await get(sandboxes.sandbox.url, REPLIES, { comment_id: '7300-n45', url: VIDEO_URL });
    expect(body.endpoint).toBe('shortvideo/comment-replies');
    expectFields(body.data, {
      comments: 'keyed', cursor: 'integer', has_more: 'integer', total: 'integer', status_code: 'integer',
      status_msg: 'string', extra: 'object', log_pb: 'object',
    });
    expect(body.data).toMatchObject({ cursor: 20, has_more: 1, total: 45 });
    expectFields(body.data.extra, { fatal_item_ids: 'null|array|keyed', logid: 'string', now: 'millis' });
    expectFields(body.data.log_pb, { impr_id: 'string' });
  });

  it('gives every reply the fields the API reference lists, with their types', async () => {
    const { records } = await walk(sandboxes.sandbox.url, REPLIES, { comment_id: '7300-n200', url: VIDEO_URL }, repliesWalk);
    const strings = ['aweme_id', 'cid', 'reply_id', 'reply_to_reply_id', 'comment_language', 'text'];
    const integers = ['digg_count', 'collect_stat', 'fold_status', 'status', 'stick_position', 'thread_id', 'trans_btn_style', 'user_digged'];
    const booleans = ['is_author_digged', 'is_comment_translatable', 'is_high_purchase_intent', 'no_show', 'thread_has_more', 'user_buried'];
    expectFields(records, {
      ...Object.fromEntries(strings.map((name) => [name, 'string'])),
      ...Object.fromEntries(integers.map((name) => [name, 'integer'])),
      ...Object.fromEntries(booleans.map((name) => [name, 'boolean'])),
      create_time: 'seconds',
      comment_post_item_ids: 'null|keyed',
      image_list: 'null|keyed',
      label_list: 'null|keyed',
      reply_comment: 'null|keyed',
      text_extra: 'object',
      share_info: 'object',
      user: 'object',
    });
    for (const name of ['comment_post_item_ids', 'image_list', 'label_list', 'reply_comment']) expectSometimesNull(records, name);
    expectFields(records.map((reply) => reply.share_info), { acl: 'object', desc: 'string', title: 'string', url: 'string' });
    expectFields(records.map((reply) => reply.share_info.acl), { code: 'integer', extra: 'string' });
    const users = records.map((reply) => reply.user);
    expectFields(users, {
      nickname: 'string', sec_uid: 'string', uid: 'string', unique_id: 'string', custom_verify: 'string',
      enterprise_verify_reason: 'string', predicted_age_group: 'string', avatar_thumb: 'object',
    });
    expectFields(users.map((user) => user.avatar_thumb), { uri: 'string', url_list: 'keyed', url_prefix: 'string|null' });
  });

  it('walks exactly the -n count of comment_id with no reply twice', async () => {
    const { records } = await walk(sandboxes.sandbox.url, REPLIES, { comment_id: '7300-n57', url: VIDEO_URL }, repliesWalk);
    expect(records).toHaveLength(57);
    expect(new Set(records.map((reply) => reply.cid)).size).toBe(57);
  });

  it('repeats the page boundary with the duplicate fault', async () => {
    const { records } = await walk(sandboxes.duplicating.url, REPLIES, { comment_id: '7300-n57', url: VIDEO_URL }, repliesWalk);
    expect(records).toHaveLength(59);
    expect(records[20].cid).toBe(records[19].cid);
  });

  it('refuses a missing comment id with the API reference message and endpoint comment_replies, free', async () => {
    await sandboxes.expectFreeRefusal(REPLIES, { url: VIDEO_URL }, { error: 'Shortvideo comment ID is required', endpoint: 'comment_replies', credits_required: 1 });
  });

  it('refuses a missing url', async () => {
    const { body } = await get(sandboxes.sandbox.url, REPLIES, { comment_id: '7300' });
    expect(body.error).toBe('Missing required parameter: url');
  });

  it('refuses a cursor that is not an offset of this comment', async () => {
    expect((await get(sandboxes.sandbox.url, REPLIES, { comment_id: '7300-n10', url: VIDEO_URL, cursor: 'abc' })).body.error).toBe('Invalid cursor');
    expect((await get(sandboxes.sandbox.url, REPLIES, { comment_id: '7300-n10', url: VIDEO_URL, cursor: 11 })).body.error).toBe('Invalid cursor');
  });
});
