/**
 * The cursor forms of the `service` dialect (docs/wire.md "Service dialect"). Each form wraps the
 * `spec`-dialect cursor a platform module issued, so the module itself never changes: `encode` turns
 * that cursor into what the service sends, `decode` turns the value a client sends back into it
 * again, or refuses it. A value is accepted only byte for byte as issued: decoding re-encodes and
 * compares, so a client that decodes, re-encodes or trims a cursor gets `400 Invalid cursor`.
 */
import { SandboxValidationError } from '../platform.ts';

export type CursorForm =
  /** Sent as the API reference's dialect sends it (the integers of E3 and E5, the subforum's `after`). */
  | 'same'
  /** Standard base64 (`+`, `/`) that always ends in `=` padding. */
  | 'base64'
  /** URL-encoded text: `v1/<base64>` percent-encoded, so it always holds `%2F` (and often `%2B`, `%3D`). */
  | 'urltext'
  /** A comma-separated list of base-36 ids (the forum comment tree). */
  | 'ids';

/** Pads with `.`, which base64url cursors never hold, so that the base64 always ends in `=`. */
const FILLER = '.';

function toBase64(text: string): string {
  const padded = text.length % 3 === 0 ? text + FILLER : text;
  return Buffer.from(padded, 'utf8').toString('base64');
}

function fromBase64(value: string): string | undefined {
  if (!/^[A-Za-z0-9+/]+={1,2}$/.test(value)) return undefined;
  const bytes = Buffer.from(value, 'base64');
  if (bytes.toString('base64') !== value) return undefined;
  const text = bytes.toString('utf8');
  return text.endsWith(FILLER) ? text.slice(0, -FILLER.length) : text;
}

const URL_PREFIX = 'v1/';

/** The forum's `spec`-dialect cursor is base64url JSON `{ r, f: [5 integers] }`; its service form lists them. */
function toIds(cursor: string): string {
  const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { r: number; f: number[] };
  return [parsed.r, ...parsed.f].map((n) => n.toString(36)).join(',');
}

function fromIds(value: string): string | undefined {
  const parts = value.split(',');
  if (parts.length !== 6 || !parts.every((part) => /^-?[0-9a-z]{1,12}$/.test(part))) return undefined;
  const numbers = parts.map((part) => parseInt(part, 36));
  if (numbers.map((n) => n.toString(36)).join(',') !== value) return undefined;
  const [r, ...f] = numbers;
  return Buffer.from(JSON.stringify({ r, f })).toString('base64url');
}

/** The service form of a `spec`-dialect cursor (or of the dialect's own end marker). */
export function encodeServiceCursor(form: CursorForm, cursor: string): string {
  switch (form) {
    case 'same':
      return cursor;
    case 'base64':
      return toBase64(cursor);
    case 'urltext':
      return encodeURIComponent(URL_PREFIX + toBase64(cursor));
    case 'ids':
      return toIds(cursor);
  }
}

/** The `spec`-dialect cursor behind a service cursor; `400 Invalid cursor` when it is not one the dialect issued. */
export function decodeServiceCursor(form: CursorForm, value: string): string {
  let cursor: string | undefined;
  switch (form) {
    case 'same':
      cursor = value;
      break;
    case 'base64':
      cursor = fromBase64(value);
      break;
    case 'urltext': {
      let text: string | undefined;
      try {
        text = decodeURIComponent(value);
      } catch {
        text = undefined;
      }
      if (text !== undefined && encodeURIComponent(text) === value && text.startsWith(URL_PREFIX)) {
        cursor = fromBase64(text.slice(URL_PREFIX.length));
      }
      break;
    }
    case 'ids':
      cursor = fromIds(value);
      break;
  }
  if (cursor === undefined) throw new SandboxValidationError('Invalid cursor');
  return cursor;
}
