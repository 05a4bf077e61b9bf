export { preview, type PreviewOptions } from './preview.ts';
export { RecordTable } from './record-table.ts';
export type { ColumnType, TableColumn } from './columns.ts';
export { displayable, JUPYTER_DISPLAY, type Displayable, type MediaBundle } from './display.ts';
