import { createClient } from '../src/index.ts';
const client = createClient({ baseUrl: 'http://127.0.0.1:8799', apiKey: 'sk_live_sandbox' });
let n = 0;
const g = (globalThis as { gc?: () => void }).gc!;
for await (const post of client.forum.subforum({ subforum: `leak-n300000` })) {
  if (post.id !== '') n++;
  if (n % 50000 === 0) { g(); const m = process.memoryUsage(); console.log(n, 'heapUsed', (m.heapUsed / 1e6).toFixed(1), 'rss', (m.rss / 1e6).toFixed(1), 'maxrss', (process.resourceUsage().maxRSS / 1024).toFixed(1)); }
}
await client.close();
