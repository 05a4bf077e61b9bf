import { createClient } from '../src/index.ts';
const client = createClient({ baseUrl: 'http://127.0.0.1:8799', apiKey: 'sk_live_sandbox' });
for (let i = 0; i < 3; i++) { let n = 0;
for await (const post of client.forum.subforum({ subforum: `q${i}-n100000` })) if (post.id !== '') n++; }
await client.close();
