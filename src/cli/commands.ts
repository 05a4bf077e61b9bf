/**
 * The commands of `socialstream`, each with its help. A command's module is imported only when it
 * runs or its help is asked for: the client's dependencies (undici, rxjs) take longer to load than
 * `--version` may take in all. The help of a command lives in its module (`help.ts` says how it is
 * shaped); this list only says where, so `main.ts`, `help <command>` and `docs/cli.md` read the same.
 */
import type { CommandHelp } from './help.ts';

export type Command = (argv: string[]) => Promise<number | void>;

export interface CommandEntry {
  readonly run: () => Promise<Command>;
  readonly help: () => Promise<CommandHelp>;
  /** The help of each subcommand by its word (`dataset info`); the command's own module dispatches them. */
  readonly subcommands?: Readonly<Record<string, () => Promise<CommandHelp>>>;
}

export const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  ops: { run: async () => (await import('./ops.ts')).runOps, help: async () => (await import('./ops.ts')).OPS_HELP },
  credits: { run: async () => (await import('./credits.ts')).runCredits, help: async () => (await import('./credits.ts')).CREDITS_HELP },
  export: { run: async () => (await import('./export.ts')).runExport, help: async () => (await import('./export-plan.ts')).EXPORT_HELP },
  dataset: {
    run: async () => (await import('./dataset.ts')).runDataset,
    help: async () => (await import('./dataset.ts')).DATASET_HELP,
    subcommands: {
      info: async () => (await import('./dataset.ts')).INFO_HELP,
      compact: async () => (await import('./dataset.ts')).COMPACT_HELP,
    },
  },
  sandbox: { run: async () => (await import('../sandbox/cli.ts')).runSandboxCommand, help: async () => (await import('../sandbox/cli.ts')).SANDBOX_HELP },
  worker: { run: async () => (await import('./worker.ts')).runWorkerCommand, help: async () => (await import('./worker.ts')).WORKER_HELP },
  status: { run: async () => (await import('./status.ts')).runStatus, help: async () => (await import('./status.ts')).STATUS_HELP },
};

/**
 * The help of `words` (`['export']`, `['dataset', 'info']`): a subcommand's when the second word
 * names one, else the command's; undefined for a word that is no command.
 */
export async function helpOf(words: readonly string[]): Promise<CommandHelp | undefined> {
  const [command, sub] = words;
  const entry = command === undefined ? undefined : (Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined);
  if (entry === undefined) return undefined;
  const subcommand = sub !== undefined && entry.subcommands !== undefined && Object.hasOwn(entry.subcommands, sub) ? entry.subcommands[sub] : undefined;
  return (subcommand ?? entry.help)();
}

/** Every command's help, then each of its subcommands', in the order of `COMMANDS`. */
export async function everyHelp(): Promise<CommandHelp[]> {
  const helps: CommandHelp[] = [];
  for (const entry of Object.values(COMMANDS)) {
    helps.push(await entry.help());
    for (const sub of Object.values(entry.subcommands ?? {})) helps.push(await sub());
  }
  return helps;
}

/** What `socialstream`, `socialstream --help` and `socialstream help` print: each command's first form and summary. */
export async function topLevelHelp(): Promise<string> {
  const commands = await Promise.all(Object.values(COMMANDS).map((entry) => entry.help()));
  const rows = [
    ['--version', 'the version of socialstream'],
    ['help <command>', "a command's help, as <command> --help prints it"],
    ...commands.map((help) => [help.usage[0], help.summary]),
  ];
  return (
    `socialstream: every page of the Social Data Extraction API, as records and files\n\nusage:\n` +
    rows.map(([form, summary]) => `  socialstream ${form}\n      ${summary}`).join('\n') +
    `\n\nRun 'socialstream <command> --help' (or -h) for a command's options and examples. Every command also takes\n` +
    `  --debug    on failure, print the stack trace after the message\n` +
    `Environment: SOCIALSTREAM_API_KEY (your key) and SOCIALSTREAM_BASE_URL (the service address); --sandbox needs neither.\n`
  );
}
