/**
 * What an export walks: the client streams it was given, as one operation and its parameter sets.
 * The streams themselves are never iterated: each walk is opened afresh with the engine's options,
 * from its staged checkpoint, else from where the caller's stream starts (a stream of
 * `client.resume(checkpoint)` continues from that checkpoint), else from the beginning.
 */
import type { Checkpoint } from '../checkpoint.ts';
import { StreamUsedError } from '../errors.ts';
import type { OperationSpec } from '../operations/spec.ts';
import { walkName } from '../operations/walk-name.ts';
import type { HeldPages } from '../page-reader.ts';
import type { StreamOptions } from '../stream-options.ts';
import { WALK, type Walk, type WalkStream } from '../walk.ts';

export interface ExportWalks {
  op: OperationSpec;
  /** The parameter sets, each once (a repeat of an earlier one is walked once), in the order given. */
  params: Readonly<Record<string, string>>[];
  /** How many sources repeated an earlier parameter set. */
  repeats: number;
  /** The client's events (every stream of one export comes from one client). */
  events$: Walk['events$'];
  /** The client's key out of a text (`Walk.scrub`). */
  scrub: Walk['scrub'];
  /** Opens the walk of `params` from `start`. */
  open(params: Record<string, string>, start: Checkpoint | undefined, options: StreamOptions, held: HeldPages): WalkStream;
}

/**
 * Parameter sets of one operation, each already checked (`checkParams`, as `client.stream` checks
 * them) and each once (by `walkName`), with one stream of the client to open their walks by: what the
 * CLI hands the engine for an `--inputs` file, whose repeated lines it left out. A stream a line
 * would cost a kilobyte of garbage each, promoted before it dies (1M lines: over a gigabyte at the
 * peak); this costs the sets themselves, which are kept, not copied.
 */
export class ParamSets {
  constructor(
    /** A stream of the client, not iterated: its operation, events and key scrubbing are the walks'. */
    readonly stream: unknown,
    readonly sets: Iterable<Readonly<Record<string, string>>>,
  ) {}
}

/**
 * The walks of `source` (a client stream, an array or other iterable of streams of one operation,
 * or `ParamSets`), limited to `shard`'s share. A stream that was already iterated is refused
 * (`STREAM_USED`): the export would otherwise miss what its iteration took.
 */
export function walksOf(source: unknown, shard?: { index: number; count: number }): ExportWalks {
  if (source instanceof ParamSets) return walksOfSets(source, shard);
  const single = walkOf(source) !== undefined;
  const many = !single && (Array.isArray(source) || (typeof source === 'object' && source !== null && Symbol.iterator in source));
  // Each stream is looked at once and let go: a wide export keeps its first walk and the params of the others.
  const streams: Iterable<unknown> = many ? (source as Iterable<unknown>) : [source];
  let first: Walk | undefined;
  let count = 0;
  const seen = new Set<string>();
  const params: Record<string, string>[] = [];
  /** Where the streams of `client.resume(checkpoint)` start: a walk with nothing staged starts there. */
  const starts = new Map<string, Checkpoint>();
  for (const stream of streams) {
    const walk = checkedWalk(stream, many ? `source[${count}]` : 'source');
    count++;
    first ??= walk;
    if (walk.op.id !== first.op.id) throw new TypeError(`one export walks one operation: source holds ${first.op.id} and ${walk.op.id}`);
    if (walk.events$ !== first.events$) throw new TypeError('the streams of one export come from one client');
    const name = walkName(walk.params);
    if (seen.has(name)) continue;
    seen.add(name);
    if (shard !== undefined && shareOfName(name, shard.count) !== shard.index) continue;
    params.push({ ...walk.params });
    const start = startOf(stream);
    if (start !== undefined) starts.set(name, start);
  }
  if (first === undefined) throw new TypeError('source must be a client stream or a non-empty array of them');
  const opener = first;
  return {
    op: first.op,
    params,
    repeats: count - seen.size,
    events$: first.events$,
    scrub: first.scrub,
    open: (walkParams, start, options, held) => opener.openWith(walkParams, start ?? starts.get(walkName(walkParams)), options, held),
  };
}

/** The walks of `ParamSets`: no set is named twice over (a million names are 100 MB), only to find its share. */
function walksOfSets({ stream, sets }: ParamSets, shard: { index: number; count: number } | undefined): ExportWalks {
  const walk = checkedWalk(stream, 'source.stream');
  const params = shard === undefined ? [...sets] : [...sets].filter((set) => shareOfName(walkName(set), shard.count) === shard.index);
  if (params.length === 0 && shard === undefined) throw new TypeError('source.sets must hold at least one parameter set');
  return { op: walk.op, params, repeats: 0, events$: walk.events$, scrub: walk.scrub, open: (set, start, options, held) => walk.openWith(set, start, options, held) };
}

function checkedWalk(stream: unknown, what: string): Walk {
  const walk = walkOf(stream);
  if (walk === undefined) throw new TypeError(`${what} must be a stream from the client, e.g. client.forum.subforum({ … })`);
  if (walk.used) {
    throw new StreamUsedError(`${walk.op.id}: this stream was already iterated, so an export of it would miss what that took; call the operation again for a fresh stream`, {
      endpoint: walk.op.id,
    });
  }
  return walk;
}

function walkOf(stream: unknown): Walk | undefined {
  return (stream as Partial<Record<typeof WALK, Walk>> | null | undefined)?.[WALK];
}

/** Where a stream not yet iterated starts, when that is not the beginning (`client.resume(checkpoint)`). */
function startOf(stream: unknown): Checkpoint | undefined {
  const checkpoint = (stream as { checkpoint?: () => Checkpoint }).checkpoint?.();
  return checkpoint !== undefined && (checkpoint.pagesDone > 0 || checkpoint.skip > 0) ? checkpoint : undefined;
}

/** Which of `count` shares (1-based) a parameter set belongs to: by its hash, not its position. */
export function shareOf(params: Readonly<Record<string, string>>, count: number): number {
  return shareOfName(walkName(params), count);
}

function shareOfName(name: string, count: number): number {
  return (Number.parseInt(name.slice(0, 8), 16) % count) + 1;
}
