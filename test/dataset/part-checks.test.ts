/**
 * The checks of part files on open (`checkParts`): walks that open one dataset at once in one
 * process (a queue worker's, an export's lanes) read each part's end once between them, not once
 * each; a part found whole is not read again while unchanged; a part cut short is refused to every
 * walk that asked.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StateDamagedError } from '../../src/errors.ts';
import { objectPlace } from '../../src/dataset/objects.ts';
import { checkParts, type ListedPart } from '../../src/dataset/state.ts';
import { DatasetPaths } from '../../src/dataset/store.ts';
import { LocalStorage } from '../../src/dataset/storage/local.ts';

const OPERATION = 'forum__subforum';

/** A local dataset with `count` NDJSON parts (the last cut short when `cut`), and the parts as a listing gives them. */
async function dataset(count: number, cut = false): Promise<{ paths: DatasetPaths; parts: ListedPart[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'part-checks-'));
  const storage = new LocalStorage(dir);
  const paths = new DatasetPaths(dir, OPERATION, 'w0', storage);
  const parts: ListedPart[] = [];
  for (let i = 0; i < count; i++) {
    const name = `forum/subforum/_date=2024-${String(i + 1).padStart(2, '0')}/part-b0.ndjson`;
    const text = cut && i === count - 1 ? '{"id":"p1"}\n{"id":"p2"' : '{"id":"p1"}\n{"id":"p2"}\n';
    await storage.write(name, new TextEncoder().encode(text));
    parts.push({ name, path: objectPlace(storage, name), bytes: Buffer.byteLength(text), version: `v1-${i}` });
  }
  return { paths, parts };
}

describe('checkParts', () => {
  it('reads each part once for ten walks that open the dataset at once, and not again while the parts are unchanged', async () => {
    const { paths, parts } = await dataset(12);
    const before = paths.storage.requests.GET;
    await Promise.all(Array.from({ length: 10 }, () => checkParts(parts, 'ndjson', paths)));
    expect(paths.storage.requests.GET - before).toBe(12);
    await checkParts(parts, 'ndjson', paths);
    expect(paths.storage.requests.GET - before).toBe(12);
    // A part replaced since (another version) is read again, alone.
    await checkParts([{ ...parts[0], version: 'v2-0' }, ...parts.slice(1)], 'ndjson', paths);
    expect(paths.storage.requests.GET - before).toBe(13);
  });

  it('refuses a part cut short to every walk that asked, naming it, after reading it once', async () => {
    const { paths, parts } = await dataset(3, true);
    const before = paths.storage.requests.GET;
    const failures = await Promise.all(Array.from({ length: 5 }, () => checkParts(parts, 'ndjson', paths).catch((error: unknown) => error)));
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(StateDamagedError);
      expect((failure as Error).message).toContain(`the part file ${parts[2].path} cannot be read (its last line is cut short)`);
    }
    expect(paths.storage.requests.GET - before).toBe(3);
    // Not remembered as whole: the next open reads it again, and refuses it again.
    await expect(checkParts(parts, 'ndjson', paths)).rejects.toThrow(StateDamagedError);
    expect(paths.storage.requests.GET - before).toBe(4);
  });
});
