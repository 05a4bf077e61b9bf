/**
 * Recipe: every top-level comment of a video, across all its pages, to a CSV file for a spreadsheet.
 *
 *   npx tsx recipes/video-comments-to-csv.ts
 *
 * Without SOCIALSTREAM_API_KEY it runs on the built-in sandbox (synthetic data, no credits).
 * `order: 'newest'` reaches up to about 7,000 comments, `'top'` about 1,000 (the service's limits).
 */
import { createClient } from 'socialstream';
import { startSandbox } from 'socialstream/sandbox';
import { toCsv } from 'socialstream/sinks';

const VIDEO_URL = 'https://videosite.example/watch?v=launch-n430';
const OUT = 'out/video-comments.csv';

const sandbox = process.env.SOCIALSTREAM_API_KEY ? undefined : await startSandbox();
const client = createClient(sandbox && { apiKey: sandbox.apiKey, baseUrl: sandbox.url });

const comments = client.videosite.videoComments({ url: VIDEO_URL, order: 'newest' });
// Spreadsheets run cells starting with = + - @ as formulas; escaping them keeps a shared CSV safe.
const written = await toCsv(comments, OUT, { escapeFormulae: true });
console.log(`${written.records} comments → ${written.path} over ${client.stats.pages} pages (${client.stats.credits} credits)`);

await client.close();
await sandbox?.close();
