/**
 * What an export remembers between runs, in `<out>.checkpoint.json` beside the output: which walks
 * there are, where each one stands (the client's own checkpoint of its last finished page), how much
 * of the spool is vouched for, and the running totals. It holds no key and no service address.
 */
import type { Checkpoint } from '../index.ts';
import { UsageError } from './args.ts';
import { readJsonFile, writeJsonAtomic } from './durable.ts';

export interface WalkState {
  params: Record<string, string>;
  /** The walk has ended by its own continuation rule: nothing left to fetch. */
  done: boolean;
  /** The client checkpoint after the walk's last finished page, once it has one. */
  checkpoint?: Checkpoint;
}

export interface ExportState {
  version: 1;
  op: string;
  out: string;
  walks: WalkState[];
  /** Spool bytes that hold exactly the records of the finished pages above. */
  spoolBytes: number;
  records: number;
  /** Pages read, over every run (a page read twice after a crash counts twice). */
  pages: number;
  /** Request attempts that could have been charged, over every run of this export. */
  credits: number;
  /** Every page is in the spool; only writing the output from it is left. */
  finished?: boolean;
}

export function freshState(op: string, out: string, inputs: Record<string, string>[]): ExportState {
  return {
    version: 1,
    op,
    out,
    walks: inputs.map((params) => ({ params, done: false })),
    spoolBytes: 0,
    records: 0,
    pages: 0,
    credits: 0,
  };
}

export async function loadState(path: string): Promise<ExportState | undefined> {
  let value: unknown;
  try {
    value = await readJsonFile(path);
  } catch {
    throw new UsageError(`the checkpoint ${path} is not valid JSON; delete it to start over`);
  }
  if (value === undefined) return undefined;
  const state = value as Partial<ExportState>;
  if (state.version !== 1 || typeof state.op !== 'string' || !Array.isArray(state.walks) || typeof state.spoolBytes !== 'number') {
    throw new UsageError(`the checkpoint ${path} is not an export checkpoint of this version; delete it to start over`);
  }
  return state as ExportState;
}

/** A checkpoint may only continue the export that wrote it: same operation, same parameter sets. */
export function assertSameExport(state: ExportState, op: string, inputs: Record<string, string>[], path: string): void {
  const before = JSON.stringify(state.walks.map((walk) => walk.params));
  const now = JSON.stringify(inputs);
  if (state.op !== op || before !== now) {
    throw new UsageError(
      `the checkpoint ${path} belongs to another export (${state.op} with ${state.walks.length} parameter set(s)); ` +
        `run that command with --resume, or delete the checkpoint to start this one`,
    );
  }
}

export function saveState(path: string, state: ExportState): Promise<void> {
  return writeJsonAtomic(path, state);
}
