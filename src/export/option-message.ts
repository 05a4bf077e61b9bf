/**
 * How an option rule writes its `OptionError`: a template in which each `option(name)` marks an
 * option's name, so the CLI can spell it as its flag (docs/architecture.md "Where option rules live").
 * E.g. ``optionError`${option('resume')} and ${option('restart')} contradict each other` ``.
 */
import { OptionError, type OptionMessagePart } from '../errors.ts';

/** `name` marked as an option in an `optionError` template. */
export function option(name: string): { readonly option: string } {
  return { option: name };
}

/** An `OptionError` from a template: `option(name)` values are options, any other value is shown as it is. */
export function optionError(text: TemplateStringsArray, ...values: unknown[]): OptionError {
  const parts: OptionMessagePart[] = [text[0]];
  values.forEach((value, index) => parts.push(isOption(value) ? value : String(value), text[index + 1]));
  return new OptionError(parts.filter((part) => part !== ''));
}

function isOption(value: unknown): value is { readonly option: string } {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 1 && typeof (value as { option?: unknown }).option === 'string';
}
