/**
 * The dialects the sandbox speaks: `spec` answers as SPEC reads (docs/wire.md), `service` as the
 * service answers in practice (docs/wire.md "Service dialect"). Both serve the same records.
 */
import type { SandboxOperation } from '../platform.ts';
import { serviceOperations } from './service.ts';

export const DIALECTS = ['spec', 'service'] as const;
export type SandboxDialect = (typeof DIALECTS)[number];

/** The operations as a dialect answers them. */
export function dialectOperations(dialect: SandboxDialect, operations: readonly SandboxOperation[]): readonly SandboxOperation[] {
  return dialect === 'service' ? serviceOperations(operations) : operations;
}
