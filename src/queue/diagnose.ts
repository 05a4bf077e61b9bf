/**
 * Why a connection to the queue's Redis failed, as one typed error: an address that cannot work
 * however often it is tried (not Redis, a refused password, TLS against a server without it) or a
 * Redis that did not answer this time (`QueueUnreachableError`, which a worker tries again).
 */
import { connect } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { shownUrl } from './address.ts';
import { QueueAuthError, QueueNotRedisError, QueueTlsError, QueueUnreachableError, type QueueError } from './errors.ts';

/** `errors`: what the connection reported, in order (ioredis's own rejection only says "Connection is closed"). */
export async function diagnose(errors: readonly Error[], url: string): Promise<QueueError> {
  const shown = shownUrl(url);
  for (const error of errors) {
    const refusal = refusalOf(error, shown);
    if (refusal !== undefined) return refusal;
  }
  const [error] = errors;
  // The peer may have hung up before its answer was read (an HTTP server closes after its 400), and
  // a plain Redis says nothing to a TLS greeting: what a plain-text PING gets back tells both.
  const address = new URL(url);
  const answer = await plainAnswer(address);
  const redisLike = answer !== undefined && (answer.startsWith('+') || answer.startsWith('-'));
  if (address.protocol === 'rediss:' && redisLike) {
    return new QueueTlsError(`${shown} asks for TLS, but the server there speaks plain Redis: use redis:// (or turn TLS on in Redis)`, { cause: error });
  }
  if (address.protocol === 'redis:' && answer !== undefined && !redisLike) return notRedis(shown, answer, error);
  // A TLS server hangs up on plain text without a word; a handshake tells.
  if (address.protocol === 'redis:' && answer === undefined && (await completesTls(address))) {
    return new QueueTlsError(`${shown} is plain, but the server there speaks TLS: use rediss://`, { cause: error });
  }
  return new QueueUnreachableError(`cannot reach Redis at ${shown}: ${error.message}`, { cause: error });
}

function refusalOf(error: Error, shown: string): QueueError | undefined {
  const { message } = error;
  const resp = /Unknown RESP type \d+ "(.)"/.exec(message);
  if (resp !== null) return notRedis(shown, resp[1], error);
  if (message.startsWith('WRONGPASS')) {
    return new QueueAuthError(`Redis at ${shown} refused the password (WRONGPASS): check the user and password in --queue (redis://[USER]:PASSWORD@HOST:PORT/DB)`, { cause: error });
  }
  if (message.startsWith('NOAUTH')) {
    return new QueueAuthError(`Redis at ${shown} needs a password: give it in --queue as redis://:PASSWORD@HOST:PORT/DB`, { cause: error });
  }
  return undefined;
}

function notRedis(shown: string, answer: string, cause: Error): QueueNotRedisError {
  const first = JSON.stringify(answer.slice(0, 1));
  const like = answer.startsWith('H') ? ', as an HTTP server does' : '';
  return new QueueNotRedisError(`${shown} is not Redis: its answer began with ${first}${like}. Check the host and port of --queue`, { cause });
}

/** The first bytes the server at `address` answers a plain-text PING with, within a second (undefined: none). */
function plainAnswer(address: URL): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect(endpoint(address));
    const done = (answer: string | undefined): void => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1_000, () => done(undefined));
    socket.once('error', () => done(undefined));
    socket.once('close', () => done(undefined));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (chunk: Buffer) => done(chunk.toString('latin1')));
  });
}

/** Whether the server at `address` completes a TLS handshake within a second (its certificate unchecked: nothing is sent). */
function completesTls(address: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTls({ ...endpoint(address), rejectUnauthorized: false });
    const done = (answer: boolean): void => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
    socket.once('secureConnect', () => done(true));
  });
}

function endpoint(address: URL): { host: string; port: number } {
  return { host: address.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(address.port || 6379) };
}
