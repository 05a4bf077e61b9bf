/** `socialstream credits`: the balance of the key in SOCIALSTREAM_API_KEY (free: costs no credit). */
import { noArguments, parseArgs, type FlagSpec } from './args.ts';
import { counted } from '../export/progress.ts';
import type { CommandHelp } from './help.ts';

const FLAGS: FlagSpec[] = [
  { name: 'json', kind: 'boolean', help: 'print the balance record as JSON' },
  { name: 'sandbox', kind: 'boolean', help: 'ask the built-in sandbox instead of the service' },
];

export const CREDITS_HELP: CommandHelp = {
  command: 'credits',
  summary: 'the balance of the key in SOCIALSTREAM_API_KEY (asking costs no credit)',
  usage: ['credits [--json] [--sandbox]'],
  flags: FLAGS,
  examples: ['credits', 'credits --json   # the balance record, for scripts'],
};

export async function runCredits(argv: string[]): Promise<number> {
  const args = parseArgs(argv, FLAGS);
  noArguments('credits', args);
  // Loaded here, not above: the client's dependencies would slow every `help` that reads this module's help.
  const { connect } = await import('./connection.ts');
  const connection = await connect({ sandbox: args.flags.sandbox === true });
  try {
    const balance = await connection.client.credits();
    if (args.flags.json) {
      process.stdout.write(JSON.stringify(balance) + '\n');
    } else {
      const purchase = balance.subscriptionId ? ` (last credit pack: ${balance.subscriptionId})` : '';
      process.stdout.write(`${counted(balance.credits, 'credit')} · account ${balance.subscriptionStatus}${purchase}\n`);
    }
    return 0;
  } finally {
    await connection.close();
  }
}
