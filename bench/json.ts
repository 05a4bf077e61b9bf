/**
 * `npm run bench -- json`: what keeping big integers exact (`src/exact-json.ts`) costs, as ratios to
 * `JSON.parse` / `JSON.stringify` on the same text in the same run, on real sandbox pages.
 *
 * 1. A body without a 16-digit run (a forum page): `parseExact` reads every 16th character, then `JSON.parse`.
 * 2. A body whose 19-digit runs are all inside strings (a short-video page with `music.id` sent as a
 *    string): the scan finds them and sees each is text, then `JSON.parse`.
 * 3. A body with big integers (the short-video page as the platform sends it): each unsafe literal
 *    written as a marked string, `JSON.parse`, then the marked strings made `bigint`s; and, beside it,
 *    the lossless parser that takes over when the marks cannot be trusted (`parseLiterals`).
 * 4. Writing records that hold bigints: `stringifyExact` against `JSON.stringify` of the same records
 *    with those fields as numbers.
 */
import { parseExact, parseLiterals, stringifyExact } from '../src/exact-json.ts';
import { startSandbox } from '../src/sandbox/index.ts';

async function page(url: string, path: string, apiKey: string): Promise<string> {
  const response = await fetch(new URL(path, url), { headers: { 'x-api-key': apiKey } });
  return response.text();
}

/**
 * CPU microseconds per call of each of `fns`, the fastest of interleaved rounds: they take turns, so
 * drift falls on all alike; CPU time leaves out the time a busy machine gave to other processes, and
 * the fastest round is the one it disturbed least.
 */
function timeEach(fns: Record<string, () => unknown>, calls: number, rounds = 21): Record<string, number> {
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(fns).map((name) => [name, []]));
  const names = Object.keys(fns);
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length];
      const fn = fns[name];
      const started = process.cpuUsage();
      for (let call = 0; call < calls; call++) fn();
      const used = process.cpuUsage(started);
      times[name].push((used.user + used.system) / calls);
    }
  }
  return Object.fromEntries(Object.entries(times).map(([name, values]) => [name, Math.min(...values)]));
}

const sandbox = await startSandbox({ port: 0 });
try {
  const forum = await page(sandbox.url, '/v1/scrape/forum/subforum?subforum=bench-json-n100', sandbox.apiKey);
  const videos = await page(sandbox.url, '/v1/scrape/shortvideo/videos?handle=bench-json-n30', sandbox.apiKey);
  const quoted = videos.replace(/"id":(\d+),"id_str"/g, '"id":"$1","id_str"');
  const kb = (text: string) => `${(Buffer.byteLength(text) / 1024).toFixed(0)} KiB`;

  for (const [label, text] of [
    [`forum page, no 16-digit run (${kb(forum)})`, forum],
    [`short-video page, 19-digit ids in strings only (${kb(quoted)})`, quoted],
    [`short-video page, 30 big integers (${kb(videos)})`, videos],
  ] as const) {
    const t = timeEach({ parse: (): unknown => JSON.parse(text), exact: () => parseExact(text) }, 200);
    console.log(`body parse, ${label}: JSON.parse ${t.parse.toFixed(0)} µs, parseExact ${t.exact.toFixed(0)} µs: ${(t.exact / t.parse).toFixed(2)}x`);
  }
  const slow = timeEach({ parse: (): unknown => JSON.parse(videos), literals: () => parseLiterals(videos) }, 200);
  console.log(
    `body parse, short-video page by the lossless parser alone: JSON.parse ${slow.parse.toFixed(0)} µs, parseLiterals ${slow.literals.toFixed(0)} µs: ${(slow.literals / slow.parse).toFixed(2)}x`,
  );

  const records = (parseExact(videos) as { data: { aweme_list: Record<string, { music: Record<string, unknown> }> } }).data.aweme_list;
  const exact = Object.values(records);
  const rounded = exact.map((record) => ({ ...record, music: { ...record.music, id: Number(record.music.id) } }));
  const t = timeEach(
    { stringify: () => rounded.map((record) => JSON.stringify(record)), exact: () => exact.map((record) => stringifyExact(record)) },
    200,
  );
  console.log(
    `record write, 30 short-video records with a bigint each: JSON.stringify ${t.stringify.toFixed(0)} µs, stringifyExact ${t.exact.toFixed(0)} µs: ${(t.exact / t.stringify).toFixed(2)}x`,
  );
} finally {
  await sandbox.close();
}
