/**
 * Tables as aligned plain text: what the CLI prints and what a notebook shows where it has no HTML.
 * A `Grid` is the table as data; `src/notebook/display.ts` renders the same grids as HTML.
 */

/** A column of a grid: its header, and an optional second header line (a type). */
export interface GridColumn {
  readonly name: string;
  readonly type?: string;
}

/** A table to render: cells are text already cut to size (see `cellText`). */
export interface Grid {
  /** One line above the table: what it is and its shape. */
  readonly caption: string;
  readonly columns: readonly GridColumn[];
  readonly rows: readonly (readonly string[])[];
  /** Rows left out before row `at` of `rows` (first and last rows shown, the middle skipped). */
  readonly omitted?: { readonly at: number; readonly count: number };
  /** Columns left out after the ones shown (too many to show). */
  readonly omittedColumns?: number;
}

/** `text` in at most `max` characters (code points, so an emoji is never split in half). */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const points = Array.from(text);
  return points.length <= max ? text : points.slice(0, Math.max(0, max - 1)).join('') + '…';
}

/** The widest line `tableText` writes by default: columns past it are counted, not shown. */
export const TEXT_WIDTH = 160;

/** The grid as aligned plain text: the caption, the headers (and types), then the rows, in at most `width` characters a line. */
export function tableText(grid: Grid, width = TEXT_WIDTH): string {
  const { caption, rows, omitted } = grid;
  if (grid.columns.length === 0) return caption;
  const all = grid.columns.map(({ name, type }, i) => Math.max(length(name), length(type ?? ''), ...rows.map((row) => length(row[i] ?? ''))));
  // As many columns as fit (at least one), leaving room for the `  …` that says more follow.
  let shown = 1;
  let used = all[0];
  while (shown < all.length && used + 2 + all[shown] + (shown + 1 < all.length ? 3 : 0) <= width) used += 2 + all[shown++];
  const columns = grid.columns.slice(0, shown);
  const widths = all.slice(0, shown);
  const hidden = (grid.omittedColumns ?? 0) + grid.columns.length - shown;
  const line = (cells: readonly string[]): string =>
    (cells.slice(0, shown).map((cell, i) => pad(cell, widths[i])).join('  ') + (hidden > 0 ? '  …' : '')).trimEnd();
  const lines = [hidden > 0 ? `${caption} (${hidden} ${hidden === 1 ? 'column' : 'columns'} not shown here)` : caption];
  lines.push(line(columns.map(({ name }) => name)));
  if (columns.some(({ type }) => type !== undefined)) lines.push(line(columns.map(({ type }) => type ?? '')));
  rows.forEach((row, index) => {
    if (omitted !== undefined && omitted.at === index) lines.push(gapText(omitted.count));
    lines.push(line(row));
  });
  if (omitted !== undefined && omitted.at >= rows.length) lines.push(gapText(omitted.count));
  return lines.join('\n');
}

function gapText(count: number): string {
  return `… ${count} more ${count === 1 ? 'row' : 'rows'} …`;
}

function length(text: string): number {
  return Array.from(text).length;
}

function pad(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - length(text)));
}
