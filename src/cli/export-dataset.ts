/**
 * `socialstream export <op-id> … --dataset DIR`: a run into a growing dataset (DESIGN "Datasets",
 * `sinks/dataset.ts`). Every walk's pages are staged in the dataset as they finish, with the walk's
 * checkpoint, and a walk requests its next page only once the page before is staged; the dataset is
 * published once, at the end. A run stopped early (402, Ctrl-C, upstream failure, kill -9) publishes
 * nothing: the dataset stays as it was, and `--resume` continues every walk from its last staged
 * page, buying no finished page again.
 *
 * `--shard K/N` runs the K-th of N shares of the parameter sets: a set belongs to the share its
 * hash picks, so shares stay put when lines of the inputs file move. Each share writes its own part
 * files, state and staging, so N processes can fill one dataset; caps and `--resume` apply per share.
 */
import { findOperation, OPERATIONS, type OperationId } from '../operations/table.ts';
import { STREAM_CONTROL, type Client, type RecordStream } from '../index.ts';
import { creditCap, mergeMap } from '../operators/index.ts';
import { DatasetRun, describeDrift, type DatasetSummary, type DatasetWalk, type SchemaPolicy } from '../../sinks/dataset.ts';
import { walkName } from '../../sinks/dataset-store.ts';
import { SchemaDriftError } from '../errors.ts';
import { didYouMean, UsageError, type ParsedArgs } from './args.ts';
import { connect } from './connection.ts';
import { parameterSets } from './export-plan.ts';
import { EXIT, exitCodeOf, isResumable, stopWith } from './failure.ts';
import { counted } from './progress.ts';
import { runController } from './run-controller.ts';
import { drainPages } from './drain-pages.ts';
import { pageBatches, WalkHalt, type PageBatch } from './page-batches.ts';

interface DatasetPlan {
  opId: OperationId;
  dir: string;
  inputs: Record<string, string>[];
  schema: SchemaPolicy;
  shard: { index: number; count: number } | undefined;
  maxPages: number | undefined;
  maxCredits: number | undefined;
  resume: boolean;
  concurrency: number;
  sandbox: boolean;
}

/** The flags an export into a file reads that have no meaning here, and why: refused rather than ignored. */
const FILE_ONLY_FLAGS: ReadonlyArray<readonly [string, string]> = [
  ['out', 'rows merge by the record key'],
  ['dedupe', 'rows merge by the record key'],
  ['limit', 'rows merge by the record key'],
  ['page-concurrency', 'a dataset walk buys its pages one at a time, to stop at the first page it already has'],
  ['overfetch', 'a dataset walk buys its pages one at a time, to stop at the first page it already has'],
  ['csv-escape-formulae', 'dataset parts are Parquet'],
];

async function planDataset({ positionals, params, flags }: ParsedArgs): Promise<DatasetPlan> {
  const [opId, ...extra] = positionals;
  if (opId === undefined) throw new UsageError('export needs an operation id, e.g. forum/subforum (see socialstream ops)');
  if (extra.length > 0) throw new UsageError(`unexpected word "${extra[0]}": parameters are key=value`);
  const op = findOperation(opId);
  if (!op) throw new UsageError(`unknown operation "${opId}"${didYouMean(opId, OPERATIONS.map((known) => known.id)) || ' (see socialstream ops)'}`);
  for (const [name, why] of FILE_ONLY_FLAGS) {
    if (flags[name] !== undefined) throw new UsageError(`--${name} does not go with --dataset (${why})`);
  }
  const schema = flags.schema ?? 'evolve';
  if (schema !== 'evolve' && schema !== 'freeze') throw new UsageError(`--schema must be evolve or freeze, got "${String(schema)}"`);
  const shard = typeof flags.shard === 'string' ? parseShard(flags.shard) : undefined;
  if (shard && typeof flags.inputs !== 'string') throw new UsageError('--shard K/N shares the lines of an --inputs file');
  const inputs = (await parameterSets(op, params, flags.inputs)).inputs.filter((set) => shard === undefined || shareOf(set, shard.count) === shard.index);
  const concurrency = typeof flags.concurrency === 'number' ? flags.concurrency : 4;
  if (concurrency < 1) throw new UsageError('--concurrency must be at least 1');
  return {
    opId: op.id as OperationId,
    dir: String(flags.dataset),
    inputs,
    schema,
    shard,
    maxPages: typeof flags['max-pages'] === 'number' ? flags['max-pages'] : undefined,
    maxCredits: typeof flags['max-credits'] === 'number' ? flags['max-credits'] : undefined,
    resume: flags.resume === true,
    concurrency,
    sandbox: flags.sandbox === true,
  };
}

function parseShard(text: string): { index: number; count: number } {
  const match = /^(\d+)\/(\d+)$/.exec(text);
  const index = Number(match?.[1]);
  const count = Number(match?.[2]);
  if (!match || count < 1 || index < 1 || index > count) throw new UsageError(`--shard must be K/N with 1 ≤ K ≤ N, got "${text}"`);
  return { index, count };
}

/** Which of `count` shares (1-based) a parameter set belongs to: by its hash, not its line. */
export function shareOf(params: Readonly<Record<string, string>>, count: number): number {
  return (Number.parseInt(walkName(params).slice(0, 8), 16) % count) + 1;
}

export async function runDatasetExport(args: ParsedArgs): Promise<number> {
  const plan = await planDataset(args);
  const run = await DatasetRun.open(plan.dir, { operation: plan.opId, schema: plan.schema, shard: plan.shard });
  if (run.interrupted && !plan.resume) {
    throw new UsageError(
      `an interrupted run left pages staged in ${run.paths.staging}: add --resume to finish it without buying them again, or delete that folder to start over`,
    );
  }
  if (run.interrupted) {
    const staged = new Set(plan.inputs.map(walkName));
    const other = [...run.stagedWalks()].find((params) => !staged.has(walkName(params)));
    if (other) throw new UsageError(`the staged run in ${run.paths.staging} has other parameter sets; run that command with --resume, or delete the folder`);
  }
  const walks = plan.inputs.map((params) => run.walk(params));
  const connection = await connect({ sandbox: plan.sandbox, maxConcurrentRequests: Math.max(8, plan.concurrency) });
  let failure: unknown;
  try {
    failure = await stageWalks(plan, walks, connection.client);
  } finally {
    await Promise.all(walks.map((walk) => walk.close()));
    await connection.close();
  }
  const { pages, credits } = connection.client.stats;
  if (failure instanceof SchemaDriftError) {
    await run.abandon(failure);
    throw failure;
  }
  if (failure !== undefined) {
    if (!isResumable(exitCodeOf(failure))) stopWith(failure);
    process.stderr.write(`stopped early after ${counted(pages, 'page')} (${counted(credits, 'credit')}); the dataset is unchanged and the pages are staged\n`);
    stopWith(failure, 'Run the same command with --resume to continue without buying the staged pages again.');
  }
  const summary = await run.publish();
  process.stderr.write(describeSummary(summary, pages, credits) + '\n');
  return EXIT.ok;
}

/** Walks every unfinished parameter set, staging each page before its walk may buy the next. Returns what ended the run early. */
async function stageWalks(plan: DatasetPlan, walks: DatasetWalk[], client: Client): Promise<unknown> {
  const run = runController();
  const { controller } = run;
  const { signal } = controller;
  const halt = new WalkHalt();
  /** Walks that reached the high-water mark: their streams request nothing more. */
  const stopped = new Set<number>();
  const walkPages = (index: number): AsyncIterable<PageBatch> => {
    const walk = walks[index];
    // `--max-pages` counts every run's pages of a walk, as it does for a file export.
    const maxPages = plan.maxPages === undefined ? undefined : Math.max(0, plan.maxPages - (walk.checkpoint?.pagesDone ?? 0));
    const options = { maxPages, signal };
    const stream: RecordStream<unknown> = walk.checkpoint ? client.resume(walk.checkpoint, options) : client.stream(plan.opId, walk.params, options);
    stream[STREAM_CONTROL].addGate({ acquire: () => Promise.resolve(!stopped.has(index)) });
    return pageBatches(stream, index, halt);
  };
  const pending = walks.flatMap((walk, index) => (walk.done ? [] : [index]));
  const merged = mergeMap(walkPages, { concurrency: plan.concurrency, signal })(pending);
  const pages = plan.maxCredits === undefined ? merged : creditCap<PageBatch>(plan.maxCredits, { onCap: 'stop' })(merged);
  try {
    return await drainPages(pages, client, halt, controller, async (page) => {
      const next = await walks[page.walk].addPage(page.records, page.checkpoint, page.last);
      if (next === 'stop') stopped.add(page.walk);
      return 'more';
    });
  } finally {
    run.dispose();
  }
}

function describeSummary(summary: DatasetSummary, pages: number, credits: number): string {
  const atMark = summary.walks.filter((walk) => walk.stoppedAtMark).length;
  const incomplete = summary.walks.filter((walk) => !walk.complete).length;
  return [
    `dataset ${summary.dir} (${summary.operation}, ${summary.writer}): ${counted(summary.records, 'record')} from ${counted(pages, 'page')} (${counted(credits, 'credit')}) this run`,
    `  ${counted(summary.added, 'new row')}, ${summary.updated} updated, ${counted(summary.partitions.length, 'partition')} rewritten`,
    `  ${atMark} of ${counted(summary.walks.length, 'walk')} stopped at the high-water mark${incomplete > 0 ? `; ${incomplete} ended early (cap or --max-pages): their marks did not move` : ''}`,
    `  ${describeDrift(summary.drift)}`,
  ].join('\n');
}
