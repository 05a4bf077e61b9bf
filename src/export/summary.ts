/**
 * An export summary in words: what was written where, what it cost, and, when the run stopped before
 * the end, why and what a resume would continue. The CLI prints it (naming its own flags); a script
 * or notebook reads it the same way.
 */
import { JUPYTER_DISPLAY, textBundle, type MediaBundle } from '../jupyter.ts';
import type { SchemaDrift } from '../errors.ts';
import { counted } from './progress.ts';
import type { ExportSummary, StopReason } from './types.ts';

/** Words for each stop, given how the caller names the option that caused it. */
export type OptionNames = Record<'maxCredits' | 'maxPages' | 'limit', string>;

const LIBRARY_NAMES: OptionNames = { maxCredits: 'maxCredits', maxPages: 'maxPages', limit: 'limit' };

/** The summary as a few lines of text. */
export function describeSummary(summary: ExportSummary, names: OptionNames = LIBRARY_NAMES): string {
  const lines: string[] = [];
  const where = summary.dataset === undefined ? summary.output : `dataset ${summary.output} (${summary.dataset.writer})`;
  if (summary.alreadyComplete === true) {
    const what = summary.totalRecords === undefined ? `this run of ${where} was published complete` : `${counted(summary.totalRecords, 'record')} in ${where}`;
    return `already complete: ${what}; nothing bought, nothing written`;
  }
  const size = summary.bytes === undefined ? '' : ` (${counted(summary.bytes, 'byte')})`;
  const cost = `${counted(summary.credits, 'credit')} this run${summary.exportCredits !== summary.credits ? `, ${summary.exportCredits} over every run of this export` : ''}`;
  const head = summary.complete ? 'wrote' : summary.stoppedBy !== undefined && summary.stoppedBy !== 'signal' ? `stopped at ${describeStop(summary.stoppedBy, summary, names)};` : 'stopped early;';
  const how = summary.complete && summary.pages === 0 && summary.resumed ? 'finished from what was staged, no request needed' : `${cost}, ${(summary.elapsedMs / 1000).toFixed(1)} s`;
  // After a resume the file holds what earlier runs wrote too: this run's records alone would read as the file's.
  const total = summary.totalRecords === undefined || summary.totalRecords === summary.records ? '' : `, which holds ${counted(summary.totalRecords, 'record')} in all`;
  lines.push(`${head} ${counted(summary.records, 'record')} (${counted(summary.pages, 'page')})${total === '' ? '' : ' this run'} to ${where}${size}${total}; ${how}`);
  if (summary.duplicates > 0) lines.push(`  ${counted(summary.duplicates, 'duplicate record')} (a key already written) dropped`);
  if (summary.repaired > 0) lines.push(`  ${counted(summary.repaired, 'string')} had invalid UTF-16 and ${summary.repaired === 1 ? 'was' : 'were'} repaired`);
  if (summary.unread > 0) lines.push(`  ${counted(summary.unread, 'credit')} on pages bought ahead and never read`);
  if (summary.dataset !== undefined) {
    const { added, updated, partitions, drift, stoppedAtMark } = summary.dataset;
    lines.push(`  ${counted(added, 'new row')}, ${updated} updated, ${counted(partitions.length, 'partition')} rewritten; ${stoppedAtMark} of ${counted(summary.walks.total, 'walk')} stopped at the high-water mark`);
    lines.push(`  ${describeDrift(drift)}`);
    const widening = summary.dataset.widening;
    if (widening !== undefined) lines.push(`  rewrote ${counted(widening.partitions, 'partition')} to the widened types in ${widening.seconds.toFixed(1)} s`);
    if (summary.dataset.setAside > 0) lines.push(`  ${counted(summary.dataset.setAside, 'record')} without a usable key set aside (not written)`);
  }
  if (!summary.complete && summary.remaining > 0) lines.push(`  ${counted(summary.remaining, 'walk')} not finished: a resume continues ${summary.remaining === 1 ? 'it' : 'them'}`);
  for (const warning of summary.ignoredContinuations) lines.push(`  warning: ${warning}; the output may be incomplete`);
  return lines.join('\n');
}

function describeStop(reason: StopReason, summary: ExportSummary, names: OptionNames): string {
  switch (reason) {
    case 'maxCredits':
      return `${names.maxCredits} (${counted(summary.credits, 'credit')} this run): resume to continue (with a higher ${names.maxCredits} for more this run)`;
    case 'maxPages':
      return `${names.maxPages} (${counted(summary.pages, 'page')} this run): resume to continue`;
    case 'limit':
      return `${names.limit} (${counted(summary.records, 'record')} this run): resume to continue`;
    case 'signal':
      return 'the signal';
    case 'balance':
      return `the balance (${summary.balance?.available ?? 0} credits left, ${summary.balance?.required ?? 1} needed): buy credits, then resume`;
  }
}

/** How a summary shows itself in a notebook; text until a richer view is attached (`attachSummaryView`). */
let summaryView: ((summary: ExportSummary) => MediaBundle) | undefined;

/**
 * Sets how summaries render in Jupyter. `src/notebook/export-views.ts` attaches its HTML table when a
 * package entry point loads, so the engine shows rich summaries without importing display code.
 */
export function attachSummaryView(view: (summary: ExportSummary) => MediaBundle): void {
  summaryView = view;
}

/**
 * Gives `summary` a Jupyter display (the attached view, else its words as text), without changing its
 * JSON: the method sits under a symbol, which `JSON.stringify` leaves out.
 */
export function displayed(summary: ExportSummary): ExportSummary {
  Object.defineProperty(summary, JUPYTER_DISPLAY, { value: (): MediaBundle => summaryView?.(summary) ?? textBundle(describeSummary(summary)), enumerable: false });
  return summary;
}

/**
 * One line for a summary: `2 new (views: integer), 1 widened (score: integer → double), 1 missing
 * (flair), 3 values to _extra (id: string ← struct, 3 values)`.
 */
export function describeDrift(drift: SchemaDrift): string {
  const parts: string[] = [];
  const widened = drift.widened ?? [];
  if (drift.added.length > 0) parts.push(`${drift.added.length} new (${drift.added.map((a) => `${a.column}: ${a.kind}`).join(', ')})`);
  if (widened.length > 0) parts.push(`${widened.length} widened (${widened.map((w) => `${w.column}: ${w.from} → ${w.to}`).join(', ')})`);
  if (drift.missing.length > 0) parts.push(`${drift.missing.length} missing (${drift.missing.join(', ')})`);
  if (drift.conflicting.length > 0) {
    const counted = drift.conflicting.every((c) => c.values !== undefined);
    const total = drift.conflicting.reduce((sum, c) => sum + (c.values ?? 0), 0);
    const each = drift.conflicting.map((c) => `${c.column}: ${c.recorded} ← ${c.seen}${c.values === undefined ? '' : `, ${c.values} ${c.values === 1 ? 'value' : 'values'}`}`);
    parts.push(counted ? `${total} ${total === 1 ? 'value' : 'values'} to _extra (${each.join('; ')})` : `${drift.conflicting.length} conflicting (${each.join(', ')})`);
  }
  return parts.length === 0 ? 'no schema drift' : `schema drift: ${parts.join(', ')}`;
}
