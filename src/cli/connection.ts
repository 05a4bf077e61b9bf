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

export async function connect(options: { sandbox: boolean }): Promise<Connection> {
  if (!options.sandbox) {
    const client = createClient();
    return { client, close: () => client.close() };
  }
  const sandbox = await startSandbox({ port: 0 });
  process.stderr.write(`socialstream: using the built-in sandbox at ${sandbox.url}: the data is synthetic and costs no credits\n`);
  const client = createClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  return {
    client,
    close: async () => {
      await client.close();
      await sandbox.close();
    },
  };
}
