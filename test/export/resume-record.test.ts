/**
 * `resume: true` over a file that is already there: it continues only the export that made it, says
 * when that one is already complete, and its summary tells this run's records from the file's.
 * Against the sandbox over loopback, every credit counted on the sandbox's side.
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../src/index.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { describeSummary, exportTo, OtherExportError } from '../../src/export/index.ts';
import { toParquet } from '../../sinks/index.ts';
import { scratchDir } from '../sinks/helpers/files.ts';
import { query, sqlPath } from '../sinks/helpers/duckdb.ts';
import { closeSandboxClient, startSandboxClient } from './helpers/sandbox-client.ts';

const root = scratchDir();
let counter = 0;
const fresh = (name: string) => join(root, `${++counter}-${name}`);
const FORMATS = ['parquet', 'ndjson', 'csv'] as const;

let sandbox: Sandbox;
let client: Client;
const credits = () => sandbox.balance(sandbox.apiKey).credits;
const walk = (subforum: string) => client.forum.subforum({ subforum });

beforeAll(async () => ({ sandbox, client } = await startSandboxClient()));
afterAll(() => closeSandboxClient({ sandbox, client }));

async function rows(path: string): Promise<number> {
  const [row] = await query(`SELECT count(*)::INTEGER AS n FROM read_parquet(${sqlPath(path)})`);
  return row.n as number;
}

describe('resume: true over a finished file', () => {
  it('refuses a Parquet, NDJSON or CSV file another export finished, before any request, naming that export', async () => {
    for (const format of FORMATS) {
      const out = fresh(`other.${format}`);
      await exportTo(walk('rec-node-n300'), { out });
      const before = readFileSync(out);
      const balance = credits();
      const refused = await exportTo(walk('rec-python-n100'), { out, resume: true }).catch((error: unknown) => error);
      expect(refused, format).toBeInstanceOf(OtherExportError);
      expect(refused).toMatchObject({ code: 'OTHER_EXPORT', path: out, held: { operation: 'forum/subforum', params: [{ subforum: 'rec-node-n300' }], walks: 1, format, records: 300 } });
      expect((refused as Error).message).toMatch(/holds another export: forum\/subforum subforum=rec-node-n300 .*not forum\/subforum subforum=rec-python-n100.*--restart/);
      expect(credits()).toBe(balance);
      expect(readFileSync(out)).toEqual(before);
    }
  });

  it('says its own finished file is already complete, with the records it holds, and spends no credit', async () => {
    for (const format of FORMATS) {
      const out = fresh(`own.${format}`);
      await exportTo([walk('rec-own-a-n120'), walk('rec-own-b-n60')], { out });
      const balance = credits();
      // The same walks in another order are the same export.
      const again = await exportTo([walk('rec-own-b-n60'), walk('rec-own-a-n120')], { out, resume: true });
      expect(again, format).toMatchObject({ complete: true, alreadyComplete: true, records: 0, totalRecords: 180, pages: 0, credits: 0 });
      expect(describeSummary(again)).toBe(`already complete: 180 records in ${out}; nothing bought, nothing written`);
      expect(credits()).toBe(balance);
    }
  });

  it('refuses a file that records no export (written before outputs recorded theirs), naming restart', async () => {
    const parquet = fresh('plain.parquet');
    await toParquet([{ id: 'p1', title: 'written by a sink, not an export' }], parquet);
    const ndjson = fresh('plain.ndjson');
    writeFileSync(ndjson, '{"id":"p1"}\n');
    for (const out of [parquet, ndjson]) {
      const balance = credits();
      const refused = await exportTo(walk('rec-plain-n50'), { out, resume: true }).catch((error: unknown) => error);
      expect(refused, out).toBeInstanceOf(OtherExportError);
      expect(refused).toMatchObject({ code: 'OTHER_EXPORT', held: undefined });
      expect((refused as Error).message).toMatch(/does not record the export that made it.*--restart/);
      expect(credits()).toBe(balance);
    }
  });

  it('refuses an NDJSON file changed since its export finished it, or whose record was', async () => {
    const out = fresh('edited.ndjson');
    await exportTo(walk('rec-edited-n30'), { out });
    const record = readFileSync(`${out}.export.json`, 'utf8');
    writeFileSync(`${out}.export.json`, record.slice(0, 40));
    await expect(exportTo(walk('rec-edited-n30'), { out, resume: true })).rejects.toMatchObject({ code: 'OTHER_EXPORT', held: undefined });
    writeFileSync(`${out}.export.json`, record);
    writeFileSync(out, readFileSync(out, 'utf8').split('\n').slice(1).join('\n'));
    await expect(exportTo(walk('rec-edited-n30'), { out, resume: true })).rejects.toMatchObject({ code: 'OTHER_EXPORT', held: undefined });
  });

  it("takes a file copied with its record as the same export's", async () => {
    const out = fresh('copied.csv');
    await exportTo(walk('rec-copied-n40'), { out });
    const copy = fresh('copy.csv');
    copyFileSync(out, copy);
    copyFileSync(`${out}.export.json`, `${copy}.export.json`);
    expect(await exportTo(walk('rec-copied-n40'), { out: copy, resume: true })).toMatchObject({ alreadyComplete: true, totalRecords: 40 });
  });
});

describe('the summary of a resume', () => {
  it("gives this run's records and the file's total, which DuckDB counts", async () => {
    const out = fresh('resumed.parquet');
    const first = await exportTo(walk('rec-total-n2000'), { out, maxCredits: 7 });
    expect(first).toMatchObject({ stoppedBy: 'maxCredits', records: 700, totalRecords: 700 });
    const second = await exportTo(walk('rec-total-n2000'), { out, resume: true });
    expect(second).toMatchObject({ complete: true, resumed: true, records: 1300, totalRecords: 2000 });
    expect(await rows(out)).toBe(second.totalRecords);
    expect(describeSummary(second)).toMatch(/^wrote 1300 records \(13 pages\) this run to .*, which holds 2000 records in all; /);
  });

  it('records the export only in a complete Parquet file, where DuckDB reads it', async () => {
    const out = fresh('metadata.parquet');
    const metadata = async () =>
      (await query(`SELECT decode(key) AS key, decode(value) AS value FROM parquet_kv_metadata(${sqlPath(out)})`)).filter((row) => row.key === 'socialstream.export');
    await exportTo(walk('rec-meta-n300'), { out, maxCredits: 1 });
    expect(await metadata()).toEqual([]);
    await exportTo(walk('rec-meta-n300'), { out, resume: true });
    const [entry] = await metadata();
    expect(JSON.parse(entry.value as string)).toMatchObject({ operation: 'forum/subforum', format: 'parquet', walks: 1, params: [{ subforum: 'rec-meta-n300' }] });
  });
});
