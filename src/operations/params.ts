/**
 * Parameters: their TypeScript types, derived from the table so `client.forum.subforum({ sort: 'neww' })`
 * does not compile, and the same rules checked at run time (for JavaScript callers, the CLI and
 * checkpoints) before any request, so a bad value costs no credit.
 */
import { ValidationError } from '../errors.ts';
import type { OperationSpec, ParamSpec } from './spec.ts';
import { nearestName } from '../near-name.ts';

type ValueOf<P> = P extends { readonly values: readonly (infer V)[] }
  ? V
  : P extends { readonly type: 'string' }
    ? string
    : P extends { readonly type: 'integer' | 'number' }
      ? number
      : P extends { readonly type: 'boolean' }
        ? boolean
        : never;

type RequiredNames<Ps> = { [K in keyof Ps]: Ps[K] extends { readonly required: true } ? K : never }[keyof Ps];

type Flatten<T> = { [K in keyof T]: T[K] } & {};

type BaseParams<Ps> = Flatten<
  { [K in RequiredNames<Ps>]: ValueOf<Ps[K]> } & { [K in Exclude<keyof Ps, RequiredNames<Ps>>]?: ValueOf<Ps[K]> }
>;

/** A "one of" pair: at least one of the two names is present. */
type OneOfParams<Op> = Op extends { readonly oneOf: readonly [readonly [infer A extends string, infer B extends string]] }
  ? { [K in A]: string } | { [K in B]: string }
  : unknown;

/** The params object of an operation row. */
export type ParamsOf<Op extends { readonly params: object }> = BaseParams<Op['params']> & OneOfParams<Op>;

/** A plain parameter value as a caller may give it. */
export type ParamValue = string | number | boolean;

/**
 * Checks `params` against `op` and returns the query string values to send. Throws
 * `ValidationError` naming the parameter (and the allowed values) at the first problem.
 */
export function checkParams(op: OperationSpec, params: unknown): Record<string, string> {
  if (params === undefined || params === null) params = {};
  if (typeof params !== 'object' || Array.isArray(params)) {
    throw new ValidationError(`${op.id}: params must be an object`, undefined, { endpoint: op.id });
  }
  const given = params as Record<string, unknown>;
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined || value === null) continue;
    const spec = op.params[name];
    if (spec === undefined) {
      const known = Object.keys(op.params);
      const near = nearestName(name, known);
      throw invalid(op, name, `unknown parameter ${name} (${near === undefined ? '' : `did you mean ${near}? `}known: ${known.join(', ')})`);
    }
    query[name] = checkValue(op, name, spec, value);
  }
  for (const [name, spec] of Object.entries(op.params)) {
    if (spec.required && !(name in query)) throw invalid(op, name, `missing required parameter ${name}`);
  }
  for (const [a, b] of op.oneOf ?? []) {
    if (!(a in query) && !(b in query)) throw invalid(op, a, `missing required parameter: ${a} or ${b}`);
  }
  for (const { param, equals, needs } of op.dependencies ?? []) {
    if (query[param] === String(equals) && !(needs in query)) {
      throw invalid(op, needs, `${param}=${String(equals)} needs ${needs}`);
    }
  }
  return query;
}

function checkValue(op: OperationSpec, name: string, spec: ParamSpec, value: unknown): string {
  const text = wireText(op, name, spec, value);
  if (spec.values !== undefined && !spec.values.some((allowed) => String(allowed) === text)) {
    throw invalid(op, name, `${name} must be one of ${spec.values.join(', ')} (got ${JSON.stringify(value)})`);
  }
  if (spec.min !== undefined && Number(text) < spec.min) {
    throw invalid(op, name, `${name} must be at least ${spec.min} (got ${text})`);
  }
  if (spec.max !== undefined && Number(text) > spec.max) {
    throw invalid(op, name, `${name} must be at most ${spec.max} (got ${text})`);
  }
  if (spec.pattern !== undefined && !new RegExp(`^(?:${spec.pattern.source})$`).test(text)) {
    throw invalid(op, name, `${name} must be ${spec.pattern.description} (got ${JSON.stringify(value)})`);
  }
  return text;
}

/** The value as it goes on the wire. Numeric and boolean strings are accepted too (CLI, checkpoints). */
function wireText(op: OperationSpec, name: string, spec: ParamSpec, value: unknown): string {
  switch (spec.type) {
    case 'string':
      if (typeof value === 'string' && value.trim() !== '') return value;
      if (typeof value === 'number' && Number.isFinite(value)) return String(value);
      throw invalid(op, name, `${name} must be a non-empty string (got ${JSON.stringify(value)})`);
    case 'integer':
    case 'number': {
      const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
      if (!Number.isFinite(number) || (spec.type === 'integer' && !Number.isInteger(number))) {
        throw invalid(op, name, `${name} must be ${spec.type === 'integer' ? 'an integer' : 'a number'} (got ${JSON.stringify(value)})`);
      }
      return String(number);
    }
    case 'boolean':
      if (value === true || value === 'true') return 'true';
      if (value === false || value === 'false') return 'false';
      throw invalid(op, name, `${name} must be true or false (got ${JSON.stringify(value)})`);
  }
}

function invalid(op: OperationSpec, param: string, problem: string): ValidationError {
  return new ValidationError(`${op.id}: ${problem}`, param, { endpoint: op.id });
}
