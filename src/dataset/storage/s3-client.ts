/**
 * The AWS SDK v3, loaded only when an `s3://` location is opened (it is an optional dependency: a
 * local dataset never imports it), and the client made the way AWS tools configure one:
 *
 * - credentials: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`, else the
 *   SDK's default chain (`AWS_PROFILE` or the default profile, SSO, a container's or an instance's role);
 * - region: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else the profile's (`us-east-1` for a custom endpoint);
 * - endpoint: `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`. A custom endpoint is an S3-compatible
 *   store (MinIO, R2, GCS, a local server): requests go path-style, and checksums are sent and checked
 *   only when the operation requires them (the SDK's default checksums, since 3.729, are refused by
 *   many of those stores).
 */
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { StorageSdkMissingError } from '../../errors.ts';

/** The SDK's module. */
export type S3Sdk = typeof import('@aws-sdk/client-s3');

/** Environment variables, as `process.env` holds them. */
export type Environment = Readonly<Record<string, string | undefined>>;

const SDK = '@aws-sdk/client-s3';

/** Imports the SDK, or throws `STORAGE_SDK_MISSING` naming the install when it is not installed. */
export async function loadSdk(location: string): Promise<S3Sdk> {
  try {
    return await import('@aws-sdk/client-s3');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new StorageSdkMissingError(`${location}: s3:// locations need the AWS SDK, an optional dependency: npm install ${SDK}`, location, { cause: error });
    }
    throw error;
  }
}

/** The client's configuration from `env` (see the top of this file). */
export function clientConfig(env: Environment): S3ClientConfig {
  const endpoint = nonEmpty(env.AWS_ENDPOINT_URL_S3) ?? nonEmpty(env.AWS_ENDPOINT_URL);
  const region = nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION) ?? (endpoint === undefined ? undefined : 'us-east-1');
  const accessKeyId = nonEmpty(env.AWS_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.AWS_SECRET_ACCESS_KEY);
  const sessionToken = nonEmpty(env.AWS_SESSION_TOKEN);
  const profile = nonEmpty(env.AWS_PROFILE);
  return {
    ...(region === undefined ? {} : { region }),
    ...(profile === undefined ? {} : { profile }),
    ...(accessKeyId === undefined || secretAccessKey === undefined ? {} : { credentials: { accessKeyId, secretAccessKey, ...(sessionToken === undefined ? {} : { sessionToken }) } }),
    ...(endpoint === undefined
      ? // On AWS a bucket of another region answers with a redirect the client can follow.
        { followRegionRedirects: true }
      : { endpoint, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' }),
  };
}

/** How messages name AWS's own endpoint. */
export const AWS_S3 = 'AWS S3';

/** The endpoint the client talks to, for messages: scheme, host and port only (no user info, path or query). */
export function endpointOf(config: S3ClientConfig): string {
  if (typeof config.endpoint !== 'string') return AWS_S3;
  try {
    const url = new URL(config.endpoint);
    return `${url.protocol}//${url.host}`;
  } catch {
    return 'the endpoint in AWS_ENDPOINT_URL_S3';
  }
}

/**
 * Makes the client. On Node 20 the SDK's constructor prints a `NodeVersionSupportWarning` (its
 * versions of 2027 will need Node 22); it is turned off here by the SDK's documented switch,
 * `AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true`, set only while the constructor reads it
 * (and left as it is when the user set it), so a command's output holds none of it.
 */
export function makeClient(sdk: S3Sdk, config: S3ClientConfig): S3Client {
  const name = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';
  if (process.env[name] !== undefined) return new sdk.S3Client(config);
  process.env[name] = 'true';
  try {
    return new sdk.S3Client(config);
  } finally {
    delete process.env[name];
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
