/** Workflow files (DESIGN.md §6): CSV reading and writing, uploaded config and history files, run data. */
export {
  parseCsv,
  parseCsvAsync,
  scanCsv,
  scanCsvAsync,
  toCsv,
  csvLine,
  csvChunks,
  writeCsv,
  cellText,
  neutralise,
  MAX_ROWS,
  MAX_COLUMNS,
  type CsvTable,
  type CsvHead,
  type CsvScan,
  type ParseOptions,
  type ScanOptions,
} from './csv.js';
export { FileStore, configRowsOf, DEFAULT_UPLOAD_LIMIT, type SaveMeta, type SavedFile, type StoredFile } from './store.js';
export { runData, runIdOfFileName, runDataFileName, type RunData } from './rundata.js';
