/**
 * An HTTP proxy in front of s3rver that honours the conditional writes s3rver ignores, as AWS S3,
 * MinIO and R2 do: a PUT with `If-None-Match: *` fails with 412 when the key exists, and a PUT or
 * DELETE with `If-Match: <etag>` fails with 412 when the key's ETag is another (or there is no key).
 * Conditional requests of one key are carried out one at a time (the check, then the forwarded
 * request to its answer), so two racing writes cannot both pass. Everything else is forwarded as is;
 * the `Host` header is kept, so the SDK's signatures still match.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running proxy: its URL, how many requests it had in flight at most, and how to stop it. */
export interface ConditionalProxy {
  readonly url: string;
  readonly mostAtOnce: number;
  close(): Promise<void>;
}

const PRECONDITION_FAILED = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>';

/** What else the proxy does. */
export interface ProxyOptions {
  /** Requests (`PUT /bucket/key?partNumber=2&…`) answered with 400 instead of forwarded: a store's refusal, on cue. */
  refuse?: RegExp;
  /** How long each request waits before it is carried out, in milliseconds: a store farther away than s3rver. */
  delayMs?: number;
}

/** Starts a proxy to `target` (s3rver's `http://127.0.0.1:PORT`) on a free port of 127.0.0.1. */
export async function startConditionalProxy(target: string, options: ProxyOptions = {}): Promise<ConditionalProxy> {
  const upstream = new URL(target);
  /** Per key, the end of the last conditional request queued for it. */
  const queues = new Map<string, Promise<void>>();
  let inFlight = 0;
  let mostAtOnce = 0;

  const server: Server = createServer((incoming, outgoing) => {
    mostAtOnce = Math.max(mostAtOnce, ++inFlight);
    outgoing.on('close', () => inFlight--);
    if (options.delayMs === undefined) handle(incoming, outgoing);
    else setTimeout(() => handle(incoming, outgoing), options.delayMs);
  });

  const handle = (incoming: IncomingMessage, outgoing: ServerResponse): void => {
    const { pathname } = new URL(incoming.url ?? '/', 'http://proxy');
    const ifNoneMatch = incoming.headers['if-none-match'];
    const ifMatch = incoming.headers['if-match'];
    const conditional = (incoming.method === 'PUT' || incoming.method === 'DELETE') && (ifNoneMatch !== undefined || ifMatch !== undefined);
    const forward = (): Promise<void> =>
      new Promise((done) => {
        const headers = { ...incoming.headers };
        delete headers.expect;
        const sent = request({ host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers }, (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
          answer.on('end', () => done());
          // s3rver cut its answer short (it serves a file being rewritten): so does the proxy.
          answer.on('error', () => {
            outgoing.destroy();
            done();
          });
        });
        sent.on('error', () => {
          outgoing.destroy();
          done();
        });
        incoming.pipe(sent);
      });
    if (options.refuse?.test(`${incoming.method} ${incoming.url}`) === true) {
      incoming.resume();
      outgoing.writeHead(400, { 'content-type': 'application/xml' });
      outgoing.end('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InvalidRequest</Code><Message>Refused by the test proxy</Message></Error>');
      return;
    }
    if (!conditional) {
      void forward();
      return;
    }
    const previous = queues.get(pathname) ?? Promise.resolve();
    const turn = previous.then(async () => {
      const etag = await etagOf(upstream, pathname);
      const fails = (ifNoneMatch === '*' && etag !== undefined) || (ifMatch !== undefined && ifMatch !== etag);
      if (!fails) return forward();
      incoming.resume();
      outgoing.writeHead(412, { 'content-type': 'application/xml' });
      outgoing.end(PRECONDITION_FAILED);
    });
    const settled = turn.catch(() => undefined);
    queues.set(pathname, settled);
    void settled.then(() => {
      if (queues.get(pathname) === settled) queues.delete(pathname);
    });
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get mostAtOnce() {
      return mostAtOnce;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The ETag of the object at `path` (`/bucket/key`), by an anonymous HEAD (s3rver allows it); undefined when there is none. */
function etagOf(upstream: URL, path: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const asked = request({ host: upstream.hostname, port: upstream.port, method: 'HEAD', path }, (answer: IncomingMessage) => {
      answer.resume();
      const etag = answer.headers.etag;
      resolve(answer.statusCode === 200 && typeof etag === 'string' ? etag : undefined);
    });
    asked.on('error', reject);
    asked.end();
  });
}
