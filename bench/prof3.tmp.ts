import { Pool } from 'undici';
import { createClient } from '../src/index.ts';
const url = 'http://127.0.0.1:8799', KEY = 'sk_live_sandbox';
async function hand(subforum: string) {
  const pool = new Pool(url, { connections: 1 });
  let after: string | undefined; let n = 0;
  do {
    const query = new URLSearchParams({ subforum, ...(after === undefined ? {} : { after }) });
    const response = await pool.request({ method: 'GET', path: `/v1/scrape/forum/subforum?${query}`, headers: { 'x-api-key': KEY } });
    const body = JSON.parse(await response.body.text()) as { data: { posts: Record<string, { id: string }>; after?: string } };
    for (const post of Object.values(body.data.posts)) if (post.id !== '') n++;
    after = body.data.after;
  } while (after !== undefined);
  await pool.close(); return n;
}
async function viaClient(subforum: string) {
  const client = createClient({ baseUrl: url, apiKey: KEY });
  let n = 0;
  for await (const post of client.forum.subforum({ subforum })) if (post.id !== '') n++;
  await client.close(); return n;
}
const mode = process.argv[2];
const t = performance.now();
if (mode === 'hand') await hand('prof-n100000'); else await viaClient('prof-n100000');
console.log(mode, performance.now() - t, process.cpuUsage());
