/**
 * `--out -`: NDJSON on stdout as records arrive; nothing staged, nothing to resume. A reader that
 * closes the pipe (`| head`) took what it wanted: the export stops requesting and ends with exit
 * code 0. Credits are counted (and capped) like an export's, free attempts given back; records
 * whose key was already written are dropped unless `--keep-duplicates`.
 */
import { STREAM_CONTROL } from '../control.ts';
import { stringifyExact } from '../exact-json.ts';
import { duplicateKeys } from '../export/extract.ts';
import { AttemptLedger, WalkHalt } from '../export/ledger.ts';
import { freshState } from '../export/journal.ts';
import { counted } from '../export/progress.ts';
import { findOperation } from '../operations/table.ts';
import { mergeMap } from '../operators/index.ts';
import { connect } from './connection.ts';
import { repeatsNote, type ExportPlan } from './export-plan.ts';
import { EXIT, stopWith } from './failure.ts';
import { runController } from './run-controller.ts';
import { StdoutClosedError, writeStdout } from './stdout.ts';

export async function exportToStdout(plan: ExportPlan): Promise<number> {
  const { options } = plan;
  const op = findOperation(plan.opId)!;
  const connection = await connect({ sandbox: plan.sandbox, maxConcurrentRequests: Math.max(8, options.concurrency ?? 4, options.pageConcurrency ?? 0) });
  const { client } = connection;
  const state = freshState(op.id, plan.inputs);
  const halt = new WalkHalt();
  const ledger = new AttemptLedger(state, minimum(options.maxCredits, options.maxPages), () => Promise.resolve());
  const refunds = client.events$.subscribe((event) => {
    if ('endpoint' in event && event.endpoint === op.id) ledger.refund(event);
  });
  const seen = duplicateKeys(op, options);
  const run = runController();
  const { signal } = run.controller;
  let written = 0;
  let failure: unknown;
  try {
    const walk = (params: Record<string, string>) => {
      const stream = client.stream(plan.opId, params, { signal, concurrency: options.pageConcurrency, overfetch: options.overfetch, lookahead: 'eager' });
      stream[STREAM_CONTROL].addGate(halt);
      stream[STREAM_CONTROL].addGate(ledger);
      return stream;
    };
    let text = '';
    for await (const record of mergeMap(walk, { concurrency: options.concurrency ?? 4, signal })(plan.inputs)) {
      if (options.limit !== undefined && written >= options.limit) break;
      if (seen?.repeats(record) === true) continue;
      text += stringifyExact(record) + '\n';
      written++;
      if (text.length > 65_536) {
        await writeStdout(text);
        text = '';
      }
    }
    await writeStdout(text);
  } catch (error) {
    failure = error;
  } finally {
    refunds.unsubscribe();
    run.dispose();
    await connection.close();
  }
  const closed = failure instanceof StdoutClosedError && failure.code === 'EPIPE';
  if (failure !== undefined && !closed) stopWith(failure);
  const { pages } = client.stats;
  const where = closed ? 'stdout, until its reader closed it' : 'stdout';
  process.stderr.write(`wrote ${counted(written, 'record')} (${counted(pages, 'page')}, ${counted(state.run.credits, 'credit')}) to ${where}${repeatsNote(plan)}\n`);
  return EXIT.ok;
}

function minimum(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}
