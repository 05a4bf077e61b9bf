/**
 * How socialstream's values show themselves in Jupyter: an object with a `Symbol.for('Jupyter.display')`
 * method returning a MIME bundle is rendered by the Deno kernel (and by kernels that follow its
 * convention) instead of being inspected as text. Everything here is plain string building, so the
 * same tables serve a record preview, an export summary and a dataset's info.
 */

import { escapeHtml, JUPYTER_DISPLAY, type Displayable } from '../jupyter.ts';
import { cut, type Grid } from '../text-table.ts';

export { escapeHtml, JUPYTER_DISPLAY, type Displayable, type MediaBundle } from '../jupyter.ts';
export { cut, tableText, TEXT_WIDTH, type Grid, type GridColumn } from '../text-table.ts';

/** A value that shows `html` in a notebook and `text` elsewhere. */
export function displayable(html: string, text: string): Displayable {
  return { [JUPYTER_DISPLAY]: () => ({ 'text/html': html, 'text/plain': text }) };
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

