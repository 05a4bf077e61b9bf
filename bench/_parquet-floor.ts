/**
 * The least the Parquet writer's thread could pay for bench/sinks.ts's generated posts: each record
 * shredded into the row group's columns (`RowGroupCells`, what `toParquet` fills) by a shredder
 * written by hand for this one shape: every field read by name once, its type checked, text checked
 * well-formed, no lookup of keys, no dispatch on kinds, no `_extra`. Encoding, compression and the
 * file are left out (`toParquet` does them on a worker thread, at the same time). What this takes,
 * with generating the records, against DuckDB's COPY is the best ratio a writer on one JS thread
 * could reach on this workload; `npm run bench -- sinks -- N --parquet` prints it as "shred floor".
 */
import type { RowGroupCells as Cells } from '../sinks/parquet-cells.ts';
import type { CellColumnType } from '../sinks/parquet-types.ts';

type Post = Record<string, unknown>;

const TEXT: CellColumnType = { physical: 'BYTE_ARRAY', repeated: false };
const INTEGER: CellColumnType = { physical: 'INT64', repeated: false };
const DOUBLE: CellColumnType = { physical: 'DOUBLE', repeated: false };
const BOOLEAN: CellColumnType = { physical: 'BOOLEAN', repeated: false };

/**
 * The nested layout's leaf columns for a post, in its order: id … permalink (text, `author` a
 * struct of three), score … created_utc (integers, `upvote_ratio` a double), created_at_iso (a
 * timestamp), three booleans, `media` (a struct), `awardings` (a list of structs), `tags` (a list
 * of text), `_extra`.
 */
const COLUMNS: CellColumnType[] = [
  ...Array<CellColumnType>(11).fill(TEXT),
  INTEGER,
  INTEGER,
  INTEGER,
  INTEGER,
  DOUBLE,
  INTEGER,
  INTEGER,
  BOOLEAN,
  BOOLEAN,
  BOOLEAN,
  TEXT,
  INTEGER,
  TEXT,
  { physical: 'BYTE_ARRAY', repeated: true },
  { physical: 'INT64', repeated: true },
  { physical: 'BYTE_ARRAY', repeated: true },
  TEXT,
];

/** A text leaf at definition level `defined` (null: one less). */
function text(cells: Cells, column: number, value: unknown, defined: number): void {
  if (value === null || value === undefined) cells.push(column, defined - 1, 0);
  else if (typeof value === 'string' && value.isWellFormed()) cells.push(column, defined, 0, value);
  else throw new TypeError(`column ${column}: not the text this shape has`);
}

/** A number or boolean leaf at definition level `defined` (null: one less). */
function scalar(cells: Cells, column: number, value: unknown, defined: number, type: 'number' | 'boolean'): void {
  if (value === null || value === undefined) cells.push(column, defined - 1, 0);
  else if (typeof value === type) cells.push(column, defined, 0, value as number | boolean);
  else throw new TypeError(`column ${column}: not the ${type} this shape has`);
}

function shred(post: Post, cells: Cells, timestampOf: (text: string) => number | undefined): void {
  cells.beginRow();
  text(cells, 0, post.id, 1);
  text(cells, 1, post.name, 1);
  text(cells, 2, post.title, 1);
  text(cells, 3, post.selftext, 1);
  const author = post.author as Post | null;
  if (author === null) for (let c = 4; c <= 6; c++) cells.push(c, 0, 0);
  else {
    text(cells, 4, author.name, 2);
    text(cells, 5, author.fullname, 2);
    text(cells, 6, author.flair, 2);
  }
  text(cells, 7, post.subforum, 1);
  text(cells, 8, post.subforum_id, 1);
  text(cells, 9, post.url, 1);
  text(cells, 10, post.permalink, 1);
  for (const [column, key] of [
    [11, 'score'],
    [12, 'ups'],
    [13, 'downs'],
    [14, 'num_comments'],
    [15, 'upvote_ratio'],
    [16, 'created_utc'],
  ] as const) {
    scalar(cells, column, post[key], 1, 'number');
  }
  cells.push(17, 1, 0, timestampOf(post.created_at_iso as string));
  scalar(cells, 18, post.is_video, 1, 'boolean');
  scalar(cells, 19, post.over_18, 1, 'boolean');
  scalar(cells, 20, post.stickied, 1, 'boolean');
  const media = post.media as Post | null;
  if (media === null) for (let c = 21; c <= 23; c++) cells.push(c, 0, 0);
  else {
    text(cells, 21, media.type, 2);
    scalar(cells, 22, media.duration, 2, 'number');
    text(cells, 23, media.url, 2);
  }
  const awardings = post.awardings as Post[];
  if (awardings.length === 0) {
    cells.push(24, 1, 0);
    cells.push(25, 1, 0);
  }
  for (let i = 0; i < awardings.length; i++) {
    cells.push(24, 4, i === 0 ? 0 : 1, awardings[i].name as string);
    cells.push(25, 4, i === 0 ? 0 : 1, awardings[i].count as number);
  }
  const tags = post.tags as string[];
  for (let i = 0; i < tags.length; i++) cells.push(26, 3, i === 0 ? 0 : 1, tags[i]);
  cells.push(27, 0, 0);
  cells.endRow();
}

/** Shreds every post of `posts` by hand into row groups of 10,000 (the writer's default), each emptied when full. */
export async function shredFloor(posts: Iterable<Post>): Promise<void> {
  // The built package's, as the other children of bench/sinks.ts use.
  const { RowGroupCells } = (await import(new URL('../dist/sinks/parquet-cells.js', import.meta.url).href)) as typeof import('../sinks/parquet-cells.ts');
  const { timestampOf } = (await import(new URL('../dist/src/column-kinds.js', import.meta.url).href)) as typeof import('../src/column-kinds.ts');
  const cells = new RowGroupCells(COLUMNS, 10_000);
  for (const post of posts) {
    shred(post, cells, timestampOf);
    if (cells.full) cells.recycle(cells.take());
  }
  cells.take();
}
