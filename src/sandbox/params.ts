/**
 * Reading a handler's query. Each helper either returns a clean value or throws
 * `SandboxValidationError` with the message docs/wire.md lists, so handlers stay short and every
 * platform words its 400s the same way.
 */
import { SandboxValidationError } from './platform.ts';

/** Echoed values are clipped so that a huge query cannot produce a huge error body. */
function shown(value: string): string {
  return value.length > 40 ? `${value.slice(0, 40)}…` : value;
}

/** The value of `name`, or `undefined` when absent or blank. */
export function optional(query: URLSearchParams, name: string): string | undefined {
  const value = query.get(name);
  if (value === null || value.trim() === '') return undefined;
  return value;
}

/** The value of `name`; absent or blank is `Missing required parameter: <name>` unless `message` says otherwise. */
export function required(query: URLSearchParams, name: string, message?: string, extra?: Record<string, unknown>): string {
  const value = optional(query, name);
  if (value === undefined) {
    throw new SandboxValidationError(message ?? `Missing required parameter: ${name}`, extra);
  }
  return value;
}

/** A value from an allowed set (exact match), or `fallback` when absent. */
export function oneOf<T extends string>(query: URLSearchParams, name: string, allowed: readonly T[], fallback: T): T;
export function oneOf<T extends string>(query: URLSearchParams, name: string, allowed: readonly T[]): T | undefined;
export function oneOf<T extends string>(
  query: URLSearchParams,
  name: string,
  allowed: readonly T[],
  fallback?: T,
): T | undefined {
  const value = optional(query, name);
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) invalid(name, value);
  return value as T;
}

/** A decimal integer within [min, max], or `fallback` when absent. */
export function integer(query: URLSearchParams, name: string, min: number, max: number, fallback: number): number;
export function integer(query: URLSearchParams, name: string, min: number, max: number): number | undefined;
export function integer(
  query: URLSearchParams,
  name: string,
  min: number,
  max: number,
  fallback?: number,
): number | undefined {
  const value = optional(query, name);
  if (value === undefined) return fallback;
  if (!/^-?\d{1,16}$/.test(value.trim())) invalid(name, value);
  const parsed = Number(value.trim());
  if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) invalid(name, value);
  return parsed;
}

/** A finite decimal number, or `undefined` when absent. */
export function decimal(query: URLSearchParams, name: string, message?: string): number | undefined {
  const value = optional(query, name);
  if (value === undefined) return undefined;
  const parsed = Number(value.trim());
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value.trim()) || !Number.isFinite(parsed)) {
    throw new SandboxValidationError(message ?? `Invalid value for ${name}: ${shown(value)}`);
  }
  return parsed;
}

/** A `YYYY-MM-DD` calendar date that exists, or `undefined` when absent. */
export function isoDate(query: URLSearchParams, name: string): string | undefined {
  const value = optional(query, name);
  if (value === undefined) return undefined;
  const millis = Date.parse(`${value}T00:00:00Z`);
  // Date.parse rolls 2025-02-30 over into March; the round trip refuses it.
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(millis) || new Date(millis).toISOString().slice(0, 10) !== value) {
    invalid(name, value);
  }
  return value;
}

/** `true`/`false` (also `1`/`0`), or `fallback` when absent. */
export function flag(query: URLSearchParams, name: string, fallback = false): boolean {
  const value = optional(query, name);
  if (value === undefined) return fallback;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  invalid(name, value);
}

/** The 400 for a value outside what a parameter accepts. */
export function invalid(name: string, value: string): never {
  throw new SandboxValidationError(`Invalid value for ${name}: ${shown(value)}`);
}
