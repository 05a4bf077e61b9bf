/**
 * The dialects the sandbox speaks: `spec` answers as the API reference reads (docs/wire.md), `service` as the
 * service answers in practice (docs/wire.md "Service dialect"). Both serve the same records.
 */
import type { SandboxOperation } from '../platform.ts';
import { serviceOperations } from './service.ts';

/** `spec` answers as the API reference reads; `service` as the service answers in practice. */
export type SandboxDialect = 'spec' | 'service';
export const DIALECTS: readonly SandboxDialect[] = ['spec', 'service'];

/** The operations as a dialect answers them. */
export function dialectOperations(dialect: SandboxDialect, operations: readonly SandboxOperation[]): readonly SandboxOperation[] {
  return dialect === 'service' ? serviceOperations(operations) : operations;
}
