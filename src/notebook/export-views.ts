/**
 * The export engine's results as notebooks show them: a summary as a table of what it says, a
 * dataset's info with its partitions and schema folded away, and `progress: true` as one display
 * updated in place. The engine knows only text; these views are attached to it (`attachSummaryView`,
 * `attachInfoView`, `attachProgressView`) by the package's entry points, `socialstream` and
 * `socialstream/export`, when they load, so no module of the engine imports this folder.
 */
import { describeDrift } from '../export/summary.ts';
import { attachInfoView, operationLines, partitionGrid, schemaGrid, size, describeDatasetInfo, type DatasetInfoData } from '../dataset/info.ts';
import { attachProgressView, counted } from '../export/progress.ts';
import { attachSummaryView, describeSummary } from '../export/summary.ts';
import type { ExportSummary } from '../export/types.ts';
import { escapeHtml, tableHtml, type MediaBundle } from './display.ts';
import { progressView } from './progress.ts';

/** Attaches every view; calling it again changes nothing. */
export function attachNotebookViews(): void {
  attachSummaryView(summaryBundle);
  attachInfoView(infoBundle);
  attachProgressView(() => progressView());
}

function summaryBundle(summary: ExportSummary): MediaBundle {
  const facts: [string, string][] = [
    ['complete', String(summary.complete) + (summary.stoppedBy === undefined ? '' : ` (stopped by ${summary.stoppedBy})`) + (summary.alreadyComplete === true ? ' (already: nothing bought)' : '')],
    ['output', summary.output + (summary.bytes === undefined ? '' : ` (${counted(summary.bytes, 'byte')})`)],
    ['records', `${summary.records} written of ${summary.received} received; ${summary.duplicates} duplicates${summary.totalRecords === undefined ? '' : `; ${summary.totalRecords} in the file`}`],
    ['pages', String(summary.pages)],
    ['credits', `${summary.credits} this run, ${summary.exportCredits} in all`],
    ['walks', `${summary.walks.done} of ${summary.walks.total} done`],
    ['time', `${(summary.elapsedMs / 1000).toFixed(1)} s`],
  ];
  if (summary.repaired > 0) facts.push(['repaired', counted(summary.repaired, 'string')]);
  if (summary.dataset !== undefined) {
    const { added, updated, partitions, drift } = summary.dataset;
    facts.push(['dataset', `${added} added, ${updated} updated, ${counted(partitions.length, 'partition')} rewritten`], ['schema', describeDrift(drift)]);
  }
  for (const { message } of summary.rejected) facts.push(['rejected', message]);
  for (const warning of summary.ignoredContinuations) facts.push(['warning', warning]);
  const html = tableHtml({ caption: 'export summary', columns: [{ name: 'what' }, { name: 'value' }], rows: facts });
  return { 'text/html': html, 'text/plain': describeSummary(summary) };
}

function infoBundle(info: DatasetInfoData): MediaBundle {
  const head = `<p><b>dataset ${escapeHtml(info.dir)}</b>: ${counted(info.operations.length, 'operation')}, ${counted(info.rows, 'row')} in ${counted(info.parts, 'part file')} (${escapeHtml(size(info.bytes))})</p>`;
  const sections = info.operations.map((operation) => {
    const [title, ...rest] = operationLines(operation).filter((line) => !line.startsWith('  schema:'));
    const details = rest.map((line) => `<li>${escapeHtml(line.trim())}</li>`).join('');
    return (
      `<div class="socialstream-dataset"><p><b>${escapeHtml(title)}</b></p>` +
      (details === '' ? '' : `<ul>${details}</ul>`) +
      `<details><summary>partitions</summary>${tableHtml(partitionGrid(operation))}</details>` +
      `<details><summary>schema</summary>${tableHtml(schemaGrid(operation))}</details></div>`
    );
  });
  return { 'text/html': head + sections.join(''), 'text/plain': describeDatasetInfo(info) };
}
