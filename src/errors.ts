/**
 * Every error socialstream raises is one of these classes. Each carries a stable `code`, and the
 * ones that come from a response carry the HTTP `status` and the `endpoint` (operation id, such as
 * `forum/subforum`). No message ever contains the API key: messages are built from the operation id,
 * the status and the service's own `error` text, never from request headers or full URLs.
 */
export interface ErrorDetails {
  status?: number;
  endpoint?: string;
  cause?: unknown;
}

/**
 * Every error the library raises is one of these: a stable `code`, the HTTP `status` and the
 * `endpoint` where they apply, and a message that never holds the API key.
 */
export abstract class SocialstreamError extends Error {
  abstract readonly code: string;
  readonly status: number | undefined;
  readonly endpoint: string | undefined;

  constructor(message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.status = details.status;
    this.endpoint = details.endpoint;
  }
}

/** 401: the key is missing, unknown, or was sent the wrong way. */
export class AuthError extends SocialstreamError {
  readonly code = 'AUTH';
}

/** The key cannot be sent as given (`problem` says why, e.g. a control character inside): refused before any request. */
export class KeyFormatError extends AuthError {
  constructor(readonly problem: string) {
    super(`The API key ${problem}`);
  }
}

/** 402: the key is valid but the balance cannot pay for the request. */
export class InsufficientCreditsError extends SocialstreamError {
  readonly code: string = 'INSUFFICIENT_CREDITS';
  constructor(
    message: string,
    readonly required: number,
    readonly available: number,
    details: ErrorDetails = {},
  ) {
    super(message, details);
  }
}

/** A missing or bad parameter: raised before any request when the client can tell, else from a 400. */
export class ValidationError extends SocialstreamError {
  readonly code = 'VALIDATION';
  constructor(
    message: string,
    /** The parameter at fault, when known. */
    readonly param?: string,
    details: ErrorDetails = {},
  ) {
    super(message, details);
  }
}

/** The service could not fetch from the source platform (`Failed to fetch …`), or answered 5xx; raised after retries. */
export class UpstreamError extends SocialstreamError {
  readonly code: string = 'UPSTREAM';
}

/**
 * The service could not be reached or did not answer (reset, refused, timeout) through every retry:
 * an `UpstreamError`, so one `instanceof UpstreamError` covers every failure on the service's side.
 * (A body cut short after its headers is a `ResponseFormatError`.)
 */
export class NetworkError extends UpstreamError {
  override readonly code: string = 'NETWORK';
}

/** `Service configuration error`: the service itself is misconfigured; retrying does not help. */
export class ServiceConfigError extends SocialstreamError {
  readonly code = 'SERVICE_CONFIG';
}

/** The body was not JSON, was cut short, or did not have the envelope the operation promises. */
export class ResponseFormatError extends SocialstreamError {
  readonly code = 'RESPONSE_FORMAT';
}

/** A continuation value came back that this walk had already used: following it would buy pages again forever. */
export class PaginationLoopError extends SocialstreamError {
  readonly code = 'PAGINATION_LOOP';
}

/**
 * A credit cap was reached and the cap was told to throw (`creditCap(n, { onCap: 'throw' })`): the
 * budget the caller set cannot pay for the next request, so it is an `InsufficientCreditsError`
 * (`required` 1, `available` 0) that never reached the service.
 */
export class CreditCapError extends InsufficientCreditsError {
  override readonly code: string = 'CREDIT_CAP';
  constructor(
    message: string,
    readonly cap: number,
  ) {
    super(message, 1, 0);
  }
}

/**
 * A sink's own failure. When a record could not be written (not a plain object, a `bigint`), the
 * file at `path` is valid and holds the `recordsWritten` records received before, and `cause` is the
 * original error. When the file system failed, nothing was written (`recordsWritten` is 0) and
 * whatever was at `path` before is untouched. (When the source throws, the sink rejects with the
 * source's own error instead; `partialOf(error)` from `socialstream/sinks` tells the file it kept.)
 */
export class SinkError extends SocialstreamError {
  readonly code: string = 'SINK';
  constructor(
    message: string,
    /** Records in the file at `path`: every record received before the failure. */
    readonly recordsWritten: number,
    /** The file that holds them (`'-'` for stdout). */
    readonly path: string,
    details: ErrorDetails = {},
  ) {
    super(message, details);
  }
}

/** How the fields of a run's records differ from a dataset's recorded schema for their operation. */
export interface SchemaDrift {
  /** Fields seen for the first time (each became a column, unless the schema is frozen). */
  readonly added: readonly { readonly column: string; readonly kind: string }[];
  /** Recorded columns that no record of the run carried. */
  readonly missing: readonly string[];
  /** Columns that received values of a kind they cannot hold; those values (`values` of them, by path) went to `_extra`. */
  readonly conflicting: readonly { readonly column: string; readonly recorded: string; readonly seen: string; readonly values?: number }[];
  /**
   * Recorded columns whose type the run widened (docs/types.md: integer → double, integer →
   * string, untyped → a type …): the schema records the wider type, and the parts written before
   * hold the narrower one, which the documented reads widen.
   */
  readonly widened?: readonly { readonly column: string; readonly from: string; readonly to: string }[];
}

/**
 * A dataset run with `schema: 'freeze'` met a page whose fields differ from the recorded schema. It
 * stopped there, before buying another page, and published nothing (`recordsWritten` 0): the dataset
 * is as it was.
 */
export class SchemaDriftError extends SinkError {
  override readonly code: string = 'SCHEMA_DRIFT';
  constructor(
    message: string,
    readonly drift: SchemaDrift,
    /** The dataset directory. */
    path: string,
    details: ErrorDetails = {},
  ) {
    super(message, 0, path, details);
  }
}

/**
 * A dataset directory could not be used as asked: another live run holds its lock, it holds part
 * files of another format, or a part file it must merge into cannot be read back. (An interrupted run
 * waiting for `--resume` is the CLI's usage error.)
 */
export class DatasetError extends SinkError {
  override readonly code: string = 'DATASET';
  constructor(
    message: string,
    /** The dataset directory or the file at fault. */
    path: string,
    details: ErrorDetails = {},
  ) {
    super(message, 0, path, details);
  }
}

/**
 * A dataset run asked for another Parquet layout (`nested` or `flat`) than the one the dataset
 * recorded, or for one where its parts are not Parquet. Refused before any request: parts of two
 * layouts do not read as one table. `dataset compact --layout` converts a dataset.
 */
export class DatasetLayoutError extends DatasetError {
  override readonly code: string = 'DATASET_LAYOUT';
  constructor(
    message: string,
    path: string,
    /** The layout the dataset recorded (undefined when its parts are not Parquet), and the one asked for. */
    readonly recorded: 'nested' | 'flat' | undefined,
    readonly asked: 'nested' | 'flat',
  ) {
    super(message, path);
  }
}

/**
 * An export (`exportTo`, the CLI's `export`) could not use its output as asked. Each subclass has a
 * stable `code`, so a caller (and the CLI's exit codes) tell them apart without reading messages.
 */
export abstract class ExportError extends SocialstreamError {
  constructor(
    message: string,
    /** The output file or dataset directory, or the file at fault. */
    readonly path: string,
    details: ErrorDetails = {},
  ) {
    super(message, details);
  }
}

/** Another run holds the output (`LOCKED`): refused at once, before any request. */
export class LockedError extends ExportError {
  readonly code = 'LOCKED';
  constructor(
    message: string,
    path: string,
    /** The process that holds it. */
    readonly holder: number,
  ) {
    super(message, path);
  }
}

/**
 * A lock this writer held as a lease was taken over by another writer after this one stalled past
 * its lease (`LOCK_LOST`): the run stopped before staging or publishing again; what it staged is
 * kept, and the same run resumed continues it.
 */
export class LockLostError extends ExportError {
  readonly code = 'LOCK_LOST';
}

/** The output holds state an earlier run left (`HELD_STATE`): pass `resume` to continue it or `restart` to discard it. */
export class HeldStateError extends ExportError {
  readonly code = 'HELD_STATE';
}

/** What a finished output records about the export that made it (`OtherExportError.held`). */
export interface HeldExportFacts {
  /** Operation id, e.g. `forum/subforum`. */
  readonly operation: string;
  /** The first parameter sets of its walks (all of them, up to 20). */
  readonly params: readonly Readonly<Record<string, string>>[];
  /** How many parameter sets (walks) it has. */
  readonly walks: number;
  readonly format: 'ndjson' | 'csv' | 'parquet';
  /** Records the output holds. */
  readonly records: number;
}

/**
 * `resume` over a finished output it cannot continue (`OTHER_EXPORT`): another export made it
 * (`held` says which), or it records none (`held` undefined: written before outputs recorded their
 * export, or by something else). Refused before any request; `restart` exports over it.
 */
export class OtherExportError extends ExportError {
  readonly code = 'OTHER_EXPORT';
  constructor(
    message: string,
    path: string,
    /** The export the output holds, as it records it; undefined when it records none. */
    readonly held: HeldExportFacts | undefined,
  ) {
    super(message, path);
  }
}

/** The output cannot be written where it was asked (`NOT_WRITABLE`): a read-only, missing or wrong kind of folder. */
export class NotWritableError extends ExportError {
  readonly code = 'NOT_WRITABLE';
}

/** No room left to stage or publish (`DISK_FULL`): what was staged is whole; free space, then resume. */
export class DiskFullError extends ExportError {
  readonly code = 'DISK_FULL';
}

/** A state file is not what an export left there (`STATE_DAMAGED`): edited, cut short, replaced or from another version. */
export class StateDamagedError extends ExportError {
  readonly code = 'STATE_DAMAGED';
}

/**
 * An export's `transform` gave what cannot be staged (`TRANSFORM`): no iterable, or a value that is
 * not a record JSON can hold (undefined, a string, a cycle, a function or symbol inside). The message
 * names the transform and the record; nothing of that page is staged, and no further page is bought.
 */
export class TransformError extends SocialstreamError {
  readonly code = 'TRANSFORM';
}

/** A stream already iterated was handed to something that must walk it whole (`STREAM_USED`): call the operation again. */
export class StreamUsedError extends SocialstreamError {
  readonly code = 'STREAM_USED';
}

/** A piece of an `OptionError`'s message: text, or the name of an option (`{ option: 'keepDuplicates' }`). */
export type OptionMessagePart = string | { readonly option: string };

/**
 * An option that cannot be used as given (`OPTION`): a bad value, or options that contradict each
 * other. Raised before anything is touched or bought. A `TypeError` (a caller's mistake, not the
 * service's), with `code` like every error of ours. Its message spells the options as `exportTo`
 * takes them (`dedupe and keepDuplicates contradict each other`); `describe` spells them another
 * way, as the CLI does with its flags (`--dedupe and --keep-duplicates …`).
 */
export class OptionError extends TypeError {
  readonly code = 'OPTION';
  override readonly name = 'OptionError';
  /** The options at fault, as `exportTo` names them. */
  readonly options: readonly string[];
  readonly #parts: readonly OptionMessagePart[];

  constructor(parts: readonly OptionMessagePart[]) {
    super(parts.map((part) => (typeof part === 'string' ? part : part.option)).join(''));
    this.#parts = parts;
    this.options = [...new Set(parts.flatMap((part) => (typeof part === 'string' ? [] : [part.option])))];
  }

  /** The message with each option spelled by `spell` (e.g. `maxPages` → `--max-pages`). */
  describe(spell: (option: string) => string): string {
    return this.#parts.map((part) => (typeof part === 'string' ? part : spell(part.option))).join('');
  }
}

/**
 * A dataset's store (a local folder or an `s3://` bucket) could not be used (`STORAGE`, or a
 * subclass's code). The message is one line naming the location and what to do; it never holds a
 * credential, a signature or a signed URL.
 */
export class StorageError extends SocialstreamError {
  readonly code: string = 'STORAGE';
  constructor(
    message: string,
    /** The location as given (`s3://bucket/prefix` or a folder), never a credential. */
    readonly location: string,
    details: ErrorDetails = {},
  ) {
    super(message, details);
  }
}

/** The store refused the credentials, or found none (`STORAGE_ACCESS`): a wrong key, an expired token, no permission on the bucket. */
export class StorageAccessError extends StorageError {
  override readonly code: string = 'STORAGE_ACCESS';
}

/** The bucket does not exist (`STORAGE_NOT_FOUND`), as the store answered. */
export class StorageNotFoundError extends StorageError {
  override readonly code: string = 'STORAGE_NOT_FOUND';
}

/** The store's endpoint did not answer (`STORAGE_UNREACHABLE`): refused, reset, a name that does not resolve, a timeout. */
export class StorageUnreachableError extends StorageError {
  override readonly code: string = 'STORAGE_UNREACHABLE';
}

/**
 * Locks were asked of a store that ignores conditional writes (`If-None-Match`, `If-Match`), so two
 * writers could both believe they hold one (`STORAGE_NO_CONDITIONAL_WRITES`): refused when the store
 * is opened, before anything is bought. Locks held in Redis (`--locks redis://…`) do not need them.
 */
export class ConditionalWritesError extends StorageError {
  override readonly code: string = 'STORAGE_NO_CONDITIONAL_WRITES';
}

/** An `s3://` location was opened without the optional AWS SDK installed (`STORAGE_SDK_MISSING`). */
export class StorageSdkMissingError extends StorageError {
  override readonly code: string = 'STORAGE_SDK_MISSING';
}

/** A name that cannot be stored (`STORAGE_NAME`): empty, absolute, with a `.`/`..` segment, or a segment starting with `.` (the store's own). */
export class StorageNameError extends StorageError {
  override readonly code: string = 'STORAGE_NAME';
}
