import { describe, expect, it, vi } from 'vitest';
import { CreditBudgetGate, ThrottleGate } from '../../src/gates.ts';

describe('ThrottleGate', () => {
  it('lets concurrent attempts start at least one interval apart', async () => {
    // On the fake clock: on a real one, a pause between a grant and the callback that reads the time
    // (a collection on a busy machine) makes two grants look closer than the gate let them be.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const gate = new ThrottleGate(50);
      const asked = performance.now();
      const started: number[] = [];
      const granted = Promise.all(Array.from({ length: 6 }, () => gate.acquire().then(() => started.push(performance.now()))));
      await vi.advanceTimersByTimeAsync(200);
      await granted;
      // The n-th attempt may not start before n intervals of 20 ms have passed since the first…
      started.forEach((time, n) => expect(time - asked).toBeGreaterThanOrEqual(n * 20));
      // …nor closer than one interval to the attempt before it.
      started.slice(1).forEach((time, n) => expect(time - started[n]).toBeGreaterThanOrEqual(20));
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps the spacing after the event loop was blocked for several intervals', async () => {
    const gate = new ThrottleGate(100);
    const started: number[] = [];
    const waiting = Array.from({ length: 4 }, () => gate.acquire().then(() => started.push(performance.now())));
    const blockedUntil = performance.now() + 50;
    while (performance.now() < blockedUntil);
    await Promise.all(waiting);
    // Read in the callbacks after each grant (1 ms of slack for their delay); a burst would be ~0 apart.
    started.slice(1).forEach((time, n) => expect(time - started[n]).toBeGreaterThan(9));
  });

  it('hands the turn on when a waiter gives up, without delaying those behind it', async () => {
    const gate = new ThrottleGate(5);
    await gate.acquire();
    const controller = new AbortController();
    const quitter = gate.acquire(controller.signal);
    const next = gate.acquire().then(() => performance.now());
    const asked = performance.now();
    controller.abort(new Error('gave up'));
    await expect(quitter).rejects.toThrow('gave up');
    // The next one goes one interval after the first grant, not two.
    expect((await next) - asked).toBeLessThan(300);
  });

  it('always resolves true', async () => {
    const gate = new ThrottleGate(1000);
    expect(await Promise.all([gate.acquire(), gate.acquire()])).toEqual([true, true]);
  });

  it('rejects with the signal reason when aborted while waiting', async () => {
    const gate = new ThrottleGate(0.5);
    await gate.acquire();
    const controller = new AbortController();
    const waiting = gate.acquire(controller.signal);
    controller.abort(new Error('stop now'));
    await expect(waiting).rejects.toThrow('stop now');
  });

  it('rejects at once when the signal is already aborted', async () => {
    await expect(new ThrottleGate(1).acquire(AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])('refuses the rate %s with a TypeError', (rate) => {
    expect(() => new ThrottleGate(rate)).toThrow(TypeError);
    expect(() => new ThrottleGate(rate)).toThrow(/requestsPerSecond/);
  });
});

describe('CreditBudgetGate', () => {
  it('allows exactly its budget among many concurrent attempts', async () => {
    const gate = new CreditBudgetGate(7);
    const answers = await Promise.all(Array.from({ length: 20 }, () => gate.acquire()));
    expect(answers.filter(Boolean)).toHaveLength(7);
    expect(answers.slice(0, 7).every(Boolean)).toBe(true);
    expect(gate.spent).toBe(7);
    expect(gate.refused).toBe(13);
  });

  it('counts no refusal while the budget lasts', async () => {
    const gate = new CreditBudgetGate(2);
    await gate.acquire();
    await gate.acquire();
    expect(gate.refused).toBe(0);
  });

  it('refuses every attempt with a budget of zero', async () => {
    expect(await new CreditBudgetGate(0).acquire()).toBe(false);
  });

  it.each([-1, 1.5, Number.NaN])('refuses the budget %s with a TypeError', (credits) => {
    expect(() => new CreditBudgetGate(credits)).toThrow(TypeError);
  });
});
