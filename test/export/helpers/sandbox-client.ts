/**
 * The sandbox server on loopback and a client of it, as most export tests run against them: started before a suite's
 * tests, closed after (`beforeAll(async () => ({ sandbox, client } = await startSandboxClient()))`).
 */
import { createClient, type Client } from '../../../src/index.ts';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../../src/sandbox/index.ts';

/** A sandbox and a client of it. */
export interface SandboxClient {
  sandbox: Sandbox;
  client: Client;
}

/** Starts a sandbox on a free loopback port with `options`, and a client with its key. */
export async function startSandboxClient(options: SandboxOptions = {}): Promise<SandboxClient> {
  const sandbox = await startSandbox({ port: 0, ...options });
  return { sandbox, client: createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url }) };
}

/** Closes the client, then the sandbox (either may be missing when the start failed). */
export async function closeSandboxClient({ sandbox, client }: Partial<SandboxClient>): Promise<void> {
  await client?.close();
  await sandbox?.close();
}
