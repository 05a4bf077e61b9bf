/**
 * Where a dataset lives: a local folder, or an S3 bucket and a prefix (`s3://bucket/prefix`). Parsed
 * once, before anything is touched; a location that cannot be one is an `OptionError` naming the
 * option it came from and what is wrong with it. Anything that is not `scheme://…` is a local path
 * (relative, absolute, or Windows-like `C:\data`), kept as given but for trailing separators.
 */
import { OptionError } from '../../errors.ts';
import { nameProblem } from './names.ts';

/** A local folder. */
export interface LocalLocation {
  readonly kind: 'local';
  /** The folder, as given, without trailing separators. */
  readonly path: string;
}

/** A prefix in an S3 bucket (AWS S3 or an S3-compatible store reached through `AWS_ENDPOINT_URL_S3`). */
export interface S3Location {
  readonly kind: 's3';
  readonly bucket: string;
  /** `/`-joined segments without leading or trailing slashes; `''` for the bucket's root. */
  readonly prefix: string;
}

/** A parsed dataset location. */
export type Location = LocalLocation | S3Location;

const URL_LIKE = /^([a-z][a-z0-9+.-]+):\/\//i;

/** Parses `text` as a location; `option` names where it came from in a refusal (`dataset` → `--dataset`). */
export function parseLocation(text: string, option = 'dataset'): Location {
  const refuse = (problem: string): never => {
    throw new OptionError([{ option }, ` ${JSON.stringify(text)}: ${problem}`]);
  };
  const scheme = URL_LIKE.exec(text)?.[1];
  if (scheme === undefined) {
    // `/` alone (or `\`) is the root and keeps its separator; otherwise trailing ones go.
    const path = text.length > 1 ? text.replace(/(?<=.)[/\\]+$/, '') : text;
    if (path.trim() === '') refuse('names no folder');
    return { kind: 'local', path };
  }
  if (scheme.toLowerCase() !== 's3') refuse(`only local folders and s3://bucket/prefix are stored to (for GCS, R2 or MinIO, use s3:// with their endpoint in AWS_ENDPOINT_URL_S3)`);
  const rest = text.slice(scheme.length + 3);
  const slash = rest.indexOf('/');
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  const bucketProblem = bucketNameProblem(bucket);
  if (bucketProblem !== undefined) refuse(bucketProblem);
  const prefix = slash === -1 ? '' : rest.slice(slash + 1).replace(/\/+$/, '');
  if (prefix !== '') {
    const problem = nameProblem(prefix);
    if (problem !== undefined) refuse(`the prefix ${problem}`);
  }
  return { kind: 's3', bucket, prefix };
}

/** The location as a user writes it (and as messages name it). */
export function describeLocation(location: Location): string {
  if (location.kind === 'local') return location.path;
  return location.prefix === '' ? `s3://${location.bucket}` : `s3://${location.bucket}/${location.prefix}`;
}

/** What is wrong with `bucket` as an S3 bucket name (the general-purpose bucket rules), or undefined. */
function bucketNameProblem(bucket: string): string | undefined {
  if (bucket === '') return 'names no bucket (s3://bucket/prefix)';
  const named = `the bucket name ${JSON.stringify(bucket)}`;
  if (bucket.length < 3 || bucket.length > 63) return `${named} must be 3 to 63 characters long`;
  if (!/^[a-z0-9.-]+$/.test(bucket)) return `${named} may hold only lowercase letters, digits, dots and hyphens`;
  if (!/^[a-z0-9].*[a-z0-9]$/.test(bucket)) return `${named} must begin and end with a letter or a digit`;
  if (bucket.includes('..')) return `${named} may not hold two dots in a row`;
  if (/^\d+\.\d+\.\d+\.\d+$/.test(bucket)) return `${named} may not be an IP address`;
  return undefined;
}
