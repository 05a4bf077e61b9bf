import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InsufficientCreditsError } from '../../src/errors.ts';
import { partialOf, SinkError, toCsv, toNdjson, toParquet, writeRecords } from '../../sinks/index.ts';
import { query, sqlPath } from './helpers/duckdb.ts';
import { scratchDir, temporaryFiles } from './helpers/files.ts';
import { hostileRecord } from './helpers/hostile.ts';

const dir = scratchDir();

/** Yields `count` records, then fails the way a client stream does when the balance runs out. */
async function* outOfCreditsAfter(count: number): AsyncGenerator<Record<string, unknown>> {
  for (let i = 0; i < count; i++) yield hostileRecord(i);
  throw new InsufficientCreditsError('Insufficient credits', 1, 0, { status: 402, endpoint: 'forum/subforum' });
}

async function rowsIn(path: string): Promise<number> {
  const from = path.endsWith('.csv')
    ? `read_csv(${sqlPath(path)}, header = true, all_varchar = true)`
    : path.endsWith('.ndjson')
      ? `read_json(${sqlPath(path)}, format = 'newline_delimited')`
      : sqlPath(path);
  const [{ n }] = await query(`SELECT count(*) AS n FROM ${from}`);
  return n as number;
}

describe.each(['ndjson', 'csv', 'parquet'])('a %s sink whose source fails', (format) => {
  it.each([2_500, 10])('keeps a valid file of the %i records received and rejects with the source error, which tells that file', async (count) => {
    const path = join(dir, `credits-${count}.${format}`);
    const error = await writeRecords(outOfCreditsAfter(count), path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InsufficientCreditsError);
    expect(partialOf(error)).toEqual({ path, records: count, bytes: statSync(path).size, repaired: 0 });
    expect(await rowsIn(path)).toBe(count);
    expect(temporaryFiles(dir)).toEqual([]);
  });
});

describe('failure safety', () => {
  it('writes under a temporary name and only renames the file once it is complete', async () => {
    const path = join(dir, 'in-progress.parquet');
    const seen: Array<{ final: boolean; temporary: string[] }> = [];
    async function* watching(): AsyncGenerator<Record<string, unknown>> {
      for (let i = 0; i < 3; i++) {
        seen.push({ final: existsSync(path), temporary: temporaryFiles(dir) });
        yield { i };
      }
    }
    await toParquet(watching(), path);
    expect(seen.every(({ final, temporary }) => !final && temporary.length === 1)).toBe(true);
    expect(existsSync(path)).toBe(true);
    expect(temporaryFiles(dir)).toEqual([]);
  });

  it('keeps the records before an aborted source and rejects with the abort itself', async () => {
    const controller = new AbortController();
    async function* abortable(): AsyncGenerator<Record<string, unknown>> {
      for (let i = 0; ; i++) {
        controller.signal.throwIfAborted();
        if (i === 7) controller.abort();
        else yield { i };
      }
    }
    const path = join(dir, 'aborted.csv');
    const error = await toCsv(abortable(), path).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'AbortError' });
    expect(partialOf(error)).toMatchObject({ path, records: 7 });
    expect(await rowsIn(path)).toBe(7);
  });

  it('rejects with the very value a source threw, even one it cannot mark', async () => {
    async function* throwsText(): AsyncGenerator<Record<string, unknown>> {
      yield { a: 1 };
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- the point: a value that is not an Error comes through as it was
      throw 'plain text';
    }
    const path = join(dir, 'text-thrown.ndjson');
    const error = await toNdjson(throwsText(), path).catch((e: unknown) => e);
    expect(error).toBe('plain text');
    expect(partialOf(error)).toBeUndefined();
    expect(await rowsIn(path)).toBe(1);
  });

  it('stops at a record that is not an object with a SinkError, keeping the records before it', async () => {
    const path = join(dir, 'not-an-object.ndjson');
    const error = await toNdjson([{ a: 1 }, { a: 2 }, 'three', { a: 4 }], path).catch((e: unknown) => e);
    expect(error).toMatchObject({ recordsWritten: 2 });
    expect((error as SinkError).cause).toBeInstanceOf(TypeError);
    expect(await rowsIn(path)).toBe(2);
  });

  it.each(['csv', 'parquet'])('stops a %s sink at a value JSON cannot carry, naming its field', async (format) => {
    const path = join(dir, `symbol.${format}`);
    const error = await writeRecords([{ a: 1, deep: { n: 1 } }, { a: 2, deep: { n: Symbol('n') } }], path, { sampleSize: 1 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ recordsWritten: 1 });
    expect((error as SinkError).cause).toMatchObject({ message: expect.stringMatching(/deep\.n holds a symbol/) });
    expect(await rowsIn(path)).toBe(1);
  });

  it('stops a parquet sink at a function in a JSON column, naming its field, with the file still valid', async () => {
    const path = join(dir, 'function.parquet');
    const records = [{ a: 1, tags: ['x'] }, { a: 2, tags: () => 'y' }];
    const error = await writeRecords(records, path, { sampleSize: 1 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ recordsWritten: 1 });
    expect((error as SinkError).cause).toMatchObject({ message: expect.stringMatching(/tags holds a function/) });
    expect(await rowsIn(path)).toBe(1);
  });

  // The third record is not an object: the sink must stop there and close its source, async or sync.
  it.each([
    ['an async source, so no further pages are fetched', 'async', 'stopped.csv'],
    ['a sync source too', 'sync', 'stopped-sync.parquet'],
  ] as const)('stops and closes %s when a record cannot be written', async (_, kind, file) => {
    let pulled = 0;
    let closed = false;
    function* records(): Generator<unknown> {
      try {
        for (;;) {
          pulled++;
          yield pulled === 3 ? null : { pulled };
        }
      } finally {
        closed = true;
      }
    }
    async function* later(): AsyncGenerator<unknown> {
      yield* records();
    }
    const path = join(dir, file);
    const source = kind === 'async' ? later() : records();
    await expect(writeRecords(source, path, { sampleSize: 1 })).rejects.toThrow(SinkError);
    expect(pulled).toBe(3);
    expect(closed).toBe(true);
  });

  it('keeps what a sync source gave before it threw, and rejects with its own error', async () => {
    const path = join(dir, 'sync-throws.parquet');
    function* source(): Generator<unknown> {
      yield { a: 1 };
      yield { a: 2 };
      throw new InsufficientCreditsError('out of credits', 1, 0);
    }
    const error = await toParquet(source(), path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InsufficientCreditsError);
    expect(partialOf(error)).toMatchObject({ path, records: 2 });
    expect(await rowsIn(path)).toBe(2);
  });

  it('awaits promises in a sync source, as for await does', async () => {
    const path = join(dir, 'promised.ndjson');
    await expect(toNdjson([Promise.resolve({ a: 1 }), { a: 2 }], path)).resolves.toMatchObject({ records: 2 });
    expect(await rowsIn(path)).toBe(2);
  });

  it('creates a missing directory before writing into it', async () => {
    const path = join(dir, 'new-dir', 'deeper', 'out.ndjson');
    await expect(toNdjson([{ a: 1 }], path)).resolves.toMatchObject({ records: 1 });
    expect(existsSync(path)).toBe(true);
  });

  it('throws a SinkError and leaves no file when the directory cannot be made', async () => {
    const blocker = join(dir, 'a-file');
    writeFileSync(blocker, 'not a folder');
    const path = join(blocker, 'out.ndjson');
    const error = await toNdjson([{ a: 1 }], path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SinkError);
    expect(error).toMatchObject({ recordsWritten: 0, message: expect.stringContaining('a-file') });
    expect(existsSync(path)).toBe(false);
  });
});
