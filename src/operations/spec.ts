/**
 * The shape of one row of the operation table (`table.ts`). A row is plain data: what the
 * operation is called, which query parameters it takes, where its records live in a 200 body and
 * which named continuation strategy walks its pages. Nothing here knows HTTP.
 */

export type ParamType = 'string' | 'integer' | 'number' | 'boolean';

/**
 * One query parameter of an operation: its wire name, type, whether it is required, and the values
 * it allows.
 */
export interface ParamSpec {
  readonly type: ParamType;
  /** Must be supplied (a "one of" pair is declared in `oneOf` instead). */
  readonly required?: boolean;
  /** The only values the service accepts. */
  readonly values?: readonly (string | number)[];
  /** Inclusive bounds of an integer or number. */
  readonly min?: number;
  readonly max?: number;
  /** A regular expression (source text) the whole string value must match, and what it means. */
  readonly pattern?: { readonly source: string; readonly description: string };
}

/** When `param` has `equals`, `needs` must be supplied too (E17: `topic=political` needs `region`). */
export interface ParamDependency {
  readonly param: string;
  readonly equals: string | number | boolean;
  readonly needs: string;
}

/** Where the records of a 200 body live. Paths are dotted, from the top of the body. */
export type RecordsSpec =
  /** The value at `at` is the one record of the response. */
  | { readonly kind: 'one'; readonly at: string }
  /** The value at `at` is a collection (keyed object or array); each item is a record. */
  | { readonly kind: 'list'; readonly at: string }
  /** Microblog timeline: post results inside `instructions[].entries[]`, cursor entries skipped. */
  | { readonly kind: 'timeline'; readonly at: string }
  /** Forum comment tree, flattened depth first (each record gets `depth`). */
  | { readonly kind: 'tree'; readonly at: string };

/** The continuation strategies; each is one module under `src/pagination/`. */
export type ContinuationSpec =
  /** One request, one page. */
  | { readonly kind: 'none' }
  /** Send `param` = value at `from`, while it is present (and, with `while`, while that flag is truthy). */
  | { readonly kind: 'cursor'; readonly from: string; readonly param: string; readonly while?: string }
  /** Send every value of `from` as the matching `params`, always together, while all are present. */
  | { readonly kind: 'cursorPair'; readonly from: readonly [string, string]; readonly params: readonly [string, string] }
  /**
   * Send `param` + 1 while `while` is truthy (if given), up to `max`, stopping at an empty page. A page
   * that gives the walk's `total` records and their `perPage` (paths) tells how many pages there are.
   */
  | { readonly kind: 'page'; readonly param: string; readonly while?: string; readonly max?: number; readonly total?: string; readonly perPage?: string }
  /** Send `param` = value at `from` while the page gave entries the page before did not. */
  | { readonly kind: 'timeline'; readonly from: string; readonly param: string }
  /** Fetch every `more.cursor` / `replies.more.cursor` whose `has_more` is true, each once, as `param`. */
  | { readonly kind: 'tree'; readonly param: string };

/** How a record writes its own time: Unix seconds, Unix milliseconds or ISO 8601 text. */
export type TimeUnit = 's' | 'ms' | 'iso';

/** The field of a record holding its own creation time (dotted, from the record), and its unit. */
export interface RecordTimeSpec {
  readonly at: string;
  readonly unit: TimeUnit;
}

/**
 * The parameter values that make a walk list its records newest first (from the API reference and docs/wire.md):
 * a dataset stops such a walk at its high-water mark. `byDefault`: newest first when `param` is absent.
 */
export interface NewestFirstSpec {
  readonly param: string;
  readonly values: readonly string[];
  readonly byDefault: boolean;
}

/**
 * How one operation is called and walked: its path, parameters, where its records are, its
 * continuation rule, its record key and time. The operation table is made of these.
 */
export interface OperationSpec {
  /** The path after `/v1/scrape/`, e.g. `forum/subforum`: the operation's id everywhere. */
  readonly id: string;
  /** `client.<group>.<method>`. */
  readonly group: string;
  readonly method: string;
  /** The path of the request, from the host: `/v1/scrape/<id>`. */
  readonly path: string;
  readonly params: { readonly [name: string]: ParamSpec };
  /** Pairs of parameters of which at least one must be supplied. */
  readonly oneOf?: readonly (readonly [string, string])[];
  readonly dependencies?: readonly ParamDependency[];
  readonly records: RecordsSpec;
  readonly continuation: ContinuationSpec;
  /**
   * Dotted path, inside a record, of the value that identifies it: a dataset merges rows by it.
   * Null when records carry no identifier of their own; a dataset then keys them by `stableKey`
   * (a transcript's segments, a single-record answer).
   */
  readonly key: string | null;
  /**
   * The record's own creation time: a dataset partitions by its date and keeps its high-water mark.
   * Null when records carry none; a dataset files them in Hive's default partition (`_date` NULL).
   */
  readonly time: RecordTimeSpec | null;
  /** Present when some parameter values make the walk newest first. */
  readonly newestFirst?: NewestFirstSpec;
  /**
   * What identifies a record that lacks a usable `key` (the table names none, or the record's value
   * is missing, null or an object): a dataset keys it by these, or sets it aside. Never counters.
   */
  readonly stableKey?: StableKeySpec;
  /**
   * Fields (dotted paths) the service sends as integers past 2^53, which come as `bigint`s (README
   * "Big integers"); the record type says `number | bigint` there. A dataset that recorded one as
   * double is refused before any request.
   */
  readonly bigIntegers?: readonly string[];
}

/**
 * A key made of values that do not change between runs: the walk's `params` that name the resource
 * (an absent one reads as empty) and the first set of `fields` (dotted, from the record) whose values
 * are all present: a url or permalink, else author and time. Likes, views and scores never belong here.
 */
export interface StableKeySpec {
  readonly params?: readonly string[];
  readonly fields: readonly (readonly string[])[];
}
