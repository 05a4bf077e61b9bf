/**
 * Every public function that takes an options object refuses a name it does not know, with an
 * `OptionError` naming it: a misspelt or imagined option (`startSandbox({ credits: 3 })`, the option
 * being `accounts`) would otherwise be ignored in silence, and the caller would never learn why the
 * setting had no effect. Imports nothing but the error classes, so the client, the sinks, the export
 * engine, the queue and the sandbox can all use it.
 */
import { OptionError } from './errors.ts';
import { nearestName } from './near-name.ts';

/**
 * The option names of an options type, each `true`: write a list as `{ … } as const satisfies
 * KnownOptions<XOptions>`, and an option added to `XOptions` but not to its list fails to compile
 * (as does a name in the list that `XOptions` lacks).
 */
export type KnownOptions<T> = { readonly [K in keyof Required<T>]: true };

/**
 * Throws an `OptionError` for the first own key of `options` that `known` does not list: `where:
 * unknown option limt (did you mean limit?)`, or with the known names when none is near. `meant`
 * answers names people are known to try (`credits: 'credits go in accounts: [{ apiKey, credits }]'`).
 * Anything but an object is left to the function's own checks.
 */
export function refuseUnknownOptions(
  options: unknown,
  known: Readonly<Record<string, true>>,
  where: string,
  meant: Readonly<Record<string, string>> = {},
): void {
  if (typeof options !== 'object' || options === null) return;
  for (const name of Object.keys(options)) {
    if (Object.hasOwn(known, name)) continue;
    const names = Object.keys(known);
    const near = nearestName(name, names);
    const hint = Object.hasOwn(meant, name) ? meant[name] : near === undefined ? `known: ${names.join(', ')}` : `did you mean ${near}?`;
    throw new OptionError([`${where}: unknown option `, { option: name }, ` (${hint})`]);
  }
}
