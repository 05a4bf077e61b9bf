/**
 * A few records held as a table: what `preview` returns. It shows itself in Jupyter as an HTML table
 * (shape, columns with their types, the first and last rows) and as aligned text elsewhere
 * (`String(table)`, `console.log(table)`).
 */
import { columnsOf, flatten, type TableColumn } from './columns.ts';
import { cellText, type Grid, type GridColumn, JUPYTER_DISPLAY, type MediaBundle, tableHtml, tableText } from './display.ts';

/** Rows shown at most: the first half and the last half of this many; the rest stay in `records`. */
const SHOWN_ROWS = 20;
/** Columns shown at most; the rest are counted. */
const SHOWN_COLUMNS = 40;

/**
 * The first rows of a stream as a table (`preview`): the records, their columns with types, and
 * whether the source ended within them. Renders itself as HTML in Jupyter, and as text.
 */
export class RecordTable<R = unknown> {
  /** The records, as the source yielded them. */
  readonly records: readonly R[];
  /** Every column of the records, flattened as the sinks do, in order of first appearance. */
  readonly columns: readonly TableColumn[];
  /** True when the source ended within these records; false when reading stopped at the row limit. */
  readonly complete: boolean;
  readonly #rows: readonly ReadonlyMap<string, unknown>[];

  constructor(records: readonly R[], complete: boolean) {
    this.records = records;
    this.complete = complete;
    this.#rows = records.map(flatten);
    this.columns = columnsOf(this.#rows);
  }

  /** The table as the text and HTML a notebook shows. */
  [JUPYTER_DISPLAY](): MediaBundle {
    const grid = this.#grid();
    return { 'text/html': tableHtml(grid), 'text/plain': tableText(grid) };
  }

  /** The table as text: the shape, each column with its type, the first and last rows. */
  toString(): string {
    return tableText(this.#grid());
  }

  /** `console.log(table)` and the Node REPL print the text table rather than the object's fields. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }

  #grid(): Grid {
    const count = this.records.length;
    const shownColumns = this.columns.slice(0, SHOWN_COLUMNS);
    const columns: GridColumn[] = shownColumns.map(({ name, type }) => ({ name, type }));
    const half = SHOWN_ROWS / 2;
    const picked = count <= SHOWN_ROWS ? this.#rows : [...this.#rows.slice(0, half), ...this.#rows.slice(count - half)];
    const rows = picked.map((row) => shownColumns.map(({ name }) => cellText(row.get(name))));
    const shape = `${count} ${count === 1 ? 'record' : 'records'} × ${this.columns.length} ${this.columns.length === 1 ? 'column' : 'columns'}`;
    const caption = `${shape} · ${this.complete ? 'the whole source' : `the first ${count} of the source (reading stopped there)`}`;
    return {
      caption,
      columns,
      rows,
      ...(count > SHOWN_ROWS ? { omitted: { at: half, count: count - SHOWN_ROWS } } : {}),
      ...(this.columns.length > SHOWN_COLUMNS ? { omittedColumns: this.columns.length - SHOWN_COLUMNS } : {}),
    };
  }
}
