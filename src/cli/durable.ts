/**
 * The two files that make an export crash-safe: the spool (NDJSON lines, appended a page at a time
 * and flushed to disk) and the checkpoint (JSON, replaced atomically). The checkpoint names the
 * spool length it vouches for; whatever lies past it was written by a run that died before it could
 * vouch for it, so a resumed run cuts it off and fetches those pages again.
 */
import { open, readFile, rename, rm, stat, type FileHandle } from 'node:fs/promises';

/** Writes `value` as JSON so that a reader sees either the old file or the new one, never half of one. */
export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  const handle = await open(temporary, 'w');
  try {
    await handle.writeFile(JSON.stringify(value, null, 1));
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path);
}

export async function readJsonFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return JSON.parse(text) as unknown;
}

export async function removeIfPresent(path: string): Promise<void> {
  await rm(path, { force: true });
}

export async function fileSize(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** An append-only NDJSON file whose length only grows by whole, flushed pages. */
export class Spool {
  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    /** Bytes known to be on disk. */
    public bytes: number,
  ) {}

  /** Opens `path` for appending; with `keepBytes`, first cuts it back to that many bytes. */
  static async open(path: string, keepBytes?: number): Promise<Spool> {
    // Nothing to keep (a fresh run, or a resume before the first page) starts an empty spool.
    const handle = await open(path, keepBytes ? 'r+' : 'w');
    if (keepBytes) {
      const { size } = await handle.stat();
      if (size < keepBytes) {
        await handle.close();
        throw new Error(`the spool ${path} is shorter (${size} bytes) than its checkpoint says (${keepBytes}); it was changed by hand`);
      }
      await handle.truncate(keepBytes);
    }
    return new Spool(path, handle, keepBytes ?? 0);
  }

  /** Appends one page of records and waits until they are on disk. */
  async appendPage(records: readonly unknown[]): Promise<void> {
    if (records.length === 0) return;
    let text = '';
    for (const record of records) text += JSON.stringify(record) + '\n';
    const buffer = Buffer.from(text, 'utf8');
    let written = 0;
    while (written < buffer.length) {
      const { bytesWritten } = await this.handle.write(buffer, written, buffer.length - written, this.bytes + written);
      written += bytesWritten;
    }
    await this.handle.datasync();
    this.bytes += buffer.length;
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}
