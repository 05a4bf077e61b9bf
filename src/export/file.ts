/**
 * A file as an export's destination. Staging lives beside it (`<out>.checkpoint.json`,
 * `<out>.spool.ndjson`, `<out>.held.ndjson`, `<out>.lock`). Publishing turns the spool into the
 * file asked for: NDJSON is the spool itself (renamed, or copied while a later resume still needs
 * the spool); CSV and Parquet are written by their sinks while the pages are staged
 * (`<out>.live.<format>`, see `live-file.ts`) and renamed over the output, or else written from the
 * spool; either way the output path only ever holds a whole file.
 *
 * A complete output records the export that made it (`output-record.ts`): in its footer (Parquet) or
 * in `<out>.export.json` (NDJSON, CSV). A resume continues only that export, and over it buys nothing.
 */
import { constants, copyFile, lstat, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { HeldStateError, NotWritableError, OtherExportError, StateDamagedError } from '../errors.ts';
import { option, optionError } from './option-message.ts';
import type { AnyIterable } from '../operators/types.ts';
import { fromNdjson, toCsv, toNdjson, type SinkResult } from '../../sinks/index.ts';
import { fromNdjsonPrefix, ndjsonRecordCount } from '../../sinks/from-ndjson.ts';
import { parquetWriter, type ParquetLayout } from '../../sinks/parquet.ts';
import { runSink } from '../../sinks/run.ts';
import type { CompleteOutput, Destination, DestinationCapabilities, Published, SpoolPrefix } from './destination.ts';
import { fileSize, hashPrefix, isTemporaryNameOf, OPEN, removeIfPresent, temporaryName } from './durable.ts';
import { LiveFile } from './live-file.ts';
import { describeExport, parquetMetadata, readExportRecord, sameExport, writeSideRecord, type ExportRecord, type HeldExport } from './output-record.ts';
import type { ExportState } from './journal.ts';
import type { FileFormat } from './types.ts';

/** The longest name of a file in a folder, in bytes, on the common file systems (ext4, XFS, APFS, …). */
const NAME_MAX = 255;

const EXTENSIONS: Record<string, FileFormat> = { '.ndjson': 'ndjson', '.jsonl': 'ndjson', '.csv': 'csv', '.parquet': 'parquet' };

/** The format of `path` by its extension, or `format` when given; an `OptionError` when neither says. */
export function formatOf(path: string, format?: FileFormat): FileFormat {
  if (format !== undefined) return format;
  const byExtension = EXTENSIONS[extname(path).toLowerCase()];
  if (byExtension === undefined) throw optionError`${option('out')} ${path}: the file name must end in .ndjson, .jsonl, .csv or .parquet`;
  return byExtension;
}

export class FileDestination implements Destination {
  readonly folder: string;
  readonly files;
  readonly remedy: string;
  readonly capabilities: DestinationCapabilities = { duplicates: 'drop', partialPublish: 'new-records', publishesPrefix: true, drift: 'none' };
  /** The output being written while pages are staged (CSV, Parquet). */
  readonly #livePath: string;
  /** NDJSON, CSV: the side file that records the export a complete output holds. */
  readonly #recordPath: string;
  #live: LiveFile | undefined;
  /** The output being written now is the complete one: a Parquet footer then records the export. */
  #writingComplete = false;

  constructor(
    readonly output: string,
    readonly format: FileFormat,
    /** The export this run is: what a complete output records, and what a resume must find there. */
    private readonly record: ExportRecord,
    private readonly escapeFormulae: boolean,
    private readonly layout?: ParquetLayout,
  ) {
    this.folder = dirname(resolve(output));
    this.files = { lock: `${output}.lock`, journal: `${output}.checkpoint.json`, spool: `${output}.spool.ndjson`, held: `${output}.held.ndjson` };
    this.remedy = `restart the export (--restart) to discard ${this.files.journal} and start over`;
    this.#livePath = `${output}.live.${format}`;
    this.#recordPath = `${output}.export.json`;
    this.#checkNameLength();
  }

  /**
   * Refuses, before anything is touched, an output whose side files the file system could not name
   * (at most 255 bytes a name on every common one): a run would otherwise buy a page and fail at its
   * first checkpoint, leaving a spool no checkpoint vouches for.
   */
  #checkNameLength(): void {
    const sideFiles = [this.output, ...Object.values(this.files), this.#livePath, this.#recordPath].flatMap((path) => [path, temporaryName(path)]);
    const longest = sideFiles.map((path) => basename(path)).reduce((a, b) => (Buffer.byteLength(b) > Buffer.byteLength(a) ? b : a));
    const excess = Buffer.byteLength(longest) - NAME_MAX;
    if (excess <= 0) return;
    const bytes = Buffer.byteLength(basename(this.output));
    throw new NotWritableError(
      `${this.output}: the name is ${bytes} bytes long, and the export's side files beside it (the longest: ${longest}) would pass the ${NAME_MAX} bytes a file system allows a name; ` +
        `use a name of at most ${bytes - excess} bytes`,
      this.output,
    );
  }

  async prepare(): Promise<void> {
    const info = await lstat(this.output).catch(() => undefined);
    if (info?.isDirectory()) throw new NotWritableError(`${this.output}: that is a directory, not a file`, this.output);
  }

  /** Temporary files an earlier run of this output left when it was killed; while we hold the lock, they are nobody's. */
  async recover(): Promise<void> {
    const ours = (name: string): boolean => [this.output, this.files.journal, this.#livePath, this.#recordPath].some((path) => isTemporaryNameOf(name, path));
    for (const name of await readdir(this.folder)) if (ours(name)) await removeIfPresent(join(this.folder, name));
    await removeIfPresent(this.#livePath);
  }

  /**
   * The output is there, no journal says a run is under way, and it records this very export. Side
   * files without a journal were left either by the publish that completed the output, killed while
   * it removed the staging (the journal goes first): they are removed; or by a run that staged pages
   * but could not write its checkpoint: nothing then proves that the output holds what they staged,
   * so that is refused, naming them. An output that records another export, or none, is refused too:
   * a resume would claim it as its own.
   */
  async completeOutput(): Promise<CompleteOutput | undefined> {
    if ((await fileSize(this.output)) === undefined || (await fileSize(this.files.journal)) !== undefined) return undefined;
    const left = [];
    for (const path of [this.files.spool, this.files.held]) if ((await fileSize(path)) !== undefined) left.push(path);
    if (left.length === 0) return this.#heldRecords();
    const complete = await this.#heldRecords().catch(() => undefined);
    if (complete?.records !== undefined && (await this.#leftByPublish(complete.records))) {
      for (const path of left) await removeIfPresent(path);
      return complete;
    }
    throw new HeldStateError(
      `${this.output} may not hold every record: ${left.join(' and ')} ${left.length === 1 ? 'was' : 'were'} left by a run that could not write its checkpoint (${this.files.journal}), ` +
        `so nothing proves the output holds what ${left.length === 1 ? 'it' : 'they'} staged; restart the export (--restart, or restart: true) to discard ${left.length === 1 ? 'it' : 'them'} and export again`,
      this.output,
    );
  }

  /**
   * Whether the staging beside a complete output of `records` records is what its publish left: a
   * spool of exactly those records (or none), nothing bought ahead. A run that staged pages of its own
   * and could not checkpoint them holds others, or fewer.
   */
  async #leftByPublish(records: number): Promise<boolean> {
    if (((await ndjsonRecordCount(this.files.held)) ?? 0) > 0) return false;
    const spooled = await ndjsonRecordCount(this.files.spool);
    return spooled === undefined || spooled === records;
  }

  /** The records the output holds, once its record shows this export made it; else `OtherExportError`. */
  async #heldRecords(): Promise<CompleteOutput> {
    const held = await readExportRecord(this.output, this.format, this.#recordPath);
    if (held !== undefined && sameExport(held, this.record)) return { records: held.records };
    const restart = `pass --restart (or restart: true) to export ${describeExport(this.record)} over it, or write it to another file`;
    if (held === undefined) {
      throw new OtherExportError(
        `${this.output} does not record the export that made it (written by socialstream before outputs recorded it, or by something else), so --resume cannot tell it is this export's; ${restart}`,
        this.output,
        undefined,
      );
    }
    throw new OtherExportError(
      `${this.output} holds another export: ${describeExport(held)} (${held.format}, ${held.records} records), not ${describeExport(this.record)}` +
        `${held.format === this.record.format ? '' : ` (${this.record.format})`}; --resume continues only the export that made a file; ${restart}`,
      this.output,
      facts(held),
    );
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
  async publish(state: ExportState, complete: boolean, through?: SpoolPrefix): Promise<Published> {
    // The record of an output about to be replaced goes first: a crash then leaves no record of a file
    // it does not describe (the journal, still there, says what the new one holds).
    await removeIfPresent(this.#recordPath);
    this.#writingComplete = complete && through === undefined;
    if (through !== undefined) {
      // A limit lowered on resume: the records past it stay in the spool, the output gets those before.
      await this.release();
      const written = this.format === 'ndjson' ? await this.#copyPrefix(through.bytes) : await this.#writeRecords(fromNdjsonPrefix(this.files.spool, through.bytes));
      return { ...written, records: through.records, spoolTaken: false };
    }
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
    if (complete) {
      // Before the journal goes: a crash in between finishes the publish again on resume, record and all.
      if (this.format !== 'parquet') await writeSideRecord(this.#recordPath, this.record, this.output, state.records);
      await this.discard();
    }
    return { bytes, repaired, records: state.records, spoolTaken: false };
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

  /** The output as the spool's first `bytes` bytes, replaced whole. */
  async #copyPrefix(bytes: number): Promise<{ bytes: number; repaired: number }> {
    const temporary = temporaryName(this.output);
    try {
      const target = await open(temporary, OPEN.create, 0o666);
      const source = bytes === 0 ? [] : (await open(this.files.spool, OPEN.read)).createReadStream({ start: 0, end: bytes - 1 });
      await pipeline(source, target.createWriteStream());
      await rename(temporary, this.output);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    return { bytes, repaired: 0 };
  }

  async #writeRecords(records: AnyIterable<unknown>): Promise<{ bytes: number; repaired: number }> {
    const result = await this.#sink(records, this.output);
    return { bytes: result.bytes, repaired: result.repaired };
  }

  #sink(records: AnyIterable<unknown>, path: string): Promise<SinkResult> {
    const metadata = (): Record<string, string> => (this.#writingComplete ? parquetMetadata(this.record) : {});
    const write = {
      ndjson: () => toNdjson(records, path),
      csv: () => toCsv(records, path, { escapeFormulae: this.escapeFormulae }),
      parquet: () => runSink(records, path, (destination) => parquetWriter(destination, { layout: this.layout, metadata })),
    };
    return write[this.format]();
  }

  /** The spool was renamed to the output by a run that died before it could drop the journal. */
  async #holdsSpool(state: ExportState): Promise<boolean> {
    if ((await fileSize(this.output)) !== state.spool.bytes) return false;
    return (await hashPrefix(this.output, state.spool.bytes)).digest('hex') === state.spool.sha256;
  }
}

/** What `OtherExportError` tells of the export a file holds. */
function facts(held: HeldExport): NonNullable<OtherExportError['held']> {
  const { operation, params, walks, format, records } = held;
  return { operation, params, walks, format, records };
}
