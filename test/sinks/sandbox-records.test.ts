/**
 * Records of every operation, walked through the client from the sandbox over loopback HTTP, go
 * through each sink and come back leaf for leaf.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, operations, type OperationSpec } from '../../src/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { fromNdjson, toCsv, toNdjson, toParquet } from '../../sinks/index.ts';
import { scratchDir } from './helpers/files.ts';
import { sandboxParams } from './helpers/sandbox-params.ts';
import { asText, leafDifferences, leaves } from './helpers/leaves.ts';
import { csvRecords, parquetRecords, pythonCsvRows } from './helpers/read-back.ts';

const dir = scratchDir();
const RECORDS_PER_OPERATION = 12;

function paramsFor(op: OperationSpec): Record<string, string | number> {
  return sandboxParams(op, RECORDS_PER_OPERATION);
}

let sandbox: Sandbox;
const walked = new Map<string, Array<Record<string, unknown>>>();

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, slowMs: 0 });
  const client = createClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  const groups = client as unknown as Record<string, Record<string, (params: object, options: object) => AsyncIterable<Record<string, unknown>>>>;
  for (const op of operations) {
    const records: Array<Record<string, unknown>> = [];
    for await (const record of groups[op.group][op.method](paramsFor(op), { limit: RECORDS_PER_OPERATION })) records.push(record);
    walked.set(op.id, records);
  }
});

afterAll(() => sandbox?.close());

const ids = operations.map((op) => op.id);

describe.each(ids)('records of %s', (id) => {
  const file = (ext: string): string => join(dir, `${id.replace(/\//g, '_')}.${ext}`);

  it('were walked from the sandbox', () => {
    expect(walked.get(id)?.length).toBeGreaterThan(0);
  });

  it('come back unchanged from NDJSON', async () => {
    const records = walked.get(id)!;
    await toNdjson(records, file('ndjson'));
    const back: unknown[] = [];
    for await (const record of fromNdjson(file('ndjson'))) back.push(record);
    expect(back).toEqual(records);
  });

  it('come back leaf for leaf from CSV read by python', async () => {
    const records = walked.get(id)!;
    await toCsv(records, file('csv'));
    const back = csvRecords(pythonCsvRows(file('csv')));
    const differences = records.flatMap((record, i) =>
      leafDifferences(asText(leaves(record, { dropEmptyStrings: true })), asText(leaves(back[i]))),
    );
    expect(differences.slice(0, 5)).toEqual([]);
  });

  // The nested layout's read-back, by three readers, is parquet-readers.test.ts's.
  it('come back leaf for leaf from flat Parquet read by DuckDB', async () => {
    const records = walked.get(id)!;
    await toParquet(records, file('parquet'), { layout: 'flat' });
    const back = await parquetRecords(file('parquet'));
    const differences = records.flatMap((record, i) => leafDifferences(leaves(record), leaves(back[i])));
    expect(differences.slice(0, 5)).toEqual([]);
  });
});
