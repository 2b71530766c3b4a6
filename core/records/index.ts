/** Run records (DESIGN.md §6): list, detail, deletion, plot data, steps CSV rows and the log text. */
export {
  DEFAULT_PER_PAGE,
  MAX_PER_PAGE,
  MAX_KEYWORD,
  DETAIL_STEP_LIMIT,
  parseListQuery,
  recordSummary,
  listRecords,
  recordDetail,
  getRun,
  notFoundRecord,
  mayDelete,
  deleteRecord,
  type ListQuery,
  type RecordSummary,
  type RecordList,
  type RecordDetail,
  type RecordPhase,
  type RecordStep,
  type RecordLog,
} from './records.js';
export { plotData, plotValue, type PlotData, type PlotIteration } from './plot.js';
export { STEPS_CSV_COLUMNS, stepsCsvRow, stepsCsvBatches, logLine, logText, type StepsCsvRow } from './export.js';
export { pathAtIndex, stepPathResolver } from './paths.js';
export { runTail } from './tail.js';
