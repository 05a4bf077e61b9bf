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
 * A value as one short line of at most `max` characters (docs/guide/notebooks.md "Notebooks"): text as it
 * is, numbers and booleans as JSON, bigints with every digit; an object as `{nickname: "ana", id: 7,
 * …}` and a list as `[3 items: …]`, two levels down (deeper ones as `{id, name}` and `[2 items]`),
 * entries left out as `…` so the brackets still close. Line breaks and tabs become visible escapes,
 * so a cell stays one line in a text table.
 */
export function cellText(value: unknown, max = CELL_WIDTH): string {
  return cut(compact(value, 2, max), max);
}

function compact(value: unknown, depth: number, width: number): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return depth < 2 ? JSON.stringify(value) : oneLine(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value === 'symbol') return value.toString();
  if (typeof value === 'function') return '[function]';
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const count = `${value.length} ${value.length === 1 ? 'item' : 'items'}`;
    if (depth <= 0) return `[${count}]`;
    const room = width - count.length - 4;
    return `[${count}: ${within(value.map((item) => (fit: number) => compact(item ?? null, depth - 1, fit) || 'null'), room)}]`;
  }
  if (value instanceof Map || value instanceof Set) return `${value.constructor.name}(${value.size})`;
  const keys = Object.keys(value);
  if (keys.length === 0) return '{}';
  if (depth <= 0) return `{${within(keys.map((key) => () => oneLine(key)), width - 2)}}`;
  const record = value as Record<string, unknown>;
  return `{${within(keys.map((key) => (fit: number) => `${oneLine(key)}: ${compact(record[key], depth - 1, fit - key.length - 2) || 'null'}`), width - 2)}}`;
}

/** Entries joined by `, ` in about `width` characters: those that do not fit become one `…` (the first is cut instead). */
function within(entries: readonly ((width: number) => string)[], width: number): string {
  const shown: string[] = [];
  let used = 0;
  for (const [index, entry] of entries.entries()) {
    const room = width - used - (index === 0 ? 0 : 2);
    const text = entry(Math.max(room, 1));
    // Room for `, …` after this one, unless it is the last.
    const fits = text.length + (index === entries.length - 1 ? 0 : 3) <= room;
    if (!fits && index > 0) return [...shown, '…'].join(', ');
    if (!fits) return entries.length > 1 ? `${cut(text, Math.max(room - 3, 1))}, …` : cut(text, Math.max(room, 1));
    shown.push(text);
    used += text.length + (index === 0 ? 0 : 2);
  }
  return shown.join(', ');
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

