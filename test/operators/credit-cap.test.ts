import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreditCapError, InsufficientCreditsError } from '../../src/errors.ts';
import { CreditBudgetGate } from '../../src/gates.ts';
import { creditCap, map, mergeMap, pipe } from '../../src/operators/index.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { clientOf, creditsSpent, seededRandom } from './live.ts';
import { collect, controlled, numbers, RecordingControl } from './sources.ts';

describe('creditCap without a server', () => {
  it('attaches a CreditBudgetGate of max credits to the source control, through reshaping operators', () => {
    const control = new RecordingControl();
    pipe(controlled(numbers(1), control), map((n) => n), creditCap(12));
    expect(control.gates).toHaveLength(1);
    expect((control.gates[0] as CreditBudgetGate).credits).toBe(12);
  });

  it('ends normally with onCap throw when no attempt was refused', async () => {
    const control = new RecordingControl();
    expect(await collect(pipe(controlled(numbers(3), control), creditCap(5, { onCap: 'throw' })))).toEqual([0, 1, 2]);
  });

  it('refuses a source without a control, rather than capping nothing', () => {
    expect(() => pipe(numbers(3), creditCap(5))).toThrow(/creditCap: the source makes no requests it could cap/);
  });

  it.each([-1, 2.5, Number.NaN])('refuses max = %s with a TypeError', (max) => {
    expect(() => creditCap(max)).toThrow(/creditCap: max must be an integer ≥ 0/);
  });

  it('refuses an unknown onCap with a TypeError', () => {
    expect(() => creditCap(5, { onCap: 'pause' as never })).toThrow(/onCap must be 'stop' or 'throw', got "pause"/);
  });
});

const TRIALS = 100;
const START = 1_000;
/** With `trim` a subforum page holds 25 posts; 200 posts make 8 pages, 10 inputs make 80 pages. */
const PAGE = 25;
const inputsFor = (trial: number | string) => Array.from({ length: 10 }, (_, j) => `cap-${trial}-${j}-n200`);

describe('creditCap against the sandbox', () => {
  let faulty: Sandbox;
  let clean: Sandbox;
  beforeAll(async () => {
    const accounts = Array.from({ length: TRIALS }, (_, i) => ({ apiKey: `sk_live_cap_${i}`, credits: START }));
    faulty = await startSandbox({ port: 0, accounts, faults: { rate: 0.2 }, seed: 'credit-cap' });
    clean = await startSandbox({ port: 0, accounts: accounts.slice(0, 10) });
  });
  afterAll(async () => {
    await Promise.all([faulty?.close(), clean?.close()]);
  });

  it('never lets a cap of N spend credit N+1 over 100 random caps, under concurrency 10 with retried faults', async () => {
    const random = seededRandom(4);
    const trials = Array.from({ length: TRIALS }, (_, trial) => ({ trial, cap: Math.floor(random() * 60) }));
    const runTrial = async ({ trial, cap }: { trial: number; cap: number }) => {
      const key = `sk_live_cap_${trial}`;
      const client = clientOf(faulty, key);
      const stream = pipe(
        inputsFor(trial),
        mergeMap((subforum) => client.forum.subforum({ subforum, trim: true }), { concurrency: 10 }),
        creditCap(cap),
      );
      const records = (await collect(stream)).length;
      return { trial, cap, spent: creditsSpent(faulty, key, START), records, retries: client.stats.retries };
    };
    // Ten trials at a time (a hundred walks in flight): busy enough to interleave, light enough for a shared CI machine.
    const outcomes = [];
    for (let first = 0; first < TRIALS; first += 10) outcomes.push(...(await Promise.all(trials.slice(first, first + 10).map(runTrial))));
    expect(outcomes.filter((o) => o.spent > o.cap)).toEqual([]);
    // Every page the sandbox charged for reached the consumer in full.
    expect(outcomes.filter((o) => o.records !== o.spent * PAGE)).toEqual([]);
    // The faults did happen, so retries were part of what the caps counted.
    expect(outcomes.reduce((sum, o) => sum + o.retries, 0)).toBeGreaterThan(0);
  });

  it('spends exactly N credits and yields every record they bought when nothing fails', async () => {
    const client = clientOf(clean, 'sk_live_cap_0');
    const records = await collect(
      pipe(
        inputsFor('exact'),
        mergeMap((subforum) => client.forum.subforum({ subforum, trim: true }), { concurrency: 10 }),
        creditCap(13),
      ),
    );
    expect(creditsSpent(clean, 'sk_live_cap_0', START)).toBe(13);
    expect(records).toHaveLength(13 * PAGE);
  });

  it('with onCap throw yields every fetched record, then throws CreditCapError naming the cap', async () => {
    const client = clientOf(clean, 'sk_live_cap_1');
    const titles: string[] = [];
    const stream = pipe(client.forum.subforum({ subforum: 'cap-throw-n200', trim: true }), map((p) => p.title), creditCap(3, { onCap: 'throw' }));
    let failure: unknown;
    try {
      for await (const title of stream) titles.push(title);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(CreditCapError);
    // Within the error classes' meaning (docs/reference.md "Errors"): the caller's own budget could not pay, as a 402 says of the balance.
    expect(failure).toBeInstanceOf(InsufficientCreditsError);
    expect((failure as CreditCapError).cap).toBe(3);
    expect((failure as Error).message).toMatch(/Credit cap of 3/);
    expect(titles).toHaveLength(3 * PAGE);
    expect(creditsSpent(clean, 'sk_live_cap_1', START)).toBe(3);
  });

  it('does not call a walk that finished within the cap capped', async () => {
    const client = clientOf(clean, 'sk_live_cap_2');
    // 50 posts are 2 pages: a cap of exactly 2 is enough, so onCap throw must not throw.
    const records = await collect(pipe(client.forum.subforum({ subforum: 'cap-fits-n50', trim: true }), creditCap(2, { onCap: 'throw' })));
    expect(records).toHaveLength(50);
    expect(creditsSpent(clean, 'sk_live_cap_2', START)).toBe(2);
  });

  it('with a cap of 0 sends no request and yields nothing', async () => {
    const client = clientOf(clean, 'sk_live_cap_3');
    expect(await collect(pipe(client.forum.subforum({ subforum: 'cap-zero-n50' }), creditCap(0)))).toEqual([]);
    expect(clean.balance('sk_live_cap_3').credits).toBe(START);
    expect(client.stats.requests).toBe(0);
  });
});
