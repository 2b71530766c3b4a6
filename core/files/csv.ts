/**
 * CSV in and out (DESIGN.md §6). Reading turns an upload into `{ columns, rows }` of strings and says what is
 * wrong by the line a person sees in their editor; writing neutralises spreadsheet formulas.
 *
 * Reading rules:
 * - the first line names the columns (trimmed; none may be empty or repeated);
 * - an optional second row of type names (`number, string, …`, as older tools write it) is dropped and
 *   returned as `types`;
 * - a UTF-8 byte-order mark is stripped; text that is not UTF-8 is read as Latin-1 (old Excel exports);
 * - the separator is `,`, or `;` / tab when the header line has no comma (European spreadsheets);
 * - blank lines and rows of empty cells (`,,,` as spreadsheets write them) are skipped, anywhere;
 * - spaces around a separator are dropped (`1, water` → `water`); quoted cells keep theirs;
 * - a quote inside a cell that does not start with one is text (`5" tube`);
 * - every other row must have exactly as many cells as the header.
 *
 * Writing rule (formula injection): a text cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage
 * return gets a leading `'` so a spreadsheet shows it as text instead of running it. A cell that is a plain
 * number (`-1.5`, `+2`, `-3e-4`) is left alone: it is data, and a spreadsheet reads it as a number.
 * Numbers, booleans and empty values are never touched. Exported files are not read back specially: an
 * upload of `'=x` keeps the quote.
 */
import { parse as parseStream } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { LabError, type ErrorDetail } from '../errors.js';
import { TYPE_NAMES } from '../workflow/config.js';
import { sentence } from '../text.js';

export interface CsvTable {
  /** The header, trimmed. */
  columns: string[];
  /** One object per data row, every value a string (an empty cell is ''). */
  rows: Record<string, string>[];
  /** The type row, one name per column, when the file had one. */
  types?: string[];
  /** The line (1-based, as an editor counts) each row starts on: `lines[i]` belongs to `rows[i]`. */
  lines: number[];
}

export interface ParseOptions {
  /** Most data rows (default 100,000). */
  maxRows?: number;
  /** Most columns (default 1,000). */
  maxColumns?: number;
}

export const MAX_ROWS = 100_000;
export const MAX_COLUMNS = 1_000;
/** At most this many problems are listed in `details`. */
const MAX_DETAILS = 100;

/**
 * The UTF-8 bytes of an input: a Buffer as it is when it is valid UTF-8, else read as Latin-1 (old Excel
 * exports) and encoded again. Binary files (NUL bytes) are refused.
 */
function utf8(input: Buffer | string): Buffer {
  if (typeof input === 'string') return Buffer.from(input, 'utf8');
  if (input.includes(0)) {
    throw new LabError('invalid_input', 'This is not a CSV text file (it has binary content: an Excel .xlsx? Save it as CSV).', [{ field: 'file', message: 'not a text file' }]);
  }
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(input);
    return input;
  } catch {
    return Buffer.from(input.toString('latin1'), 'utf8');
  }
}

/** The separator: `,` unless the header line has none and has a `;` or a tab. */
function sniffDelimiter(bytes: Buffer): string {
  const ends = [bytes.indexOf(0x0a), bytes.indexOf(0x0d)].filter((i) => i >= 0);
  const first = bytes.subarray(0, ends.length ? Math.min(...ends) : bytes.length).toString('utf8');
  if (first.includes(',')) return ',';
  if (first.includes(';')) return ';';
  if (first.includes('\t')) return '\t';
  return ',';
}

const invalid = (message: string, details: ErrorDetail[]) =>
  new LabError('invalid_input', message, details.length > MAX_DETAILS ? [...details.slice(0, MAX_DETAILS), { message: `and ${details.length - MAX_DETAILS} more problems` }] : details);

/** One error for a list of problems: the message names the first few. */
function problems(details: ErrorDetail[]): LabError {
  const shown = details.slice(0, 3).map((d) => `${d.field}: ${d.message}`);
  const more = details.length > 3 ? `; and ${details.length - 3} more` : '';
  return invalid(`The CSV file is malformed: ${shown.join('; ')}${more}`, details);
}

const tooManyRows = (max: number, line: number) =>
  invalid(`The CSV file has more than ${max.toLocaleString('en')} rows; split it into smaller files.`, [{ field: `line ${line}`, message: `row ${max + 1}: more than ${max} rows` }]);

/**
 * A header cell without the unit a run's data CSV writes after a name (`volume (mL)` → `volume`): a
 * parameter's or output's name has no space or bracket, so a downloaded run reads back as it was.
 */
export function withoutUnit(cell: string): string {
  const m = /^([A-Za-z_][A-Za-z0-9_.-]*) \([^()]{1,40}\)$/.exec(cell);
  return m ? m[1]! : cell;
}

/** The head of a CSV: its columns and, when the file had one, its type row. */
export interface CsvHead {
  columns: string[];
  types?: string[];
}

export interface ScanOptions extends ParseOptions {
  /** Stop after this many data rows (a preview): the rest of the file is neither read nor checked. */
  limit?: number;
  /** Called once the header (and a type row) are read, before any row: throw to stop reading. */
  onHead?: (head: CsvHead) => void;
  /** Called for each data row as it is read (cells by column index; the line it starts on). Nothing is kept. */
  onRow?: (cells: string[], line: number) => void;
}

export interface CsvScan extends CsvHead {
  /** Data rows read. */
  rows: number;
  /** `limit` stopped the reading before the end of the file. */
  truncated: boolean;
}

/** Thrown inside csv-parse's callback when `limit` rows were read: the reading stops there. */
const ENOUGH = Symbol('enough rows');

/**
 * The reading machinery shared by the sync and the async scan: csv-parse options whose `on_record` takes
 * the header, the type row and each data row in turn (kept nowhere: memory stays flat whatever the file),
 * a mapper from csv-parse errors to LabErrors, and the end checks.
 */
function reader(bytes: Buffer, options: ScanOptions) {
  const maxRows = options.maxRows ?? MAX_ROWS;
  const maxColumns = options.maxColumns ?? MAX_COLUMNS;
  const limit = options.limit ?? Infinity;
  // csv-parse says where each record ends in the bytes (`ctx.bytes`). Lines are counted here, as an editor
  // counts them (\r\n, \n or \r), because csv-parse counts \r\n inside quotes twice.
  let scanned = 0;
  let lineNo = 1;
  /** The line of a byte offset (offsets only grow). */
  const lineAt = (offset: number) => {
    for (; scanned < offset && scanned < bytes.length; scanned++) {
      const c = bytes[scanned];
      if (c === 0x0a || (c === 0x0d && bytes[scanned + 1] !== 0x0a)) lineNo++;
    }
    return lineNo;
  };

  let head: (CsvHead & { line: number }) | null = null;
  /** The header is read and the next record may be a type row. */
  let typeRowNext = false;
  let rows = 0;
  let truncated = false;
  const widthProblems: ErrorDetail[] = [];

  function header(cells: string[], line: number) {
    const columns = cells.map((c) => withoutUnit(c.trim()));
    if (columns.length > maxColumns) {
      throw invalid(`The CSV file has ${columns.length} columns; at most ${maxColumns} are allowed.`, [{ field: `line ${line}`, message: `more than ${maxColumns} columns` }]);
    }
    const details: ErrorDetail[] = [];
    const seen = new Map<string, number>();
    columns.forEach((c, i) => {
      if (!c) details.push({ field: `line ${line}, column ${i + 1}`, message: 'the column has no name: name it or delete the column' });
      else if (seen.has(c)) details.push({ field: `line ${line}, column ${i + 1}`, message: `"${c}" is also the name of column ${seen.get(c)! + 1}: column names must differ` });
      else seen.set(c, i);
    });
    if (details.length) throw problems(details);
    head = { columns, line };
    typeRowNext = true;
  }

  /** The head is complete: tell the caller. */
  function headDone() {
    typeRowNext = false;
    const { columns, types } = head!;
    options.onHead?.(types ? { columns, types } : { columns });
  }

  function record(cells: string[], line: number) {
    if (!head) return header(cells, line);
    const width = head.columns.length;
    if (typeRowNext) {
      if (cells.length === width && cells.every((c) => TYPE_NAMES.has(c.trim().toLowerCase()))) {
        head.types = cells.map((c) => c.trim().toLowerCase());
        return headDone();
      }
      headDone();
    }
    if (rows >= maxRows) throw tooManyRows(maxRows, line);
    if (cells.length !== width) {
      widthProblems.push({ field: `line ${line}`, message: `has ${cells.length} ${cells.length === 1 ? 'cell' : 'cells'}, but the header has ${width} columns` });
      return;
    }
    rows++;
    options.onRow?.(cells, line);
    if (rows >= limit) {
      truncated = true;
      throw ENOUGH;
    }
  }

  let lastEnd = 0; // the byte offset where the previous record ended (and this one starts)
  const csvOptions = {
    bom: true,
    delimiter: sniffDelimiter(bytes),
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count: true, // counted here, to name the line the row starts on
    relax_quotes: true, // a quote inside an unquoted cell (`5" tube`) is text
    skip_empty_lines: false, // kept so every line is counted; dropped here
    trim: true,
    on_record: (cells: string[], ctx: { bytes: number }) => {
      const line = lineAt(lastEnd);
      lastEnd = ctx.bytes;
      if (!cells.every((c) => c === '')) record(cells, line); // else a blank line or a row of empty cells
      return null; // nothing is collected by csv-parse itself
    },
  };

  /** A csv-parse error as a LabError naming the line the broken row starts on; null when `limit` stopped it. */
  function failure(e: unknown): unknown {
    const cause = (e as { cause?: unknown } | null)?.cause;
    if (e === ENOUGH || cause === ENOUGH) return null;
    // by its code (CSV_QUOTE_NOT_CLOSED, INVALID_OPENING_QUOTE, …): the stream and the sync parser each have
    // their own CsvError class, and nothing else thrown inside the parser has a code
    const code = (e as { code?: unknown } | null)?.code;
    if (e instanceof LabError || !(e instanceof Error) || typeof code !== 'string') return e;
    const line = lineAt(lastEnd);
    const message =
      code === 'CSV_QUOTE_NOT_CLOSED'
        ? 'a quoted cell is never closed (a " is missing)'
        : code === 'CSV_INVALID_CLOSING_QUOTE'
          ? 'a quoted cell has text after its closing quote (write a " inside quotes as "")'
          : (e as Error).message;
    return invalid(`The CSV file is malformed at line ${line}: ${sentence(message)}`, [{ field: `line ${line}`, message }]);
  }

  /** The end of the reading: the head and the count, or the rows of the wrong width, each by its line. */
  function result(): CsvScan {
    if (!head) throw invalid('The CSV file is empty: its first line must name the columns.', [{ field: 'line 1', message: 'no header row' }]);
    if (typeRowNext) headDone();
    if (widthProblems.length) throw problems(widthProblems);
    const { columns, types } = head;
    return types ? { columns, types, rows, truncated } : { columns, rows, truncated };
  }

  return { bytes, csvOptions, failure, result };
}

/** Read a CSV record by record (small inputs: it holds the event loop while it reads). */
export function scanCsv(input: Buffer | string, options: ScanOptions = {}): CsvScan {
  const r = reader(utf8(input), options);
  try {
    parseSync(r.bytes, r.csvOptions);
  } catch (e) {
    const f = r.failure(e);
    if (f) throw f;
  }
  return r.result();
}

/** Bytes fed to the parser between two turns of the event loop. */
const CHUNK = 64 * 1024;

/**
 * Read a CSV record by record, in chunks, letting the event loop run between them (a 10 MB upload takes a
 * second or two of parsing; a run in progress and every other user must not stall meanwhile). Same result
 * and errors as `scanCsv`.
 */
export async function scanCsvAsync(input: Buffer | string, options: ScanOptions = {}): Promise<CsvScan> {
  const r = reader(utf8(input), options);
  const parser = parseStream(r.csvOptions);
  let failed: unknown = null;
  const done = new Promise<void>((resolve) => {
    parser.once('error', (e) => {
      failed = e;
      resolve();
    });
    parser.once('finish', () => resolve());
  });
  parser.resume(); // nothing is pushed (on_record returns null), but keep the readable side flowing
  for (let i = 0; i < r.bytes.length && !failed; i += CHUNK) {
    parser.write(r.bytes.subarray(i, i + CHUNK));
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (!failed) parser.end();
  await done;
  if (failed) {
    const f = r.failure(failed);
    if (f) throw f;
  }
  return r.result();
}

/** A scan that also keeps the rows, as objects by column name: for files known to be small enough to hold. */
function collecting(options: ParseOptions): { options: ScanOptions; table: (scan: CsvScan) => CsvTable } {
  const cells: string[][] = [];
  const lines: number[] = [];
  return {
    options: {
      ...options,
      onRow: (c, line) => {
        cells.push(c);
        lines.push(line);
      },
    },
    table: ({ columns, types }) => {
      // fromEntries defines own properties, so a column named __proto__ stays a plain key
      const rows = cells.map((c) => Object.fromEntries(columns.map((name, i) => [name, c[i]!])));
      return types ? { columns, rows, types, lines } : { columns, rows, lines };
    },
  };
}

/** Parse a whole CSV into a table (small inputs: it holds the event loop). Throws LabError invalid_input naming the line. */
export function parseCsv(input: Buffer | string, options: ParseOptions = {}): CsvTable {
  const c = collecting(options);
  return c.table(scanCsv(input, c.options));
}

/** Parse a whole CSV into a table, in chunks (see `scanCsvAsync`). Same result and errors as `parseCsv`. */
export async function parseCsvAsync(input: Buffer | string, options: ParseOptions = {}): Promise<CsvTable> {
  const c = collecting(options);
  return c.table(await scanCsvAsync(input, c.options));
}

// ---------------------------------------------------------------------------------------------------------
// Writing

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const RISKY = /^[=+\-@\t\r]/;

/** A cell as text: numbers and booleans as JS writes them, dates as ISO 8601, objects as JSON, null as ''. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return neutralise(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return value.toISOString();
  return neutralise(JSON.stringify(value) ?? '');
}

/** `'`-prefix a text that a spreadsheet would run as a formula; plain numbers stay as they are. */
export function neutralise(text: string): string {
  return RISKY.test(text) && !NUMBER.test(text) ? `'${text}` : text;
}

/** Quote a cell when it holds a separator, a quote, a line break, or spaces at either end. */
const quote = (s: string) => (/[",\r\n]|^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** One CSV line (with its `\r\n`), every cell through `cellText`. */
export function csvLine(values: readonly unknown[]): string {
  return `${values.map((v) => quote(cellText(v))).join(',')}\r\n`;
}

/** A whole CSV text: the header, then one line per row (cells by column name; missing ones are empty). */
export function toCsv(rows: readonly Record<string, unknown>[], columns: readonly string[], header: readonly string[] = columns): string {
  let out = csvLine(header);
  for (const row of rows) out += csvLine(columns.map((c) => row[c]));
  return out;
}

/**
 * A CSV as a stream of text chunks (one per batch), for exports too large to hold: the header, then the
 * batches' rows. Use with `Readable.from(...)`, or `writeCsv`.
 */
export async function* csvChunks(columns: readonly string[], batches: AsyncIterable<readonly Record<string, unknown>[]> | Iterable<readonly Record<string, unknown>[]>): AsyncGenerator<string> {
  yield csvLine(columns);
  for await (const batch of batches) {
    let chunk = '';
    for (const row of batch) chunk += csvLine(columns.map((c) => row[c]));
    if (chunk) yield chunk;
  }
}

/**
 * Stream a CSV to `out` (an HTTP response, a file) with back-pressure: memory stays flat whatever the size.
 * Resolves when written; rejects (and stops reading batches) when `out` fails or is closed early.
 */
export async function writeCsv(out: Writable, columns: readonly string[], batches: AsyncIterable<readonly Record<string, unknown>[]> | Iterable<readonly Record<string, unknown>[]>): Promise<void> {
  await pipeline(Readable.from(csvChunks(columns, batches)), out);
}
