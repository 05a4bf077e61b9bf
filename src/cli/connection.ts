/**
 * The client a command talks through: the real service (key and address from the environment), or
 * with `--sandbox` an in-process sandbox on a free loopback port, announced on stderr so nobody
 * mistakes its synthetic data for real data.
 */
import { createClient, type Client } from '../index.ts';
import { startSandbox } from '../sandbox/index.ts';

export interface Connection {
  client: Client;
  /** Closes the client's sockets and, with `--sandbox`, the sandbox. */
  close(): Promise<void>;
}

export interface ConnectOptions {
  sandbox: boolean;
  /** Requests in flight at once; an export with `--concurrency N` needs at least N. */
  maxConcurrentRequests?: number;
}

export async function connect(options: ConnectOptions): Promise<Connection> {
  const { maxConcurrentRequests } = options;
  if (!options.sandbox) {
    const client = createClient({ maxConcurrentRequests });
    return { client, close: () => client.close() };
  }
  const sandbox = await startSandbox({ port: 0 });
  process.stderr.write(`socialstream: using the built-in sandbox at ${sandbox.url}: the data is synthetic and costs no credits\n`);
  const client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, maxConcurrentRequests });
  return {
    client,
    close: async () => {
      await client.close();
      await sandbox.close();
    },
  };
}
