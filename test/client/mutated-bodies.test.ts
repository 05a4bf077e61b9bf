/**
 * Bodies no hand-written case foresaw: every walk of the client suites, in both dialects, through a
 * proxy on loopback that changes one value of some of the sandbox's answers (seeded): a field made
 * null, `0`, `""`, `true`, a list, an object, an integer past 2^53, a long string of digits, or
 * removed. Whatever a body says, a walk either ends (with the records it understood, any
 * continuation it did not reported) or stops with one of the client's typed errors: never a
 * `TypeError` of its own, a hang or a runaway loop.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SocialstreamError } from '../../src/errors.ts';
import { parseExact, stringifyExact } from '../../src/exact-json.ts';
import { type Client, createClient } from '../../src/index.ts';
import { type Sandbox, type SandboxDialect, startSandbox } from '../../src/sandbox/index.ts';
import { seededRandom } from '../helpers/seeded-random.ts';
import { LIST_WALKS, PAGED_WALKS, SINGLE_WALKS } from './helpers.ts';

type Json = Record<string, unknown> | unknown[];

/** Every path (of keys) to a value inside `value`. */
function pathsIn(value: unknown, path: string[] = [], into: string[][] = []): string[][] {
  if (path.length > 0) into.push(path);
  if (typeof value === 'object' && value !== null) for (const key of Object.keys(value)) pathsIn((value as Record<string, unknown>)[key], [...path, key], into);
  return into;
}

/** `body` with one value, picked by `random`, replaced or removed. */
function mutated(body: unknown, random: () => number): unknown {
  const paths = pathsIn(body);
  if (paths.length === 0) return body;
  const path = paths[Math.floor(random() * paths.length)];
  let parent = body as Json;
  for (const key of path.slice(0, -1)) parent = (parent as Record<string, unknown>)[key] as Json;
  const key = path[path.length - 1];
  const old: unknown = (parent as Record<string, unknown>)[key];
  const replacements: unknown[] = [null, 0, -1, '', 'x', 'true', true, [], {}, 2n ** 60n, '9'.repeat(30), [old], { v: old }, String(old), 1e308, -0.5];
  const pick = Math.floor(random() * (replacements.length + 1));
  const fields = parent as Record<string, unknown>;
  // One more than the replacements: the field removed (a list keeps its length).
  if (pick < replacements.length) fields[key] = replacements[pick];
  else if (!Array.isArray(parent)) delete fields[key];
  return body;
}

interface Proxied {
  client: Client;
  close(): Promise<void>;
}

/** A client whose answers come from `sandbox` through a proxy that mutates half of the successful ones. */
async function proxied(sandbox: Sandbox, seed: number): Promise<Proxied> {
  const random = seededRandom(seed);
  const server: Server = createServer((request, response) => {
    void (async () => {
      const upstream = await fetch(`${sandbox.url}${request.url ?? '/'}`, { headers: { 'x-api-key': String(request.headers['x-api-key'] ?? '') } });
      let text = await upstream.text();
      if (upstream.ok && random() < 0.5) text = stringifyExact(mutated(parseExact(text), random)) ?? text;
      response.writeHead(upstream.status, { 'content-type': 'application/json' });
      response.end(text);
    })().catch((error: unknown) => response.destroy(error as Error));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = createClient({ apiKey: sandbox.apiKey, baseUrl: `http://127.0.0.1:${port}`, retry: { retries: 0 } });
  return {
    client,
    async close() {
      await client.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** How a walk ended: `ok`, a typed error's class, or what should never happen (`foreign …`, `runaway`, `hang`). */
async function walkOutcome(client: Client, id: string, params: Record<string, string | number>): Promise<string> {
  const stream = client.stream(id as never, params as never);
  const walk = (async () => {
    let records = 0;
    try {
      for await (const _ of stream) if (++records > 100_000) return 'runaway';
      return 'ok';
    } catch (error) {
      return error instanceof SocialstreamError ? error.constructor.name : `foreign ${String(error)}`;
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('hang'), 15_000)));
  try {
    return await Promise.race([walk, hang]);
  } finally {
    clearTimeout(timer);
  }
}

const WALKS = [...PAGED_WALKS, ...LIST_WALKS, ...SINGLE_WALKS];

describe.each(['spec', 'service'] as const)('walks of the %s dialect over mutated bodies', (dialect: SandboxDialect) => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, dialect, accounts: [{ apiKey: 'sk_live_sandbox_mutated', credits: 10_000_000 }] });
  });
  afterAll(() => sandbox.close());

  for (const seed of [5, 6, 8]) {
    it(`end with records or a typed error, seed ${seed}`, async () => {
      const proxy = await proxied(sandbox, seed);
      const { client } = proxy;
      try {
        const outcomes: string[] = [];
        for (const walk of WALKS) for (let trial = 0; trial < 3; trial++) outcomes.push(`${walk.id}: ${await walkOutcome(client, walk.id, walk.params)}`);
        expect(outcomes.filter((outcome) => /: (foreign|runaway|hang)/.test(outcome))).toEqual([]);
        // The mutations reached the walks: some ended early with a typed error.
        expect(outcomes.some((outcome) => !outcome.endsWith(': ok'))).toBe(true);
      } finally {
        await proxy.close();
      }
    });
  }
});
