/**
 * What an export walks: the client streams it was given, as one operation and its parameter sets.
 * The streams themselves are never iterated: each walk is opened afresh (or from its staged
 * checkpoint) with the engine's options, so a resume continues where the staging says, whatever the
 * caller's stream was set to.
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
  params: Record<string, string>[];
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
 * The walks of `source` (a client stream, or an array of streams of one operation), limited to
 * `shard`'s share. A stream that was already iterated is refused (`STREAM_USED`): the export would
 * otherwise miss what its iteration took.
 */
export function walksOf(source: unknown, shard?: { index: number; count: number }): ExportWalks {
  const streams = Array.isArray(source) ? (source as unknown[]) : [source];
  if (streams.length === 0) throw new TypeError('source must be a client stream or a non-empty array of them');
  const walks = streams.map((stream, index): Walk => {
    const walk = (stream as Partial<Record<typeof WALK, Walk>> | null | undefined)?.[WALK];
    if (walk === undefined) {
      throw new TypeError(`source${Array.isArray(source) ? `[${index}]` : ''} must be a stream from the client, e.g. client.forum.subforum({ … })`);
    }
    if (walk.used) {
      throw new StreamUsedError(`${walk.op.id}: this stream was already iterated, so an export of it would miss what that took; call the operation again for a fresh stream`, {
        endpoint: walk.op.id,
      });
    }
    return walk;
  });
  const [first] = walks;
  const other = walks.find((walk) => walk.op.id !== first.op.id);
  if (other !== undefined) throw new TypeError(`one export walks one operation: source holds ${first.op.id} and ${other.op.id}`);
  if (walks.some((walk) => walk.events$ !== first.events$)) throw new TypeError('the streams of one export come from one client');
  const byName = new Map<string, Walk>();
  for (const walk of walks) {
    const name = walkName(walk.params);
    if (!byName.has(name)) byName.set(name, walk);
  }
  const kept = [...byName.entries()].filter(([name]) => shard === undefined || shareOfName(name, shard.count) === shard.index);
  return {
    op: first.op,
    params: kept.map(([, walk]) => ({ ...walk.params })),
    repeats: walks.length - byName.size,
    events$: first.events$,
    scrub: first.scrub,
    open: (params, start, options, held) => (byName.get(walkName(params)) ?? first).open(start, options, held),
  };
}

/** Which of `count` shares (1-based) a parameter set belongs to: by its hash, not its position. */
export function shareOf(params: Readonly<Record<string, string>>, count: number): number {
  return shareOfName(walkName(params), count);
}

function shareOfName(name: string, count: number): number {
  return (Number.parseInt(name.slice(0, 8), 16) % count) + 1;
}
