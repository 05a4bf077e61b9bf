/**
 * `socialstream sandbox`: runs the sandbox in the foreground until SIGINT or SIGTERM, printing
 * where it listens and how to point the client at it.
 */
import { DIALECTS, type SandboxDialect } from './dialects/index.ts';
import { DEFAULT_API_KEY, startSandbox, type SandboxOptions } from './index.ts';

const DEFAULT_PORT = 8787;

export const SANDBOX_USAGE = `usage: socialstream sandbox [options]

Runs a local server that speaks the whole API with synthetic, deterministic data.

options:
  --port N         TCP port (default ${DEFAULT_PORT}; 0 picks a free one)
  --host H         interface to bind (default 127.0.0.1)
  --credits N      credits of the sandbox key (default 10000)
  --latency MS     delay added to every response (default 0)
  --fault-rate P   probability (0 to 1) of an upstream failure (500) per request (default 0)
  --seed S         seed of the synthetic data (default sandbox)
  --dialect D      spec (default): bodies as SPEC reads; service: as the service answers in practice
  --help           this text`;

const FLAGS = ['--port', '--host', '--credits', '--latency', '--fault-rate', '--seed', '--dialect'] as const;
type Flag = (typeof FLAGS)[number];

/** Splits `--flag value` and `--flag=value` words; throws `TypeError` naming a bad or incomplete flag. */
function readFlags(argv: string[]): Map<Flag, string> {
  const values = new Map<Flag, string>();
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    const eq = word.indexOf('=');
    const name = eq === -1 ? word : word.slice(0, eq);
    if (!(FLAGS as readonly string[]).includes(name)) {
      throw new TypeError(word.startsWith('-') ? `unknown flag ${name}` : `unexpected argument "${word}"`);
    }
    const value = eq === -1 ? argv[++i] : word.slice(eq + 1);
    if (value === undefined || value === '') throw new TypeError(`${name} needs a value`);
    if (values.has(name as Flag)) throw new TypeError(`${name} is given twice`);
    values.set(name as Flag, value);
  }
  return values;
}

function whole(flag: Flag, value: string, max: number): number {
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(parsed) || parsed > max) {
    throw new TypeError(`${flag} must be a whole number from 0 to ${max}, got "${value}"`);
  }
  return parsed;
}

/** The `startSandbox` options a command line asks for. */
export function parseSandboxArgs(argv: string[]): SandboxOptions & { port: number } {
  const flags = readFlags(argv);
  const options: SandboxOptions & { port: number } = { port: DEFAULT_PORT };
  const port = flags.get('--port');
  if (port !== undefined) options.port = whole('--port', port, 65_535);
  const host = flags.get('--host');
  if (host !== undefined) options.host = host;
  const credits = flags.get('--credits');
  if (credits !== undefined) {
    options.accounts = [{ apiKey: DEFAULT_API_KEY, credits: whole('--credits', credits, Number.MAX_SAFE_INTEGER) }];
  }
  const latency = flags.get('--latency');
  if (latency !== undefined) options.latencyMs = whole('--latency', latency, 600_000);
  const faultRate = flags.get('--fault-rate');
  if (faultRate !== undefined) {
    const rate = Number(faultRate);
    if (!/^(\d+\.?\d*|\.\d+)$/.test(faultRate) || !(rate >= 0 && rate <= 1)) {
      throw new TypeError(`--fault-rate must be a probability from 0 to 1, got "${faultRate}"`);
    }
    options.faults = { rate };
  }
  const seed = flags.get('--seed');
  if (seed !== undefined) options.seed = seed;
  const dialect = flags.get('--dialect');
  if (dialect !== undefined) {
    if (!(DIALECTS as readonly string[]).includes(dialect)) {
      throw new TypeError(`--dialect must be ${DIALECTS.join(' or ')}, got "${dialect}"`);
    }
    options.dialect = dialect as SandboxDialect;
  }
  return options;
}

export async function runSandboxCommand(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(SANDBOX_USAGE + '\n');
    return;
  }
  const options = parseSandboxArgs(argv);
  const sandbox = await startSandbox(options).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new Error(`port ${options.port} is already in use; pass --port 0 to pick a free one`);
    }
    throw error;
  });
  process.stdout.write(
    `sandbox listening on ${sandbox.url}\n` +
      `API key: ${sandbox.apiKey}\n` +
      `export SOCIALSTREAM_BASE_URL=${sandbox.url} SOCIALSTREAM_API_KEY=${sandbox.apiKey}\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await sandbox.close();
  process.stdout.write('sandbox stopped\n');
}
