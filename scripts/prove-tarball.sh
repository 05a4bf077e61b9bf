#!/usr/bin/env bash
# Proves the package as users get it: packs the tarball (which builds dist/ on prepack), installs it
# into a fresh project outside the repository, and uses it there the ways a user would. Tools that
# only check (tsc, tsx, publint, attw, DuckDB) come from the repository's node_modules, so the
# consumer project holds socialstream, its dependencies and @types/node, nothing else.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
tools="$repo/node_modules/.bin"
work="$(mktemp -d "${TMPDIR:-/tmp}/socialstream-tarball-XXXXXX")"
trap 'rm -rf "$work"' EXIT
step() { printf '\n== %s\n' "$*"; }
fail() { printf 'tarball proof failed: %s\n' "$*" >&2; exit 1; }

step "pack"
(cd "$repo" && npm pack --json --pack-destination "$work" --loglevel=error) >"$work/pack.json"
tarball="$work/$(node -p "require('$work/pack.json')[0].filename")"
version="$(node -p "require('$repo/package.json').version")"

step "6. the tarball holds the package and nothing else"
node - "$work/pack.json" <<'EOF'
const [{ files, size, unpackedSize }] = require(process.argv[2]);
const paths = files.map((file) => file.path);
const allowed = [
  /^(package\.json|README\.md|LICENSE|CHANGELOG\.md|docs\/(wire|service-api|architecture|cli)\.md|sinks\/README\.md)$/,
  /^dist\/(src|sinks)\/.+\.(js|d\.ts|js\.map|d\.ts\.map)$/,
  /^(src|sinks)\/.+\.ts$/,
  /^recipes\/[a-z-]+\.(ts|ipynb)$/,
];
const stray = paths.filter((path) => !allowed.some((pattern) => pattern.test(path)) || /\.test\.ts$|^recipes\/demo\.(ts|ipynb)$/.test(path));
if (stray.length > 0) throw new Error(`files that do not belong in the package:\n  ${stray.join('\n  ')}`);
for (const needed of ['LICENSE', 'CHANGELOG.md', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/cli/main.js', 'dist/sinks/index.js', 'dist/src/sandbox/index.js']) {
  if (!paths.includes(needed)) throw new Error(`${needed} is missing from the tarball`);
}
const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;
console.log(`${paths.length} files, ${kB(size)} packed, ${kB(unpackedSize)} unpacked`);
EOF

step "install into a fresh project"
consumer="$work/consumer"
mkdir -p "$consumer"
cd "$consumer"
echo '{ "name": "consumer", "private": true, "type": "module" }' >package.json
types_node="$(node -p "require('$repo/node_modules/@types/node/package.json').version")"
npm install --prefer-offline --no-audit --no-fund --loglevel=error "$tarball" "@types/node@$types_node" >/dev/null
echo "node_modules: $(du -sk node_modules | cut -f1) kB ($(ls node_modules | wc -l) top-level entries)"

step "1. an ESM consumer walks the sandbox into Parquet; DuckDB reads it back"
cat >app.mjs <<'EOF'
import { createClient, pipe, dedupe } from 'socialstream';
import { toParquet } from 'socialstream/sinks';
import { startSandbox } from 'socialstream/sandbox';

const sandbox = await startSandbox({ port: 0 });
const client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
const posts = pipe(client.forum.subforum({ subforum: 'tarball-n3000', sort: 'new' }), dedupe('id'));
// Groups of 1,000 rows are large enough to be encoded in the sink's worker thread.
const { records } = await toParquet(posts, 'posts.parquet', { rowGroupSize: 1000 });
await sandbox.close();
console.log(`${records} records`);
EOF
node app.mjs
(cd "$repo" && node --input-type=module - "$consumer/posts.parquet") <<'EOF'
import { DuckDBInstance } from '@duckdb/node-api';
const connection = await (await DuckDBInstance.create(':memory:')).connect();
const reader = await connection.runAndReadAll(`SELECT count(*)::INTEGER, count(DISTINCT id)::INTEGER FROM read_parquet('${process.argv[2]}')`);
const [[rows, ids]] = reader.getRows();
if (rows !== 3000 || ids !== 3000) throw new Error(`DuckDB read ${rows} rows with ${ids} distinct ids, expected 3000`);
console.log(`DuckDB: ${rows} rows, ${ids} distinct ids`);
EOF
# The sink falls back to its own thread when the worker cannot load, so load it directly: it must
# start from the installed package and answer a row group.
cat >worker-check.mjs <<'EOF'
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
const worker = new Worker(new URL('./node_modules/socialstream/dist/sinks/parquet-encoder-worker.js', import.meta.url));
const specs = [{ path: ['n'], physical: 'INT64', maxDefinition: 1, maxRepetition: 0, compression: 'SNAPPY' }];
const cells = { rows: 2, columns: [{ entries: 2, defined: new Uint8Array([1, 0]), numbers: new Float64Array([7, 0]) }] };
worker.postMessage({ id: 1, specs, cells, plain: [] });
const [reply] = await once(worker, 'message');
await worker.terminate();
if (reply.id !== 1 || reply.group?.rows !== 2) throw new Error(`the encoder worker answered ${JSON.stringify(reply)}`);
console.log('encoder worker: loads from the package and encodes a row group');
EOF
node worker-check.mjs

step "2. a CommonJS consumer requires all three entry points"
cat >app.cjs <<'EOF'
const { createClient, take, pipe } = require('socialstream');
const { toNdjson } = require('socialstream/sinks');
const { startSandbox } = require('socialstream/sandbox');

(async () => {
  const sandbox = await startSandbox({ port: 0 });
  const client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  const { records } = await toNdjson(pipe(client.forum.subforum({ subforum: 'tarball-n40' }), take(25)), 'posts.ndjson');
  await sandbox.close();
  if (records !== 25) throw new Error(`wrote ${records} records, expected 25`);
  console.log(`${records} records`);
})();
EOF
node app.cjs

step "3. a strict TypeScript consumer compiles against the published declarations"
cat >consumer.ts <<'EOF'
import { createClient, pipe, map, take, preview, withProgress, AuthError, type Checkpoint, type SubforumPost, type RecordTable, type ExportProgress } from 'socialstream';
import { toParquet, writeRecords, fromNdjson, type SinkResult } from 'socialstream/sinks';
import { startSandbox, type Sandbox } from 'socialstream/sandbox';

const sandbox: Sandbox = await startSandbox({ port: 0 });
const client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, retry: { retries: 2 } });
const stream = client.forum.subforum({ subforum: 'typescript', sort: 'new' }, { limit: 10 });
const posts: AsyncIterable<SubforumPost> = pipe(stream, take(5));
const titles: AsyncIterable<string> = pipe(client.forum.subforum({ subforum: 'node' }), map((post) => post.title));
const written: SinkResult = await toParquet(posts, 'posts.parquet');
const again: SinkResult = await writeRecords(fromNdjson('posts.ndjson'), 'posts.csv');
const checkpoint: Checkpoint = stream.checkpoint();
const table: RecordTable<SubforumPost> = await preview(client.forum.subforum({ subforum: 'node' }), { rows: 5 });
const view = (progress: ExportProgress): void => console.log(progress.records, progress.stoppedBy ?? 'running');
for await (const post of withProgress(client.forum.subforum({ subforum: 'deno' }, { limit: 3 }), { client, view })) console.log(post.id);
console.log(written.records, again.bytes, checkpoint, titles, table.columns[0]?.type, new AuthError('no key') instanceof Error);
await sandbox.close();
EOF
# Every moduleResolution a consumer may use: node10 (tslab, older tsconfigs) finds the subpaths' types
# only through typesVersions, and must never land on the shipped .ts sources beside them.
for resolution in node10 node16 nodenext bundler; do
  case "$resolution" in node16 | nodenext) module="$resolution" ;; *) module=esnext ;; esac
  cat >"tsconfig.$resolution.json" <<EOF
{
  "compilerOptions": {
    "target": "ES2022", "module": "$module", "moduleResolution": "$resolution", "types": ["node"], "noEmit": true,
    "strict": true, "exactOptionalPropertyTypes": true, "noUncheckedIndexedAccess": true, "skipLibCheck": false
  },
  "files": ["consumer.ts", "entry-points.ts"]
}
EOF
done
# One import of every entry point the package exports (./export too, once it is there), so a new
# subpath without its typesVersions line fails here rather than for a node10 user.
node - "$consumer/node_modules/socialstream/package.json" >entry-points.ts <<'EOF'
const { exports, typesVersions } = require(process.argv[2]);
const subpaths = Object.keys(exports).filter((key) => key !== './package.json');
for (const subpath of subpaths.filter((key) => key !== '.')) {
  const mapped = typesVersions?.['*']?.[subpath.slice(2)]?.[0];
  if (mapped !== exports[subpath].types) throw new Error(`typesVersions maps ${subpath} to ${mapped}, exports to ${exports[subpath].types}`);
}
subpaths.forEach((subpath, i) => console.log(`import * as entry${i} from '${subpath === '.' ? 'socialstream' : `socialstream/${subpath.slice(2)}`}';`));
console.log(`export const entryPoints: object[] = [${subpaths.map((_, i) => `entry${i}`).join(', ')}];`);
EOF
entries="$(grep -c '^import' entry-points.ts)"
echo "entry points: $entries"
for resolution in node10 node16 nodenext bundler; do
  "$tools/tsc" -p "tsconfig.$resolution.json" --traceResolution >"trace.$resolution.txt" || { grep -v '^[=A-Z]' "trace.$resolution.txt" | head -40; fail "tsc under $resolution"; }
  resolved="$(grep -oE "Module name 'socialstream[^']*' was successfully resolved to '[^']*'" "trace.$resolution.txt" | sort -u)"
  [ "$(grep -c . <<<"$resolved")" -eq "$entries" ] || fail "under $resolution, not every entry point resolved: $resolved"
  if grep -vE "resolved to '[^']*/node_modules/socialstream/dist/[^']*\.d\.ts'$" <<<"$resolved"; then
    fail "under $resolution, an entry point resolved to something other than dist/*.d.ts (above)"
  fi
  echo "tsc --noEmit under $resolution: no errors; every entry point resolves to dist/*.d.ts"
done

step "4. the socialstream command"
[ "$(npx --no -- socialstream --version)" = "$version" ] || fail "--version did not print $version"
npx --no -- socialstream --help | grep -q '^usage:' || fail "--help printed no usage"
npx --no -- socialstream export forum/subforum subforum=tarball-n60 --out exported.ndjson --sandbox
[ "$(wc -l <exported.ndjson)" -eq 60 ] || fail "export wrote $(wc -l <exported.ndjson) lines, expected 60"

step "the README's kill -USR2 block, as written (on a free port)"
./node_modules/.bin/socialstream sandbox --port 0 > sandbox.log &
for _ in $(seq 100); do grep -q '^pid ' sandbox.log && break; sleep 0.2; done
kill -USR2 $!
for _ in $(seq 50); do grep -q '^advanced' sandbox.log && break; sleep 0.1; done
kill $!
wait $! || true
cat sandbox.log
grep -q "^pid $!: " sandbox.log || fail "the banner does not name the sandbox's pid $!"
grep -q '^advanced: every paginated resource has 10 new records; the sandbox clock reads ' sandbox.log || fail "kill -USR2 \$! did not advance the sandbox"

step "a copied DuckDB recipe without DuckDB installed says what to install"
cp node_modules/socialstream/recipes/creator-videos-to-parquet.ts .
status=0
node --import "$repo/node_modules/tsx/dist/loader.mjs" creator-videos-to-parquet.ts 2>recipe.err >/dev/null || status=$?
cat recipe.err
[ "$status" -eq 1 ] && [ "$(wc -l <recipe.err)" -eq 1 ] && grep -q 'npm install @duckdb/node-api' recipe.err ||
  fail "the recipe exited $status without the one line naming @duckdb/node-api"

step "7. every TypeScript block of the README runs as a program in this project, against a sandbox"
./node_modules/.bin/socialstream sandbox --port 0 >readme-sandbox.log &
readme_sandbox=$!
for _ in $(seq 100); do grep -q '^pid ' readme-sandbox.log && break; sleep 0.2; done
# The banner's own export line, as a user would paste it.
eval "$(grep '^export SOCIALSTREAM_BASE_URL=' readme-sandbox.log)"
status=0
node "$repo/scripts/readme-blocks.mjs" "$repo/README.md" "$consumer" "$repo/node_modules/tsx/dist/loader.mjs" || status=$?
kill "$readme_sandbox"
wait "$readme_sandbox" || true
unset SOCIALSTREAM_BASE_URL SOCIALSTREAM_API_KEY
[ "$status" -eq 0 ] || fail "a README block does not run as a program (above)"

step "5. publint and arethetypeswrong"
"$tools/publint" --strict "$tarball"
# ESM only by design: CommonJS callers use require(esm), proven by step 2 rather than by attw's model.
"$tools/attw" --profile esm-only --no-emoji "$tarball"

printf '\ntarball proof passed\n'
