/**
 * Peak memory of a client facing a hostile service: a body without end (at the default and at a
 * 1 MiB `maxBodyBytes`) and a walk whose every cursor is 1 MB long. Each case runs in its own process
 * so its peak RSS is its own; the servers run in this one.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createClient } from '../src/index.ts';
import { peakRssMb } from './_peak-rss.ts';

const KEY = 'sk_live_sandbox_bench';
const MB = 1024 * 1024;

async function child(scenario: string, url: string, arg: number): Promise<void> {
  const options = scenario === 'endless' && arg > 0 ? { maxBodyBytes: arg } : {};
  const client = createClient({ baseUrl: url, apiKey: KEY, retry: { retries: 0 }, ...options });
  let outcome = 'finished';
  let pages = 0;
  try {
    for await (const _ of client.forum.subforum({ subforum: 'x' }).pages()) pages++;
  } catch (error) {
    outcome = (error as Error).name;
  }
  await client.close();
  const peakMb = peakRssMb();
  console.log(JSON.stringify({ pages, outcome, peakMb: Math.round(peakMb) }));
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

async function main(): Promise<void> {
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const endless = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write('{"success": true, "data": {"text": "');
    const pump = (): void => {
      while (!response.destroyed && response.write(chunk));
      if (!response.destroyed) response.once('drain', pump);
    };
    pump();
  });
  const filler = 'x'.repeat(MB);
  let cursorPages = 0;
  const cursors = createServer({ maxHeaderSize: 4 * MB }, (request, response) => {
    const page = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('after')?.slice(0, 8) ?? 0);
    const next = page + 1 < cursorPages ? `${String(page + 1).padStart(8, '0')}${filler}` : null;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ success: true, data: { posts: { 0: { id: String(page) } }, after: next } }));
  });
  const endlessUrl = await listen(endless);
  const cursorsUrl = await listen(cursors);
  // Not spawnSync: this process serves the child while it runs.
  const runAsync = (scenario: string, url: string, arg: number): Promise<string> =>
    new Promise((resolve) => {
      const args = ['--import', 'tsx', fileURLToPath(import.meta.url), 'child', scenario, url, String(arg)];
      execFile(process.execPath, args, (error, stdout, stderr) => resolve((stdout || stderr || (error?.message ?? '')).trim()));
    });
  cursorPages = 1;
  console.log(`baseline, one small page:                   ${await runAsync('cursors', cursorsUrl, 1)}`);
  console.log(`endless body, default maxBodyBytes (64 MiB): ${await runAsync('endless', endlessUrl, 0)}`);
  console.log(`endless body, maxBodyBytes 1 MiB:            ${await runAsync('endless', endlessUrl, MB)}`);
  for (const pages of [20, 1000]) {
    cursorPages = pages;
    console.log(`${`${pages} pages with 1 MB cursors:`.padEnd(45)}${await runAsync('cursors', cursorsUrl, pages)}`);
  }
  endless.closeAllConnections();
  endless.close();
  cursors.close();
}

if (process.argv[2] === 'child') await child(process.argv[3], process.argv[4], Number(process.argv[5]));
else await main();
