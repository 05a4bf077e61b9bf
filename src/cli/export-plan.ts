/**
 * What `socialstream export` was asked to do: its words and flags turned into a checked plan. Every
 * parameter set is validated here, before any connection is made.
 */
import { readFile } from 'node:fs/promises';
import { checkParams } from '../operations/params.ts';
import { findOperation, type OperationId } from '../operations/table.ts';
import { describeFlags, parseInputLine, UsageError, type FlagSpec } from './args.ts';
import { formatOf, type OutputFormat } from './output.ts';

export const EXPORT_FLAGS: FlagSpec[] = [
  { name: 'out', kind: 'string', value: 'FILE', help: 'output file: .ndjson/.jsonl, .csv or .parquet; - for NDJSON on stdout' },
  { name: 'limit', kind: 'integer', value: 'N', help: 'stop after N records in all' },
  { name: 'max-pages', kind: 'integer', value: 'N', help: 'fetch at most N pages per parameter set' },
  { name: 'max-credits', kind: 'integer', value: 'N', help: 'spend at most N credits in all (every attempt counts, over every --resume)' },
  { name: 'dedupe', kind: 'string', value: 'FIELD', help: 'drop records whose FIELD (a dotted path, e.g. id) was already written' },
  { name: 'resume', kind: 'boolean', help: 'continue an interrupted export from its checkpoint (FILE.checkpoint.json)' },
  { name: 'inputs', kind: 'string', value: 'FILE', help: 'one parameter set per line (key=value ... or a JSON object); # comments' },
  { name: 'concurrency', kind: 'integer', value: 'N', help: 'walks in flight at once with --inputs (default 4)' },
  { name: 'sandbox', kind: 'boolean', help: 'use a built-in sandbox (synthetic data, no key, no credits)' },
  { name: 'help', kind: 'boolean', help: 'show this help' },
];

export const EXPORT_HELP = `usage: socialstream export <op-id> key=value ... --out FILE [options]

  <op-id> is an operation path from 'socialstream ops', e.g. forum/subforum.
  key=value pairs are its parameters; with --inputs they apply to every line.

${describeFlags(EXPORT_FLAGS)}

exit codes: 0 done (also when --limit, --max-pages or --max-credits ended it: --resume with a higher
one continues), 2 usage, invalid parameters, an output in use or state that does not verify,
3 key refused, 4 out of credits, 5 service failure after retries, 6 disk full,
129/130/143 stopped by SIGHUP/SIGINT/SIGTERM.
After 3, 4, 5, 6 and 129-143 the output so far is a valid file and --resume continues where it stopped.
`;

export interface ExportPlan {
  opId: OperationId;
  inputs: Record<string, string>[];
  /** The `--inputs` file, when there is one, and the line of each parameter set in it. */
  inputsFile: string | undefined;
  lines: number[];
  out: string;
  format: OutputFormat;
  limit: number | undefined;
  maxPages: number | undefined;
  maxCredits: number | undefined;
  dedupe: string | undefined;
  resume: boolean;
  concurrency: number;
  sandbox: boolean;
}

export async function planExport(
  positionals: string[],
  params: Record<string, string>,
  flags: Record<string, string | number | boolean>,
): Promise<ExportPlan> {
  const [opId, ...extra] = positionals;
  if (opId === undefined) throw new UsageError('export needs an operation id, e.g. forum/subforum (see socialstream ops)');
  if (extra.length > 0) throw new UsageError(`unexpected word "${extra[0]}": parameters are key=value`);
  const op = findOperation(opId);
  if (!op) throw new UsageError(`unknown operation "${opId}" (see socialstream ops)`);
  const out = flags.out;
  if (typeof out !== 'string' || out === '') throw new UsageError('export needs --out FILE');
  const lines = typeof flags.inputs === 'string' ? await readInputs(flags.inputs, params) : [{ params, line: 0 }];
  // Every parameter set is checked before the first request, so a typo on line 90 costs nothing.
  for (const { params: set, line } of lines) {
    try {
      checkParams(op, set);
    } catch (error) {
      if (line > 0 && error instanceof Error) error.message = `${flags.inputs} line ${line}: ${error.message}`;
      throw error;
    }
  }
  const inputs = lines.map((input) => input.params);
  const plan: ExportPlan = {
    opId: op.id as OperationId,
    inputs,
    inputsFile: typeof flags.inputs === 'string' ? flags.inputs : undefined,
    lines: lines.map((input) => input.line),
    out,
    format: out === '-' ? 'ndjson' : formatOf(out),
    limit: optionalNumber(flags.limit),
    maxPages: optionalNumber(flags['max-pages']),
    maxCredits: optionalNumber(flags['max-credits']),
    dedupe: typeof flags.dedupe === 'string' ? flags.dedupe : undefined,
    resume: flags.resume === true,
    concurrency: optionalNumber(flags.concurrency) ?? 4,
    sandbox: flags.sandbox === true,
  };
  if (plan.concurrency < 1) throw new UsageError('--concurrency must be at least 1');
  if (plan.out === '-' && plan.resume) throw new UsageError('--resume needs a file: with --out - there is no checkpoint');
  return plan;
}

function optionalNumber(value: string | number | boolean | undefined): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

/** The parameter sets of an `--inputs` file, each merged over the command line's, with its line number. */
async function readInputs(path: string, common: Record<string, string>): Promise<{ params: Record<string, string>; line: number }[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new UsageError(`cannot read the inputs file ${path}`);
  }
  const sets: { params: Record<string, string>; line: number }[] = [];
  text.split(/\r?\n/).forEach((text, index) => {
    const params = parseInputLine(text, index + 1);
    if (params) sets.push({ params: { ...common, ...params }, line: index + 1 });
  });
  if (sets.length === 0) throw new UsageError(`the inputs file ${path} holds no parameter sets`);
  return sets;
}
