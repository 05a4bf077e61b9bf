/**
 * `socialstream sandbox`: runs the sandbox in the foreground until SIGINT or SIGTERM, printing
 * where it listens and how to point the client at it. SIGUSR2 lets time pass (`sandbox.advance`):
 * a signal rather than an HTTP path, so nothing beside the API reference's own paths is served on the port.
 */
import { DIALECTS, type SandboxDialect } from './dialects/index.ts';
import { DEFAULT_API_KEY, startSandbox, type SandboxFaults, type SandboxOptions } from './index.ts';
import type { FeedFault } from './platform.ts';
import { didYouMean } from '../near-name.ts';

const DEFAULT_PORT = 8787;
const DEFAULT_ADVANCE = 10;

/** The flags of `socialstream sandbox`, as its help shows them (the shape of the CLI's `HelpFlag`). */
const FLAG_HELP = [
  { name: 'port', value: 'N', help: `TCP port (default ${DEFAULT_PORT}; 0 picks a free one)` },
  { name: 'host', value: 'H', help: 'interface to bind (default 127.0.0.1)' },
  { name: 'credits', value: 'N', help: 'credits of the sandbox key (default 10000)' },
  { name: 'latency', value: 'MS', help: 'response time: each answer leaves MS after its request (default 0)' },
  { name: 'fault-rate', value: 'P', help: 'probability (0 to 1) of an upstream failure (500) per request (default 0)' },
  { name: 'seed', value: 'S', help: 'seed of the synthetic data (default sandbox)' },
  { name: 'dialect', value: 'D', help: 'spec (default): bodies as the API reference reads; service: as the service answers in practice' },
  { name: 'advance', value: 'N', help: `records each SIGUSR2 adds to every paginated resource (default ${DEFAULT_ADVANCE})` },
  {
    name: 'feed',
    value: 'LIST',
    help:
      'what real feeds serve, on the newest-first listings (forum/subforum, videosite/channel/shorts), comma-separated: ' +
      'pinned (the oldest post pinned at the top), garbage-time (every 37th record dated -1), future-time (every 41st dated 9999-12-31), ' +
      'out-of-order (every 43rd 400 days older than its place), keyless (every 29th with its id null), or all',
  },
] as const;

/** `socialstream sandbox --help`, as data the CLI prints and `docs/cli.md` is written from. */
export const SANDBOX_HELP = {
  command: 'sandbox',
  summary: 'run a local server that speaks the whole API with synthetic, deterministic data',
  usage: ['sandbox [--port N] [--host H] [--credits N] [--latency MS] [--fault-rate P] [--seed S] [--dialect spec|service] [--advance N] [--feed LIST]'],
  about: `It prints where it listens, its API key, and the line that points the client and the CLI at it.
kill -USR2 <pid> (the pid its banner prints) lets an hour of the sandbox's clock pass (a second per record
if more, never past this machine's clock): every paginated resource gains --advance new newest records
dated within it, and counters of existing records grow, as sandbox.advance({ records }) does.`,
  flags: FLAG_HELP,
  examples: [
    'sandbox                          # on http://127.0.0.1:8787 until Ctrl-C',
    'sandbox --port 0 --credits 50    # a free port, a key with 50 credits',
    'sandbox --fault-rate 0.1 --latency 200 --dialect service',
  ],
};

const FLAGS = FLAG_HELP.map((flag) => `--${flag.name}` as const);

/** `--feed` words and the fault kinds they turn on. */
const FEED_WORDS: Record<string, FeedFault> = {
  pinned: 'pinned',
  'garbage-time': 'garbageTime',
  'future-time': 'futureTime',
  'out-of-order': 'outOfOrder',
  keyless: 'keyless',
};
type Flag = `--${(typeof FLAG_HELP)[number]['name']}`;

/** Splits `--flag value` and `--flag=value` words; throws `TypeError` naming a bad or incomplete flag. */
function readFlags(argv: string[]): Map<Flag, string> {
  const values = new Map<Flag, string>();
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    const eq = word.indexOf('=');
    const name = eq === -1 ? word : word.slice(0, eq);
    if (!(FLAGS as readonly string[]).includes(name)) {
      throw new TypeError(word.startsWith('-') ? `unknown flag ${name}${didYouMean(name, FLAGS)}` : `unexpected argument "${word}"`);
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
export function parseSandboxArgs(argv: string[]): SandboxOptions & { port: number; advance?: number } {
  const flags = readFlags(argv);
  const options: SandboxOptions & { port: number; advance?: number } = { port: DEFAULT_PORT };
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
  const feed = flags.get('--feed');
  if (feed !== undefined) {
    const words = feed === 'all' ? Object.keys(FEED_WORDS) : feed.split(',').map((word) => word.trim());
    const faults: SandboxFaults = { ...options.faults };
    for (const word of words) {
      const kind = FEED_WORDS[word] as FeedFault | undefined;
      if (kind === undefined) throw new TypeError(`--feed takes ${Object.keys(FEED_WORDS).join(', ')} or all, got "${word}"`);
      faults[kind] = true;
    }
    options.faults = faults;
  }
  const seed = flags.get('--seed');
  if (seed !== undefined) options.seed = seed;
  const advance = flags.get('--advance');
  if (advance !== undefined) options.advance = whole('--advance', advance, 1_000_000);
  const dialect = flags.get('--dialect');
  if (dialect !== undefined) {
    if (!(DIALECTS as readonly string[]).includes(dialect)) {
      throw new TypeError(`--dialect must be ${DIALECTS.join(' or ')}, got "${dialect}"`);
    }
    options.dialect = dialect as SandboxDialect;
  }
  return options;
}

/**
 * Where the sandbox listens and the base URL to give the client. The client takes plain http on
 * loopback only, so a wildcard bind (0.0.0.0, ::) is announced by its loopback address, and a bind
 * to another single interface says why the client cannot use it as it is.
 */
function announce(url: string, apiKey: string): string {
  const { hostname, port } = new URL(url);
  const wildcard = hostname === '0.0.0.0' || hostname === '[::]';
  const base = wildcard ? `http://127.0.0.1:${port}` : url;
  const listening = wildcard ? `sandbox listening on every interface (${hostname}), port ${port}\n` : `sandbox listening on ${url}\n`;
  if (!wildcard && !LOOPBACK.test(hostname)) {
    return (
      listening +
      `API key: ${apiKey}\n` +
      `note: the client takes plain http on loopback only, so it refuses ${url} as a base URL; ` +
      `bind to 127.0.0.1 (the default) or 0.0.0.0 and use http://127.0.0.1:${port} on this machine, or put an HTTPS proxy in front\n`
    );
  }
  return listening + `API key: ${apiKey}\n` + `export SOCIALSTREAM_BASE_URL=${base} SOCIALSTREAM_API_KEY=${apiKey}\n`;
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

export async function runSandboxCommand(argv: string[]): Promise<void> {
  // `advance` is the command's own (records a SIGUSR2 adds), not the server's.
  const { advance: perSignal, ...options } = parseSandboxArgs(argv);
  const sandbox = await startSandbox(options).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new Error(`port ${options.port} is already in use; pass --port 0 to pick a free one`);
    }
    throw error;
  });
  const step = perSignal ?? DEFAULT_ADVANCE;
  let added = 0;
  const advance = () => {
    sandbox.advance({ records: step });
    added += step;
    process.stdout.write(`advanced: every paginated resource has ${added} new records; the sandbox clock reads ${new Date(sandbox.now).toISOString()}\n`);
  };
  process.on('SIGUSR2', advance);
  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      process.off('SIGUSR2', advance);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  // The banner comes last: whoever waits for it may signal at once, and Node's default for SIGUSR2 is
  // to exit. It names this process's pid because `$!` in a shell often does not (`npx` runs the
  // sandbox as a child of npm, which does not pass signals on).
  process.stdout.write(
    announce(sandbox.url, sandbox.apiKey) + `pid ${process.pid}: kill -USR2 ${process.pid} adds ${step} new records to every paginated resource\n`,
  );
  await stopped;
  await sandbox.close();
  process.stdout.write('sandbox stopped\n');
}
