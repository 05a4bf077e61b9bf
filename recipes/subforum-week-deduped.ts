/**
 * Recipe: a week of a subforum's new posts, without the repeats that pagination can bring, to NDJSON.
 *
 *   npx tsx recipes/subforum-week-deduped.ts
 *
 * Without SOCIALSTREAM_API_KEY it runs on the built-in sandbox, here with its "repeat a record across
 * page boundaries" fault switched on, so that `dedupe` has something to do.
 */
import { createClient, dedupe, pipe } from 'socialstream';
import { startSandbox } from 'socialstream/sandbox';
import { toNdjson } from 'socialstream/sinks';

const SUBFORUM = 'typescript-n480';
const OUT = 'out/subforum-week.ndjson';

const sandbox = process.env.SOCIALSTREAM_API_KEY ? undefined : await startSandbox({ faults: { duplicates: true } });
const client = createClient(sandbox && { apiKey: sandbox.apiKey, baseUrl: sandbox.url });

const posts = pipe(client.forum.subforum({ subforum: SUBFORUM, timeframe: 'week', sort: 'new' }), dedupe('id'));
const written = await toNdjson(posts, OUT);
console.log(`${written.records} distinct posts → ${written.path}; ${client.stats.duplicates} repeats dropped`);

await client.close();
await sandbox?.close();
