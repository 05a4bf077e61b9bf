#!/usr/bin/env node
/**
 * `socialstream`: the command line. Each command lives in its own module; this one only picks the
 * command, and turns whatever it throws into one line on stderr and an exit code.
 */
import { readFileSync } from 'node:fs';
import { keyScrubber } from '../scrub.ts';
import { explain, exitCodeOf } from './failure.ts';
import { UsageError } from './args.ts';
import { didYouMean } from '../near-name.ts';
import { COMMANDS, helpOf, topLevelHelp } from './commands.ts';
import { asksForHelp, renderHelp } from './help.ts';
import { watchStdout } from './stdout.ts';

/** The version in the package's own package.json: the nearest one above this module, in src/ or dist/. */
function packageVersion(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      return (JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { version: string }).version;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dir.pathname === '/') throw error;
    }
  }
}

async function main(argv: string[]): Promise<number> {
  const debug = argv.includes('--debug');
  const words = argv.filter((word) => word !== '--debug');
  const [command, ...rest] = words;
  if (command === undefined || command === '--help' || command === '-h') {
    process.stdout.write(await topLevelHelp());
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(packageVersion() + '\n');
    return 0;
  }
  try {
    if (command === 'help') return await printHelp(rest);
    const entry = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (!entry) throw new UsageError(`unknown command "${command}"${didYouMean(command, Object.keys(COMMANDS))}`);
    // -h and --help anywhere after a command: its help (or its subcommand's), whatever else is there.
    if (asksForHelp(rest)) return await printHelp([command, ...rest]);
    return (await (await entry.run())(rest)) ?? 0;
  } catch (error) {
    const code = exitCodeOf(error);
    const hint = (error as { resumeHint?: string }).resumeHint;
    // The client scrubs its own messages; this catches the key in any other (a file name, a parameter).
    const scrub = keyScrubber(process.env.SOCIALSTREAM_API_KEY?.trim() ?? '');
    process.stderr.write(scrub(explain(error, hint)) + '\n');
    if (debug && error instanceof Error && error.stack) process.stderr.write(scrub(error.stack) + '\n');
    return code;
  }
}

/** `help [command [subcommand]]`: that command's help, or the top-level help. */
async function printHelp(words: readonly string[]): Promise<number> {
  if (words.length === 0) {
    process.stdout.write(await topLevelHelp());
    return 0;
  }
  const help = await helpOf(words);
  if (help === undefined) throw new UsageError(`no help for "${words[0]}": it is no command${didYouMean(words[0], Object.keys(COMMANDS))}`);
  process.stdout.write(renderHelp(help));
  return 0;
}

watchStdout();
process.exitCode = await main(process.argv.slice(2));
