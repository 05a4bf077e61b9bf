/**
 * A file as an export's destination. Staging lives beside it (`<out>.checkpoint.json`,
 * `<out>.spool.ndjson`, `<out>.held.ndjson`, `<out>.lock`). Publishing turns the spool into the
 * file asked for: NDJSON is the spool itself (renamed, or copied while a later resume still needs
 * the spool); CSV and Parquet are written by their sinks while the pages are staged
 * (`<out>.live.<format>`, see `live-file.ts`) and renamed over the output, or else written from the
 * spool; either way the output path only ever holds a whole file.
 */
import { constants, copyFile, lstat, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, extname, join, resolve } from 'node:path';
import { NotWritableError, StateDamagedError } from '../errors.ts';
import type { AnyIterable } from '../operators/types.ts';
import { fromNdjson, toCsv, toNdjson, toParquet, type SinkResult } from '../../sinks/index.ts';
import type { ParquetLayout } from '../../sinks/parquet.ts';
import type { Destination, Published } from './destination.ts';
import { fileSize, hashPrefix, isTemporaryNameOf, removeIfPresent, temporaryName } from './durable.ts';
import { LiveFile } from './live-file.ts';
import type { ExportState } from './journal.ts';
import type { FileFormat } from './types.ts';

const EXTENSIONS: Record<string, FileFormat> = { '.ndjson': 'ndjson', '.jsonl': 'ndjson', '.csv': 'csv', '.parquet': 'parquet' };

/** The format of `path` by its extension, or `format` when given; TypeError when neither says. */
export function formatOf(path: string, format?: FileFormat): FileFormat {
  if (format !== undefined) return format;
  const byExtension = EXTENSIONS[extname(path).toLowerCase()];
  if (byExtension === undefined) throw new TypeError(`out ${path}: the file name must end in .ndjson, .jsonl, .csv or .parquet (or give format)`);
  return byExtension;
}

export class FileDestination implements Destination {
  readonly folder: string;
  readonly files;
  readonly remedy: string;
  /** The output being written while pages are staged (CSV, Parquet). */
  readonly #livePath: string;
  #live: LiveFile | undefined;

  constructor(
    readonly output: string,
    readonly format: FileFormat,
    private readonly escapeFormulae: boolean,
    private readonly layout?: ParquetLayout,
  ) {
    this.folder = dirname(resolve(output));
    this.files = { lock: `${output}.lock`, journal: `${output}.checkpoint.json`, spool: `${output}.spool.ndjson`, held: `${output}.held.ndjson` };
    this.remedy = `restart the export (--restart) to discard ${this.files.journal} and start over`;
    this.#livePath = `${output}.live.${format}`;
  }

  async prepare(): Promise<void> {
    const info = await lstat(this.output).catch(() => undefined);
    if (info?.isDirectory()) throw new NotWritableError(`${this.output}: that is a directory, not a file`, this.output);
  }

  /** Temporary files an earlier run of this output left when it was killed; while we hold the lock, they are nobody's. */
  async recover(): Promise<void> {
    const ours = (name: string): boolean => [this.output, this.files.journal, this.#livePath].some((path) => isTemporaryNameOf(name, path));
    for (const name of await readdir(this.folder)) if (ours(name)) await removeIfPresent(join(this.folder, name));
    await removeIfPresent(this.#livePath);
  }

  async isComplete(): Promise<boolean> {
    return (await fileSize(this.output)) !== undefined && (await fileSize(this.files.journal)) === undefined;
  }

  async discard(): Promise<void> {
    for (const path of [this.files.journal, this.files.spool, this.files.held, this.#livePath]) await removeIfPresent(path);
  }

  inspect(): 'more' {
    return 'more';
  }

  follow(spool: string, bytes: number): void {
    if (this.format === 'ndjson') return;
    this.#live = new LiveFile(this.#livePath, spool, bytes, (records, path) => this.#sink(records, path));
  }

  async staged(records: readonly unknown[], exact: boolean): Promise<void> {
    if (this.#live === undefined) return;
    if (exact) return this.#live.page(records);
    // The spool holds other values than these: the output is written from it at publish.
    await this.release();
  }

  async release(): Promise<void> {
    const live = this.#live;
    this.#live = undefined;
    await live?.abandon();
  }

  /**
   * Writes the output from the spool. Complete: the spool becomes the output and the staging goes;
   * a crash after the rename but before the journal went is recognised by the output's bytes. Partial:
   * the spool stays for the resume.
   */
  async publish(state: ExportState, complete: boolean): Promise<Published> {
    const spooled = (await fileSize(this.files.spool)) !== undefined;
    let bytes: number;
    let repaired = 0;
    const live = await this.#live?.finish(this.output, state.records);
    this.#live = undefined;
    if (live !== undefined) {
      // Its sink repaired again the strings the spool had already repaired and counted.
      bytes = live.bytes;
    } else if (spooled) {
      ({ bytes, repaired } = await this.#write(!complete));
    } else if (this.format === 'ndjson' && (await this.#holdsSpool(state))) {
      bytes = state.spool.bytes;
    } else if (state.spool.bytes === 0) {
      // Walks that gave no record (an empty feed, an empty shard): the output is an empty file.
      ({ bytes, repaired } = await this.#writeRecords([]));
    } else {
      throw new StateDamagedError(`${this.files.spool} is missing, so the journal that says every page is in it cannot be trusted; ${this.remedy}`, this.files.spool);
    }
    if (complete) await this.discard();
    return { bytes, repaired, spoolTaken: false };
  }

  async #write(keepSpool: boolean): Promise<{ bytes: number; repaired: number }> {
    const spool = this.files.spool;
    if (this.format === 'ndjson') {
      if (keepSpool) {
        const temporary = temporaryName(this.output);
        try {
          await copyFile(spool, temporary, constants.COPYFILE_EXCL);
          await rename(temporary, this.output);
        } catch (error) {
          await rm(temporary, { force: true });
          throw error;
        }
      } else {
        await rename(spool, this.output);
      }
      return { bytes: (await stat(this.output)).size, repaired: 0 };
    }
    return this.#writeRecords(fromNdjson(spool));
  }

  async #writeRecords(records: AnyIterable<unknown>): Promise<{ bytes: number; repaired: number }> {
    const result = await this.#sink(records, this.output);
    return { bytes: result.bytes, repaired: result.repaired };
  }

  #sink(records: AnyIterable<unknown>, path: string): Promise<SinkResult> {
    const write = { ndjson: () => toNdjson(records, path), csv: () => toCsv(records, path, { escapeFormulae: this.escapeFormulae }), parquet: () => toParquet(records, path, { layout: this.layout }) };
    return write[this.format]();
  }

  /** The spool was renamed to the output by a run that died before it could drop the journal. */
  async #holdsSpool(state: ExportState): Promise<boolean> {
    if ((await fileSize(this.output)) !== state.spool.bytes) return false;
    return (await hashPrefix(this.output, state.spool.bytes)).digest('hex') === state.spool.sha256;
  }
}
