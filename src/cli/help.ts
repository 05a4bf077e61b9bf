/**
 * A command's help as data: what it does, how it is called, its flags and examples. Each command
 * module keeps its own next to its code; `main.ts` prints it for `-h`, `--help` and `help <command>`,
 * and `scripts/cli-reference.ts` writes `docs/cli.md` from the same data, so the two cannot drift.
 */

/** A flag as its help shows it (a `FlagSpec` is one). */
export interface HelpFlag {
  readonly name: string;
  /** Placeholder of its value, e.g. `FILE`. */
  readonly value?: string;
  readonly help: string;
}

export interface CommandHelp {
  /** The words after `socialstream`: `export`, `dataset info`. */
  readonly command: string;
  /** One line: what the command does (the top-level help and the reference's index). */
  readonly summary: string;
  /** Its forms, each without the leading `socialstream `. */
  readonly usage: readonly string[];
  /** More on what it does and its arguments, as paragraphs. */
  readonly about?: string;
  readonly flags: readonly HelpFlag[];
  /** Command lines (without `socialstream `), each optionally followed by `  # what it does`. */
  readonly examples: readonly string[];
  /** What follows the examples: exit codes, signals. */
  readonly notes?: string;
}

/** Every command answers `-h` and `--help`: listed here once rather than in each flag list. */
const HELP_FLAG: HelpFlag = { name: 'help', help: 'show this help (also -h; or: socialstream help <command>)' };

/** The text `socialstream <command> --help` prints. */
export function renderHelp(help: CommandHelp): string {
  const [first, ...more] = help.usage;
  const sections = [
    [`usage: socialstream ${first}`, ...more.map((form) => `       socialstream ${form}`)].join('\n'),
    help.summary + (help.about === undefined ? '' : `\n\n${help.about}`),
    `options:\n${describeFlags([...help.flags, HELP_FLAG])}`,
    `examples:\n${help.examples.map((example) => `  socialstream ${example}`).join('\n')}`,
    ...(help.notes === undefined ? [] : [help.notes]),
  ];
  return sections.join('\n\n') + '\n';
}

/** The flag table of a help: `  --name VALUE  what it does`, aligned. */
function describeFlags(flags: readonly HelpFlag[]): string {
  const rows = flags.map((flag) => [`--${flag.name}${flag.value ? ` ${flag.value}` : ''}`, flag.help]);
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`).join('\n');
}

/** Whether `argv` asks for help: `-h` or `--help` among its words. */
export function asksForHelp(argv: readonly string[]): boolean {
  return argv.includes('-h') || argv.includes('--help');
}
