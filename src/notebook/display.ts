/**
 * How socialstream's values show themselves in Jupyter: an object with a `Symbol.for('Jupyter.display')`
 * method returning a MIME bundle is rendered by the Deno kernel (and by kernels that follow its
 * convention) instead of being inspected as text. Everything here is plain string building, so the
 * same tables serve a record preview, an export summary and a dataset's info.
 */

/** The symbol the Deno kernel looks for (`Deno.jupyter.$display` is this same registered symbol). */
export const JUPYTER_DISPLAY: unique symbol = Symbol.for('Jupyter.display') as typeof JUPYTER_DISPLAY;

/** What a displayable value renders to: HTML for notebook frontends, text for everything else. */
export interface MediaBundle {
  'text/html': string;
  'text/plain': string;
}

export interface Displayable {
  [JUPYTER_DISPLAY](): MediaBundle;
}

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

/** A value that shows `html` in a notebook and `text` elsewhere. */
export function displayable(html: string, text: string): Displayable {
  return { [JUPYTER_DISPLAY]: () => ({ 'text/html': html, 'text/plain': text }) };
}

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe inside HTML elements and attribute values: record values are whatever a platform sent. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

/** The longest cell shown; longer values are cut with `…`. */
export const CELL_WIDTH = 60;

/**
 * A value as one short line: text as it is, numbers and booleans as JSON, nested arrays and objects
 * compactly (`[3 items]`, `{id, name, …}` one level down), everything cut to `max` characters.
 * Line breaks and tabs become visible escapes, so a cell stays one line in a text table.
 */
export function cellText(value: unknown, max = CELL_WIDTH): string {
  return cut(oneLine(compact(value, 2)), max);
}

function compact(value: unknown, depth: number): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return depth < 2 ? JSON.stringify(value) : value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value === 'symbol') return value.toString();
  if (typeof value === 'function') return '[function]';
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (depth <= 0) return `[${value.length} ${value.length === 1 ? 'item' : 'items'}]`;
    return `[${value.map((item) => compact(item ?? null, depth - 1) || 'null').join(', ')}]`;
  }
  const keys = Object.keys(value);
  if (keys.length === 0) return '{}';
  if (depth <= 0) return `{${keys.join(', ')}}`;
  const entries = keys.map((key) => `${key}: ${compact((value as Record<string, unknown>)[key], depth - 1) || 'null'}`);
  return `{${entries.join(', ')}}`;
}

function oneLine(text: string): string {
  return text.replace(/\r\n|[\r\n\t]/g, (c) => (c === '\t' ? '\\t' : '\\n'));
}

/** `text` in at most `max` characters (code points, so an emoji is never split in half). */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const points = Array.from(text);
  return points.length <= max ? text : points.slice(0, Math.max(0, max - 1)).join('') + '…';
}

/** The grid as an HTML table with its caption; every piece of text escaped. */
export function tableHtml(grid: Grid): string {
  const { caption, columns, rows, omitted, omittedColumns = 0 } = grid;
  const more = omittedColumns > 0 ? `<th title="${omittedColumns} more columns">…</th>` : '';
  const head = columns
    .map(({ name, type }) => `<th>${escapeHtml(name)}${type === undefined ? '' : `<br><small style="font-weight:normal;opacity:.7">${escapeHtml(type)}</small>`}</th>`)
    .join('');
  const width = columns.length + (omittedColumns > 0 ? 1 : 0);
  const body = rows.map((cells, index) => {
    const gap = omitted !== undefined && omitted.at === index ? gapHtml(omitted.count, width) : '';
    const tds = cells.map((cell) => `<td>${escapeHtml(cell)}</td>`).join('');
    return `${gap}<tr>${tds}${omittedColumns > 0 ? '<td>…</td>' : ''}</tr>`;
  });
  if (omitted !== undefined && omitted.at >= rows.length) body.push(gapHtml(omitted.count, width));
  return (
    `<div class="socialstream-table" style="max-width:100%;overflow-x:auto">` +
    `<p style="margin:0 0 4px">${escapeHtml(caption)}</p>` +
    `<table style="white-space:nowrap;text-align:left">` +
    `<thead><tr>${head}${more}</tr></thead><tbody>${body.join('')}</tbody></table></div>`
  );
}

function gapHtml(count: number, width: number): string {
  return `<tr><td colspan="${width}" style="text-align:center;opacity:.7">… ${count} more ${count === 1 ? 'row' : 'rows'} …</td></tr>`;
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
