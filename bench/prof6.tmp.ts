import { readFileSync } from 'node:fs';
import { unkey } from '../src/operations/unkey.ts';
const COLL = new Set(['aweme_list','url_list','comments','posts','items']);
function v2(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) { let out; for (let i = 0; i < value.length; i++) { const n = v2(value[i]); if (n !== value[i]) { out ??= value.slice(); out[i] = n; } } return out ?? value; }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  const len = keys.length;
  if (len === 0) return obj;
  if (keys[0] === '0') { let ok = true; for (let i = 0; i < len; i++) if (keys[i] !== String(i)) { ok = false; break; } if (ok) { const arr = new Array(len); for (let i = 0; i < len; i++) arr[i] = v2(obj[keys[i]]); return arr; } }
  let out: Record<string, unknown> | undefined;
  for (let i = 0; i < len; i++) {
    const f = obj[keys[i]];
    if (typeof f !== 'object' || f === null) continue;
    let n = v2(f);
    if (n === f && !Array.isArray(f) && COLL.has(keys[i]) && Object.keys(f).length === 0) n = [];
    if (n !== f) { out ??= { ...obj }; out[keys[i]] = n; }
  }
  return out ?? obj;
}
for (const file of ['/tmp/page.json', '/tmp/videos.json']) {
  const text = readFileSync(file, 'utf8');
  const body = JSON.parse(text);
  const list = Object.values(body.data.posts ?? body.data.aweme_list);
  for (const [name, fn] of [['current', unkey], ['keys', v2], ['current', unkey], ['keys', v2]] as const) {
    let t = 0;
    for (let i = 0; i < 300; i++) { const b = JSON.parse(text); const l = Object.values(b.data.posts ?? b.data.aweme_list); const s = performance.now(); for (const p of l) fn(p); t += performance.now() - s; }
    void list; console.log(file, name, 'fresh', (t / 300).toFixed(3));
  }
  let t = performance.now(); for (let i = 0; i < 200; i++) JSON.parse(text); console.log('parse', ((performance.now() - t) / 200).toFixed(3));
}
