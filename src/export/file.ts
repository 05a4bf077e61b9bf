/**
 * A file as an export's destination. Staging lives beside it (`<out>.checkpoint.json`,
 * `<out>.spool.ndjson`, `<out>.held.ndjson`, `<out>.lock`). Publishing turns the spool into the
 * file asked for: NDJSON is the spool itself (renamed, or copied while a later resume still needs
 * the spool); CSV and Parquet are written from it by the sinks, which write to a temporary name and
 * rename, so the output path only ever holds a whole file.
 */
import { constants, copyFile, lstat, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, extname, join, resolve } from 'node:path';
import { NotWritableError, StateDamagedError } from '../errors.ts';
import type { AnyIterable } from '../operators/types.ts';
import { fromNdjson, toCsv, toNdjson, toParquet } from '../../sinks/index.ts';
import type { Destination, Published } from './destination.ts';
import { fileSize, hashPrefix, isTemporaryNameOf, removeIfPresent, temporaryName } from './durable.ts';
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

  constructor(
    readonly output: string,
    readonly format: FileFormat,
    private readonly escapeFormulae: boolean,
  ) {
    this.folder = dirname(resolve(output));
    this.files = { lock: `${output}.lock`, journal: `${output}.checkpoint.json`, spool: `${output}.spool.ndjson`, held: `${output}.held.ndjson` };
    this.remedy = `restart the export (--restart) to discard ${this.files.journal} and start over`;
  }

  async prepare(): Promise<void> {
    const info = await lstat(this.output).catch(() => undefined);
    if (info?.isDirectory()) throw new NotWritableError(`${this.output}: that is a directory, not a file`, this.output);
  }

  /** Temporary files an earlier run of this output left when it was killed; while we hold the lock, they are nobody's. */
  async recover(): Promise<void> {
    const ours = (name: string): boolean => isTemporaryNameOf(name, this.output) || isTemporaryNameOf(name, this.files.journal);
    for (const name of await readdir(this.folder)) if (ours(name)) await removeIfPresent(join(this.folder, name));
  }

  async isComplete(): Promise<boolean> {
    return (await fileSize(this.output)) !== undefined && (await fileSize(this.files.journal)) === undefined;
  }

  async discard(): Promise<void> {
    for (const path of [this.files.journal, this.files.spool, this.files.held]) await removeIfPresent(path);
  }

  inspect(): 'more' {
    return 'more';
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
    if (spooled) {
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
    const write = { ndjson: () => toNdjson(records, this.output), csv: () => toCsv(records, this.output, { escapeFormulae: this.escapeFormulae }), parquet: () => toParquet(records, this.output) };
    const result = await write[this.format]();
    return { bytes: result.bytes, repaired: result.repaired };
  }

  /** The spool was renamed to the output by a run that died before it could drop the journal. */
  async #holdsSpool(state: ExportState): Promise<boolean> {
    if ((await fileSize(this.output)) !== state.spool.bytes) return false;
    return (await hashPrefix(this.output, state.spool.bytes)).digest('hex') === state.spool.sha256;
  }
}
