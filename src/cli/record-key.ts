/** `--dedupe FIELD` reads its key the way the `dedupe` operator does: one dotted-path rule for both. */
export { keyReader as recordKey } from '../operators/dedupe.ts';
