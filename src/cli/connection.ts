/**
 * The client a command talks through: the real service (key and address from the environment), or
 * with `--sandbox` an in-process sandbox on a free loopback port, announced on stderr so nobody
 * mistakes its synthetic data for real data.
 */
import { BaseUrlError, createClient, KeyFormatError, type Client } from '../index.ts';
import { startSandbox } from '../sandbox/index.ts';
import { EnvironmentError } from './failure.ts';

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
    const client = clientFromEnvironment(maxConcurrentRequests);
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

/**
 * Refuses SOCIALSTREAM_API_KEY or SOCIALSTREAM_BASE_URL as `connect` does, for a command that makes
 * its clients later (a worker, one a walk): the same message and exit code as `export`.
 */
export async function checkEnvironment(): Promise<void> {
  await clientFromEnvironment(undefined).close();
}

/** The client of SOCIALSTREAM_API_KEY and SOCIALSTREAM_BASE_URL; a refusal names the variable, not the library option. */
function clientFromEnvironment(maxConcurrentRequests: number | undefined): Client {
  try {
    return createClient({ maxConcurrentRequests });
  } catch (error) {
    // A missing key keeps its own message (failure.ts); a present one was refused for what it holds.
    if (error instanceof KeyFormatError) throw new EnvironmentError(`SOCIALSTREAM_API_KEY ${error.problem}`);
    if (error instanceof BaseUrlError) {
      throw new EnvironmentError(
        error.problem === undefined
          ? 'no service address: set SOCIALSTREAM_BASE_URL to the https address of the service, or add --sandbox to try the built-in sandbox'
          : `SOCIALSTREAM_BASE_URL ${error.problem}`,
      );
    }
    throw error;
  }
}
