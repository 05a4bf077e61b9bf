/**
 * "Did you mean …?": the nearest of the names a caller knows to one it got wrong. Shared by the
 * command line (commands, flags, operations, parameters) and the library's refusal of options it
 * does not know, so a typo is answered the same way everywhere.
 */

/**
 * ` (did you mean "--limit"?)` when one of `known` is a likely typo of `word` (a few edits away, or
 * differing only in case), else the empty string.
 */
export function didYouMean(word: string, known: readonly string[], prefix = ''): string {
  const best = nearestName(word, known);
  return best === undefined ? '' : ` (did you mean "${prefix}${best}"?)`;
}

/** The one of `known` a few edits from `word` (a third of its length at most), the nearest first; undefined if none is. */
export function nearestName(word: string, known: readonly string[]): string | undefined {
  const allowed = Math.max(1, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance <= allowed && distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}
