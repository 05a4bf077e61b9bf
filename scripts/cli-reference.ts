/**
 * Writes docs/cli.md, the command-line reference, from the commands' own help (`src/cli/commands.ts`
 * and the help each command module keeps): `npm run docs:cli`. The page is committed, and
 * test/docs/cli-reference.test.ts fails when it differs from what this would write now.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { everyHelp, topLevelHelp } from '../src/cli/commands.ts';
import { renderHelp } from '../src/cli/help.ts';

export const CLI_REFERENCE = fileURLToPath(new URL('../docs/cli.md', import.meta.url));

/** The text of docs/cli.md. */
export async function cliReference(): Promise<string> {
  const helps = await everyHelp();
  const anchor = (command: string) => command.replace(/ /g, '-');
  return [
    '# Command-line reference',
    '',
    '<!-- Written by `npm run docs:cli` (scripts/cli-reference.ts) from the help of each command; edit the help, not this page. -->',
    '',
    'Every command prints the same text for `-h`, `--help` and `socialstream help <command>`. Exit codes: 0 done, 2 a usage error',
    '(the message says what to fix), and the codes each command lists below.',
    '',
    '| command | what it does |',
    '| --- | --- |',
    ...helps.map((help) => `| [\`socialstream ${help.command}\`](#${anchor(help.command)}) | ${help.summary.replace(/\|/g, '\\|')} |`),
    '',
    '## socialstream',
    '',
    '```text',
    (await topLevelHelp()).trimEnd(),
    '```',
    ...helps.flatMap((help) => ['', `## ${help.command}`, '', '```text', renderHelp(help).trimEnd(), '```']),
    '',
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(CLI_REFERENCE, await cliReference());
  process.stdout.write(`wrote ${CLI_REFERENCE}\n`);
}
