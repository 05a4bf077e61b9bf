/**
 * When a Parquet file re-encodes itself at close (`sinks/parquet-widening.ts`): only when what went
 * to `_extra` widens the written schema. The files themselves, read by DuckDB, Polars and arrow-rs,
 * are tested in test/export/file-types.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { NestedLayout } from '../../sinks/parquet-nested.ts';
import { Spills, widenColumns, widenFields } from '../../sinks/parquet-widening.ts';
import { RowLayout } from '../../sinks/rows.ts';
import { Repairs } from '../../sinks/strings.ts';

const flat = { maxDepth: 3, pinned: () => false, addsColumns: true };

describe('a flat file', () => {
  it('is not re-encoded when a column its sample saw only as null gets no value', () => {
    const layout = RowLayout.plan([{ id: 1, media: null }], {}, true);
    expect(widenColumns(layout.columns, new Spills(2), flat)).toBeUndefined();
  });

  it('is re-encoded when a column its sample saw only as null later gets a string, though its kind stays VARCHAR', () => {
    const layout = RowLayout.plan([{ id: 1, flair: null }], {}, true);
    const spills = new Spills(2);
    spills.note({ flair: 'gold' });
    expect(widenColumns(layout.columns, spills, flat)).toEqual([
      { name: 'id', kind: 'integer', untyped: false },
      { name: 'flair', kind: 'string', untyped: false },
    ]);
  });

  it('is not re-encoded when what went to _extra widens nothing (a boolean among integers)', () => {
    const layout = RowLayout.plan([{ id: 1, n: 2 }], {}, true);
    const spills = new Spills(2);
    spills.note({ n: true });
    expect(widenColumns(layout.columns, spills, flat)).toBeUndefined();
  });
});

describe('a nested file', () => {
  it('is not re-encoded when what went to _extra widens nothing (an object among strings)', () => {
    const layout = NestedLayout.plan([{ id: 'a', ref: 'p0' }], {}, new Repairs());
    const spills = new Spills(6);
    spills.note({ ref: { nested: 1 } });
    expect(widenFields(layout.fields, spills)).toBeUndefined();
  });

  it('widens a BIGINT leaf inside a struct to DOUBLE when a fraction went to _extra', () => {
    const layout = NestedLayout.plan([{ id: 'a', stats: { ratio: 1 } }], {}, new Repairs());
    const spills = new Spills(6);
    spills.note({ 'stats.ratio': 0.5 });
    expect(widenFields(layout.fields, spills)).toEqual([
      { name: 'id', shape: { kind: 'string' } },
      { name: 'stats', shape: { struct: [{ name: 'ratio', shape: { kind: 'double' } }] } },
    ]);
  });
});
