/**
 * The Jupyter display protocol, as the Deno kernel reads it: a value with a
 * `Symbol.for('Jupyter.display')` method returning a MIME bundle is rendered from that bundle
 * instead of being inspected as text. Kept at the bottom of the import graph, so any layer can give
 * its results a display (text at least) while the HTML views stay in `src/notebook/`.
 */

/** The symbol the Deno kernel looks for (`Deno.jupyter.$display` is this same registered symbol). */
export const JUPYTER_DISPLAY: unique symbol = Symbol.for('Jupyter.display') as typeof JUPYTER_DISPLAY;

/** What a displayable value renders to: HTML for notebook frontends, text for everything else. */
export interface MediaBundle {
  'text/html': string;
  'text/plain': string;
}

/**
 * A value that renders itself in a Jupyter notebook (Deno kernel): HTML for the frontend, text for
 * everything else.
 */
export interface Displayable {
  /** What the notebook shows for this value. */
  [JUPYTER_DISPLAY](): MediaBundle;
}

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe inside HTML elements and attribute values: record values are whatever a platform sent. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

/** A bundle of text alone (HTML that shows the same text), for a value no richer view was attached to. */
export function textBundle(text: string): MediaBundle {
  return { 'text/html': `<pre>${escapeHtml(text)}</pre>`, 'text/plain': text };
}
