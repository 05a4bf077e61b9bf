// s3rver ships no types: the part of its file store `_s3.ts` replaces and calls.
declare module 's3rver/lib/stores/filesystem.js' {
  /** An object as s3rver hands it to its store. */
  export interface S3rverObject {
    bucket: string;
    key: string;
    metadata: Record<string, string>;
    content: Buffer | NodeJS.ReadableStream;
  }
  export default class FilesystemStore {
    putObject(object: S3rverObject): Promise<{ size: number; md5: string }>;
    putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5: string): Promise<void>;
    getResourcePath(bucket: string, key: string, resource: string): string;
    deleteObject(bucket: string, key: string): Promise<void>;
  }
}
