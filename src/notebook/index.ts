/** Notebooks: record previews that render as tables, and live progress views. */
export { preview, type PreviewOptions } from './preview.ts';
export { RecordTable } from './record-table.ts';
export type { ColumnType, TableColumn } from './columns.ts';
export { displayable, JUPYTER_DISPLAY, type Displayable, type MediaBundle } from './display.ts';
export { progressView, type ExportProgress, type ProgressStream, type ProgressViewOptions } from './progress.ts';
export { withProgress, type WithProgressOptions } from './with-progress.ts';
