/** Scratch directories for sink tests, and reading files back with python3's csv module. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** A fresh directory removed after the suite. */
export function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'socialstream-sinks-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Names in `dir` that look like a sink's temporary file. */
export function temporaryFiles(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.endsWith('.tmp'));
}

/** The file's rows as python3's `csv.reader` sees them, header first. */
export function readCsvWithPython(path: string): string[][] {
  const script = 'import csv, json, sys\nwith open(sys.argv[1], newline="", encoding="utf-8") as f:\n    print(json.dumps(list(csv.reader(f))))';
  const out = execFileSync('python3', ['-c', script, path], { encoding: 'utf8', maxBuffer: 256 << 20 });
  return JSON.parse(out) as string[][];
}
