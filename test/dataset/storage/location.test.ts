/** Dataset locations (src/dataset/storage/location.ts): a local path, or s3://bucket/prefix, checked before anything is touched. */
import { describe, expect, it } from 'vitest';
import { OptionError } from '../../../src/errors.ts';
import { describeLocation, parseLocation } from '../../../src/dataset/storage/location.ts';

describe('parseLocation', () => {
  it('reads s3://bucket/prefix as a bucket and a prefix, trailing slashes dropped', () => {
    expect(parseLocation('s3://my-bucket/raw/orders///')).toEqual({ kind: 's3', bucket: 'my-bucket', prefix: 'raw/orders' });
    expect(parseLocation('s3://my.bucket-2/')).toEqual({ kind: 's3', bucket: 'my.bucket-2', prefix: '' });
    expect(parseLocation('S3://logs/month=2024-01/x y')).toEqual({ kind: 's3', bucket: 'logs', prefix: 'month=2024-01/x y' });
  });

  it('keeps relative, absolute and Windows-like paths local, without trailing separators', () => {
    expect(parseLocation('data/')).toEqual({ kind: 'local', path: 'data' });
    expect(parseLocation('/mnt/shared/data//')).toEqual({ kind: 'local', path: '/mnt/shared/data' });
    expect(parseLocation('C:\\data\\')).toEqual({ kind: 'local', path: 'C:\\data' });
    expect(parseLocation('s3-backup/x')).toEqual({ kind: 'local', path: 's3-backup/x' });
    expect(parseLocation('/')).toEqual({ kind: 'local', path: '/' });
  });

  it('writes a location back as a user writes it', () => {
    expect(describeLocation(parseLocation('s3://my-bucket/raw/'))).toBe('s3://my-bucket/raw');
    expect(describeLocation(parseLocation('s3://my-bucket'))).toBe('s3://my-bucket');
    expect(describeLocation(parseLocation('./data/'))).toBe('./data');
  });

  it.each([
    ['s3://', 'names no bucket'],
    ['s3:///prefix', 'names no bucket'],
    ['s3://ab', '3 to 63 characters'],
    ['s3://My-Bucket/x', 'lowercase letters, digits, dots and hyphens'],
    ['s3://my_bucket/x', 'lowercase letters, digits, dots and hyphens'],
    ['s3://-bucket/x', 'begin and end with a letter or a digit'],
    ['s3://my..bucket', 'two dots in a row'],
    ['s3://192.168.10.1/x', 'IP address'],
    ['s3://bucket/a//b', 'the prefix may not hold an empty segment'],
    ['s3://bucket/../b', 'the prefix may not hold a segment beginning with .'],
    ['s3://bucket/.state', 'the prefix may not hold a segment beginning with .'],
    ['gs://bucket/x', 'only local folders and s3://bucket/prefix'],
    ['', 'names no folder'],
  ])('refuses %j, naming the option and what is wrong (%s)', (text, problem) => {
    let refused: unknown;
    try {
      parseLocation(text);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(OptionError);
    const error = refused as OptionError;
    expect(error.options).toEqual(['dataset']);
    expect(error.message).toContain(problem);
    expect(error.describe((option) => `--${option}`)).toMatch(/^--dataset /);
  });
});
