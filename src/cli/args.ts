/**
 * Command-line words → a typed request. Flags are declared once, with their kind, so that parsing,
 * `--help` and the "unknown flag" message all come from the same list.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type FlagKind = 'boolean' | 'string' | 'integer' | 'number';

export interface FlagSpec {
  name: string;
  kind: FlagKind;
  /** Shown by `--help`. */
  help: string;
  /** Placeholder in `--help`, e.g. `FILE`. */
  value?: string;
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
      if (!spec) throw new UsageError(`unknown option --${name}`);
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

function convert(name: string, kind: FlagKind, raw: string): string | number {
  if (kind === 'string') return raw;
  const value = Number(raw);
  const ok = raw.trim() !== '' && Number.isFinite(value) && (kind === 'number' || Number.isSafeInteger(value));
  if (!ok || value < 0) {
    throw new UsageError(`--${name} must be a non-negative ${kind === 'integer' ? 'whole number' : 'number'}, got "${raw}"`);
  }
  return value;
}

/** The `--help` lines of a flag list. */
export function describeFlags(specs: readonly FlagSpec[]): string {
  const rows = specs.map((spec) => [`--${spec.name}${spec.value ? ` ${spec.value}` : ''}`, spec.help]);
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`).join('\n');
}

/**
 * One line of an `--inputs` file: `key=value key=value` as on the command line, or a JSON object.
 * Returns undefined for blank and `#` lines.
 */
export function parseInputLine(line: string, lineNumber: number): Record<string, string> | undefined {
  const text = line.trim();
  if (text === '' || text.startsWith('#')) return undefined;
  if (text.startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new UsageError(`inputs line ${lineNumber}: not valid JSON`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new UsageError(`inputs line ${lineNumber}: expected a JSON object`);
    }
    const params: Record<string, string> = {};
    for (const [key, item] of Object.entries(value)) {
      if (item === null || typeof item === 'object') {
        throw new UsageError(`inputs line ${lineNumber}: "${key}" must be a string, number or boolean`);
      }
      params[key] = String(item);
    }
    return params;
  }
  const params: Record<string, string> = {};
  for (const word of splitWords(text)) {
    const eq = word.indexOf('=');
    if (eq <= 0) throw new UsageError(`inputs line ${lineNumber}: "${word}" is not key=value`);
    params[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return params;
}

/** Splits on white space, keeping double-quoted runs together (`query="two words"`). */
function splitWords(text: string): string[] {
  const words: string[] = [];
  const pattern = /(?:[^\s"]+|"[^"]*")+/g;
  for (const match of text.matchAll(pattern)) words.push(match[0].replace(/"/g, ''));
  return words;
}
