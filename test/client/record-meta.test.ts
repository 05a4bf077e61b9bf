/**
 * The table's `key` and `time` columns against real records: the sandbox is written from the API reference apart
 * from the table, so a path naming a field the records do not carry, or a wrong unit, shows here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.ts';
import { isNewestFirst, keyOf, timeOf } from '../../src/operations/record-meta.ts';
import { findOperation, OPERATIONS } from '../../src/operations/table.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { SAMPLES } from './helpers.ts';


describe('the operation table names each record key and time', () => {
  let sandbox: Sandbox;
  let client: Client;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
    client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('has a sample for every operation', () => {
    expect(Object.keys(SAMPLES).sort()).toEqual(OPERATIONS.map((op) => op.id).sort());
  });

  it.each(OPERATIONS.map((op) => [op.id]))('%s: every record of the first page has a distinct key and a readable time', async (id) => {
    const op = findOperation(id)!;
    const records: unknown[] = [];
    for await (const record of client.stream(id, SAMPLES[id], { maxPages: 1 })) records.push(record);
    expect(records.length).toBeGreaterThan(0);
    if (op.key !== null) {
      const keys = records.map((record) => keyOf(op, record));
      expect(keys.every((key) => key !== undefined && key !== '')).toBe(true);
      expect(new Set(keys).size).toBe(keys.length);
    }
    if (op.time !== null) {
      for (const record of records) {
        const ms = timeOf(op, record);
        // Within 30 years of the sandbox epoch (2025-11-22): a wrong unit lands far outside.
        expect(ms).toBeGreaterThan(Date.UTC(1995, 0, 1));
        expect(ms).toBeLessThan(Date.UTC(2056, 0, 1));
      }
    }
  });

  it('lists as newest first exactly the walks whose records come newest first', async () => {
    for (const [id, params] of [
      ['forum/subforum', { subforum: 'typescript-n30', sort: 'new' }],
      ['videosite/video/comments', { url: 'https://videosite.example/watch?v=x-n30', order: 'newest' }],
      ['videosite/channel/shorts', { handle: 'chan-n30' }],
      ['shortvideo/videos', { handle: 'creator-n30' }],
    ] as const) {
      const op = findOperation(id)!;
      expect(isNewestFirst(op, params)).toBe(true);
      const times: number[] = [];
      for await (const record of client.stream(id, params)) times.push(timeOf(op, record)!);
      expect(times).toEqual([...times].sort((a, b) => b - a));
    }
    expect(isNewestFirst(findOperation('forum/subforum')!, { subforum: 'x' })).toBe(false);
    expect(isNewestFirst(findOperation('search/search')!, { query: 'x' })).toBe(false);
  });
});
