/** Workflow files (DESIGN.md §6): CSV reading and writing, uploaded config and history files, run data. */
export { parseCsv, parseCsvAsync, toCsv, csvLine, csvChunks, writeCsv, cellText, neutralise, MAX_ROWS, MAX_COLUMNS, type CsvTable, type ParseOptions } from './csv.js';
export { FileStore, configRowsOf, checkHistory, DEFAULT_UPLOAD_LIMIT, type SaveMeta, type StoredFile } from './store.js';
export { runData, runIdOfFileName, runDataFileName, type RunData } from './rundata.js';
