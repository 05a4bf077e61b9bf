/**
 * Where a sink's bytes go. A file is written under a temporary name beside the target and renamed
 * only when it is complete and valid, so a file being written is never mistaken for a finished one.
 * `'-'` is stdout (NDJSON only): written in place, never ended, since the process owns it.
 */
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { SinkError } from '../src/errors.ts';
import { temporaryName } from './temporary-name.ts';

export interface Destination {
  /** The stream to write to (the temporary file, or stdout). */
  readonly stream: Writable;
  /** Writes a chunk, waiting for 'drain' when the stream asks for it. */
  write(chunk: string | Buffer): Promise<void>;
  /** The first I/O error the stream reported, if any: the bytes written so far cannot be trusted. */
  readonly ioError: Error | undefined;
  /** Ends the stream (unless the format already did), renames it to `path`, resolves to its size. */
  commit(): Promise<number>;
  /** Drops the temporary file; `path` is left as it was before the sink started. */
  abandon(): Promise<void>;
  /**
   * Replaces what was written so far, before it is committed: ends the stream, lets `rewrite` read
   * the file written so far (at `written`) and write its replacement into a destination of its own,
   * then puts that file in its place, still to be committed. If `rewrite` fails its file is
   * dropped and the one written so far stays. A file only, never stdout.
   */
  replace(rewrite: (written: string, into: Destination) => Promise<void>): Promise<void>;
}

export async function openDestination(path: string): Promise<Destination> {
  return path === '-' ? stdoutDestination() : fileDestination(path);
}

/** `target`: where `commit` puts the file (`path`, or the temporary file of a destination being replaced). */
async function fileDestination(path: string, target = path): Promise<Destination> {
  // Named after `path` even when it replaces another temporary file: a killed run's sweep knows it.
  const temp = temporaryName(path);
  let stream: WriteStream;
  try {
    // Like `mkdir -p`: an export into `out/2026/` should not fail for want of the folder.
    await mkdir(dirname(path), { recursive: true });
    // A new file under a fresh name ('wx': O_EXCL), never a link someone planted there.
    stream = createWriteStream(temp, { flags: 'wx' });
  } catch (error) {
    throw new SinkError(`Cannot write ${path}: ${messageOf(error)}`, 0, path, { cause: error });
  }
  let ioError: Error | undefined;
  stream.on('error', (error) => {
    ioError ??= error;
  });
  try {
    await once(stream, 'open');
  } catch (error) {
    throw new SinkError(`Cannot write ${path}: ${messageOf(error)}`, 0, path, { cause: error });
  }
  return {
    stream,
    write: (chunk) => writeWithBackpressure(stream, chunk),
    get ioError() {
      return ioError;
    },
    async commit() {
      await endAndClose(stream);
      const { size } = await stat(temp);
      await rename(temp, target);
      return size;
    },
    async abandon() {
      stream.destroy();
      await unlink(temp).catch(() => undefined);
    },
    async replace(rewrite) {
      await endAndClose(stream);
      if (ioError !== undefined) throw ioError;
      const into = await fileDestination(path, temp);
      try {
        await rewrite(temp, into);
        if (into.ioError !== undefined) throw into.ioError;
        await into.commit();
      } catch (error) {
        await into.abandon();
        throw error;
      }
    },
  };
}

function stdoutDestination(): Destination {
  let bytes = 0;
  let ioError: Error | undefined;
  const stream = process.stdout;
  const onError = (error: Error): void => {
    ioError ??= error;
  };
  stream.on('error', onError);
  return {
    stream,
    async write(chunk) {
      bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
      await writeWithBackpressure(stream, chunk);
    },
    get ioError() {
      return ioError;
    },
    async commit() {
      stream.off('error', onError);
      return bytes;
    },
    async abandon() {
      stream.off('error', onError);
    },
    replace() {
      return Promise.reject(new TypeError('stdout cannot be rewritten'));
    },
  };
}

async function writeWithBackpressure(stream: Writable, chunk: string | Buffer): Promise<void> {
  if (!stream.write(chunk)) await once(stream, 'drain');
}

async function endAndClose(stream: WriteStream): Promise<void> {
  if (!stream.writableEnded) stream.end();
  await finished(stream);
  if (!stream.closed) await once(stream, 'close');
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
