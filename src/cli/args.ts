/**
 * Command-line words → a typed request. Flags are declared once, with their kind and the library
 * option each sets, so that parsing, `--help`, the "unknown flag" message, the options a command
 * hands the library and the flags its errors name all come from the same list. The rules an option's
 * value must follow are the library's (`src/export/options.ts`), not the command line's: this module
 * checks only the syntax of argv.
 */
import { OptionError } from '../errors.ts';
import { didYouMean } from '../near-name.ts';

export class UsageError extends Error {
  override readonly name: string = 'UsageError';
}

export type FlagKind = 'boolean' | 'string' | 'integer' | 'number';

export interface FlagSpec {
  name: string;
  kind: FlagKind;
  /** Shown by `--help` (a `FlagSpec` is a `HelpFlag`, see `help.ts`). */
  help: string;
  /** Placeholder in `--help`, e.g. `FILE`. */
  value?: string;
  /** The library option this flag sets, as given (`max-pages` → `maxPages`); the library checks it. */
  option?: string;
}

export interface ParsedArgs {
  /** `key=value` words, in order. */
  params: Record<string, string>;
  /** Other bare words. */
  positionals: string[];
  flags: Record<string, string | number | boolean>;
}

/**
 * Parses `argv` against `specs`. `--flag value` and `--flag=value` both work; a bare word holding `=`
 * is an operation parameter (`handle=creator`). Numbers are checked here, so a command never sees
 * `--limit abc`.
 */
export function parseArgs(argv: readonly string[], specs: readonly FlagSpec[]): ParsedArgs {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const parsed: ParsedArgs = { params: {}, positionals: [], flags: {} };
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (word.startsWith('--')) {
      const eq = word.indexOf('=');
      const name = word.slice(2, eq === -1 ? undefined : eq);
      const spec = byName.get(name);
      if (!spec) throw new UsageError(`unknown option --${name}${didYouMean(name, specs.map((known) => known.name), '--')}`);
      if (spec.kind === 'boolean') {
        if (eq !== -1) throw new UsageError(`--${name} takes no value`);
        parsed.flags[name] = true;
        continue;
      }
      const raw: string | undefined = eq === -1 ? argv[++i] : word.slice(eq + 1);
      if (raw === undefined || (eq === -1 && raw.startsWith('--'))) {
        throw new UsageError(`--${name} needs a value${spec.value ? ` (${spec.value})` : ''}`);
      }
      parsed.flags[name] = convert(name, spec.kind, raw);
    } else if (word.includes('=') && !word.startsWith('=')) {
      const eq = word.indexOf('=');
      parsed.params[word.slice(0, eq)] = word.slice(eq + 1);
    } else {
      parsed.positionals.push(word);
    }
  }
  return parsed;
}

/** Rejects any word but flags: for commands that take no arguments (`ops`, `credits`). */
export function noArguments(command: string, args: ParsedArgs): void {
  const [word] = [...args.positionals, ...Object.entries(args.params).map(([name, value]) => `${name}=${value}`)];
  if (word !== undefined) throw new UsageError(`${command} takes no arguments, got "${word}"`);
}

function convert(name: string, kind: FlagKind, raw: string): string | number {
  if (kind === 'string') return raw;
  const value = Number(raw);
  const ok = raw.trim() !== '' && Number.isFinite(value) && (kind === 'number' || Number.isSafeInteger(value));
  if (!ok) throw new UsageError(`--${name} must be a ${kind === 'integer' ? 'whole number' : 'number'}, got "${raw}"`);
  return value;
}

/** The library options the given flags set: each flag's value under its `option` name (a boolean flag: `true`). */
export function optionsOf(flags: ParsedArgs['flags'], specs: readonly FlagSpec[]): Record<string, string | number | boolean> {
  const options: Record<string, string | number | boolean> = {};
  for (const spec of specs) if (spec.option !== undefined && flags[spec.name] !== undefined) options[spec.option] = flags[spec.name];
  return options;
}

/**
 * The library's `OptionError` as the command line says it: each option spelled as its flag
 * (`keepDuplicates` → `--keep-duplicates`), a usage error (exit 2). Any other error as it is.
 */
export function asFlags(error: unknown, specs: readonly FlagSpec[]): unknown {
  if (!(error instanceof OptionError)) return error;
  const flagOf = new Map(specs.flatMap((spec) => (spec.option === undefined ? [] : [[spec.option, `--${spec.name}`]])));
  return new UsageError(error.describe((name) => flagOf.get(name) ?? name), { cause: error });
}

/**
 * One line of an `--inputs` file: `key=value key=value` as on the command line, or a JSON object.
 * Returns undefined for blank and `#` lines. Errors start with `where` (the file and line).
 */
export function parseInputLine(line: string, where: string): Record<string, string> | undefined {
  const text = line.trim();
  if (text === '' || text.startsWith('#')) return undefined;
  const params: Record<string, string> = {};
  const add = (key: string, value: string): void => {
    if (Object.hasOwn(params, key)) throw new UsageError(`${where}: "${key}" is given twice`);
    params[key] = value;
  };
  if (text.startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new UsageError(`${where}: not valid JSON`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new UsageError(`${where}: expected a JSON object`);
    }
    for (const [key, item] of Object.entries(value)) {
      if (item === null || typeof item === 'object') {
        throw new UsageError(`${where}: "${key}" must be a string, number or boolean`);
      }
    }
    // JSON.parse keeps the last of two equal keys without a word; the flat object is read again to see them.
    for (const key of flatJsonKeys(text)) add(key, String((value as Record<string, unknown>)[key]));
    return params;
  }
  for (const word of splitWords(text)) {
    const eq = word.indexOf('=');
    if (eq <= 0) throw new UsageError(`${where}: "${word}" is not key=value`);
    add(word.slice(0, eq), word.slice(eq + 1));
  }
  return params;
}

/** Every key of a JSON object whose values are all strings, numbers or booleans, repeats included. */
function flatJsonKeys(text: string): string[] {
  const member = /\s*("(?:[^"\\]|\\.)*")\s*:\s*(?:"(?:[^"\\]|\\.)*"|[^,}\s]+)\s*[,}]/y;
  member.lastIndex = 1;
  const keys: string[] = [];
  for (let match = member.exec(text); match !== null; match = member.exec(text)) keys.push(JSON.parse(match[1]) as string);
  return keys;
}

/** Splits on white space, keeping double-quoted runs together (`query="two words"`). */
function splitWords(text: string): string[] {
  const words: string[] = [];
  const pattern = /(?:[^\s"]+|"[^"]*")+/g;
  for (const match of text.matchAll(pattern)) words.push(match[0].replace(/"/g, ''));
  return words;
}
