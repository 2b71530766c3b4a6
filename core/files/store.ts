/**
 * Uploaded workflow files (DESIGN.md §6): config CSVs (one parameter set per row) and history CSVs
 * (parameter columns then output columns). Each is checked, then kept under a generated name in
 * `<dataDir>/files/config/` or `<dataDir>/files/history/` and recorded in the store. The name the browser
 * sent is display data only; a file is found again only by its generated name, and only inside its folder.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { privateDir } from '../paths.js';
import { LabError, storageFailure, type ErrorDetail } from '../errors.js';
import type { FileKind, FileRow, Store } from '../store/types.js';
import { checkConfigRows, coerceValue } from '../workflow/config.js';
import { outputName, type Workflow } from '../workflow/model.js';
import { BOOKKEEPING_NAMES } from './rundata.js';
import { csvLine, parseCsvAsync, scanCsvAsync, type CsvHead, type CsvScan, type CsvTable, type ParseOptions, type ScanOptions } from './csv.js';

export const DEFAULT_UPLOAD_LIMIT = 10 * 1024 * 1024;

const FOLDER: Record<FileKind, string> = { config: 'config', history: 'history' };
const PREFIX: Record<FileKind, string> = { config: 'cfg', history: 'hist' };
/** The only names `open` resolves: what `save` generates. */
const STORED_NAME = /^(cfg|hist)-[0-9a-f]{16}\.csv$/;
const KIND_OF: Record<string, FileKind> = { cfg: 'config', hist: 'history' };

type WorkflowShape = Pick<Workflow, 'name' | 'parameters' | 'outputs'>;

export interface SaveMeta {
  /** Check the file against this workflow (and record it as uploaded for it). */
  workflow?: WorkflowShape | null;
  userId?: number | null;
}

export interface StoredFile {
  file: FileRow;
  table: CsvTable;
}

/** An upload as saved: its record, and its head and row count as read. */
export interface SavedFile {
  file: FileRow;
  table: CsvScan;
}

/** The problems listed in an error's details; the rest are counted (a bad 10 MB file has millions). */
const MAX_DETAILS = 100;

/** A check of an upload against a workflow, fed while the file is read: nothing but its findings is kept. */
interface Check {
  onHead(head: CsvHead): void;
  onRow(cells: string[], line: number): void;
  /** After the last row: throws LabError invalid_input listing what is wrong. */
  end(): void;
}

/** Columns of a config that are not parameters of the workflow: a problem of the header (line 1). */
function refuseUnknownColumns(workflow: Pick<Workflow, 'name' | 'parameters'>, columns: readonly string[]): void {
  const known = new Set(workflow.parameters.map((p) => p.name));
  const unknown = columns.filter((c) => !known.has(c));
  if (!unknown.length) return;
  const names = workflow.parameters.map((p) => p.name).join(', ');
  const details = unknown.map((c) => ({
    field: `line 1, column ${c}`,
    message: `"${c}" is not a parameter of workflow "${workflow.name}"; ${names ? `its parameters are ${names}` : 'it has no parameters'}`,
  }));
  throw new LabError('invalid_input', `The config for workflow "${workflow.name}" is not valid: ${details[0]!.field}: ${details[0]!.message}`, details);
}

/**
 * Check a config table against a workflow's parameters; returns the parameter sets, coerced. Errors name
 * the line and column (`line 4, column volume`).
 */
export function configRowsOf(workflow: Pick<Workflow, 'name' | 'parameters'>, table: CsvTable): Record<string, unknown>[] {
  refuseUnknownColumns(workflow, table.columns);
  return checkConfigRows(workflow, table.rows, { label: (i) => `line ${table.lines[i] ?? i + 2}` });
}

/**
 * The config check: the header first (a column that is not a parameter stops the reading there), then the
 * rows, kept as parameter sets (no wider than the workflow's parameters) and checked at the end.
 */
function configCheck(workflow: Pick<Workflow, 'name' | 'parameters'>): Check & { sets: () => Record<string, unknown>[] } {
  let columns: string[] = [];
  const rows: Record<string, string>[] = [];
  const lines: number[] = [];
  let sets: Record<string, unknown>[] = [];
  return {
    onHead: (head) => {
      refuseUnknownColumns(workflow, head.columns);
      columns = head.columns;
    },
    onRow: (cells, line) => {
      rows.push(Object.fromEntries(columns.map((c, i) => [c, cells[i]!])));
      lines.push(line);
    },
    end: () => {
      sets = checkConfigRows(workflow, rows, { label: (i) => `line ${lines[i]}` });
    },
    sets: () => sets,
  };
}

/**
 * The history check: every column is a parameter or an output (or a run data CSV's iteration and status), and a parameter's cells hold values of its
 * type (an empty cell is allowed: an iteration that did not get that far).
 */
function historyCheck(workflow: WorkflowShape): Check {
  const params = new Map(workflow.parameters.map((p) => [p.name, p]));
  const outputs = new Set(workflow.outputs.map(outputName));
  // a field of an output that is a dict (`cell.current_ma` of `cell`): the run data CSV writes one column per field
  const isField = (c: string) => [...outputs].some((o) => c.startsWith(`${o}.`));
  const details: ErrorDetail[] = [];
  let count = 0;
  const problem = (d: ErrorDetail) => {
    if (count++ < MAX_DETAILS) details.push(d);
  };
  let columns: string[] = [];
  return {
    onHead: (head) => {
      columns = head.columns;
      for (const c of columns) {
        if (params.has(c) || outputs.has(c) || isField(c) || BOOKKEEPING_NAMES.has(c)) continue;
        const known = [...params.keys(), ...outputs];
        problem({
          field: `line 1, column ${c}`,
          message: `"${c}" is neither a parameter nor an output of workflow "${workflow.name}"${known.length ? ` (those are ${known.join(', ')})` : ''}`,
        });
      }
    },
    onRow: (cells, line) => {
      columns.forEach((c, i) => {
        const p = params.get(c);
        if (!p) return;
        const r = coerceValue(p.type, cells[i]);
        if (r.ok === false) problem({ field: `line ${line}, column ${c}`, message: `${r.message} (the parameter is ${p.type === 'integer' ? 'an integer' : `a ${p.type}`})` });
      });
    },
    end: () => {
      if (!count) return;
      const shown = details
        .slice(0, 3)
        .map((d) => `${d.field}: ${d.message}`)
        .join('; ');
      const more = count > 3 ? `; and ${count - 3} more` : '';
      const rest = count > MAX_DETAILS ? [{ message: `and ${count - MAX_DETAILS} more problems` }] : [];
      throw new LabError('invalid_input', `The history file does not fit workflow "${workflow.name}": ${shown}${more}`, [...details, ...rest]);
    },
  };
}

/** The browser's file name, for display only: the last path part, no control characters, at most 255 characters. */
function displayName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const clean = base
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, 255);
  return clean || 'upload.csv';
}

const notFound = (name: string) => new LabError('not_found', `No uploaded file named ${JSON.stringify(name.slice(0, 100))}.`, [{ field: 'filename', message: 'unknown file' }]);

/** Files read at once (an upload's check, a preview, a download): each holds its bytes and the parser's state. */
const MAX_READERS = 2;
/** Reads that may wait for a turn; beyond them a read is refused (503, try again). */
const MAX_WAITING = 8;

export class FileStore {
  readonly limitBytes: number;
  private readonly root: string;
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly store: Store,
    dataDir: string,
    private readonly options: { limitBytes?: number } & ParseOptions = {},
  ) {
    this.limitBytes = options.limitBytes ?? DEFAULT_UPLOAD_LIMIT;
    this.root = resolve(dataDir, 'files');
  }

  /** The folder a kind of file lives in. */
  folder(kind: FileKind): string {
    return join(this.root, FOLDER[kind]);
  }

  /**
   * Check and keep an upload: parse it (LabError invalid_input naming the line), check it against the
   * workflow when one is given, write it under a generated name (atomically: `.part`, then rename) and
   * record it. The bytes are kept as uploaded; downloads are written out again, neutralised.
   */
  async save(kind: FileKind, data: Buffer, originalName: string, meta: SaveMeta = {}): Promise<SavedFile> {
    if (data.length > this.limitBytes) {
      throw new LabError('payload_too_large', `The file is ${data.length} bytes; the upload limit is ${this.limitBytes} bytes.`, [{ field: 'file', message: `over ${this.limitBytes} bytes` }]);
    }
    const workflow = meta.workflow ?? null;
    const check = workflow ? (kind === 'config' ? configCheck(workflow) : historyCheck(workflow)) : null;
    const table = await this.reading(() => scanCsvAsync(data, { ...this.options, ...(check ? { onHead: check.onHead, onRow: check.onRow } : {}) }));
    if (table.rows === 0) {
      throw new LabError('invalid_input', 'The CSV file has a header but no rows: add one row per iteration.', [{ field: 'line 2', message: 'no data rows' }]);
    }
    check?.end();

    const dir = this.folder(kind);
    const storedName = `${PREFIX[kind]}-${randomBytes(8).toString('hex')}.csv`;
    const path = join(dir, storedName);
    try {
      await privateDir(dir);
      await writeFile(`${path}.part`, data, { flag: 'wx', mode: 0o600 });
      await rename(`${path}.part`, path);
    } catch (e) {
      await unlink(`${path}.part`).catch(() => undefined);
      throw storageFailure(e, dir, 'The file');
    }
    try {
      const file = await this.store.files.add({
        kind,
        storedName,
        originalName: displayName(originalName),
        workflow: workflow?.name ?? null,
        rows: table.rows,
        columns: table.columns,
        size: data.length,
        createdBy: meta.userId ?? null,
      });
      return { file, table };
    } catch (e) {
      await unlink(`${path}.part`).catch(() => undefined);
      await unlink(path).catch(() => undefined);
      throw e;
    }
  }

  /**
   * A recorded file by its generated name, and where it is on disk. Anything else — a path, `..`, an
   * encoded name, a name never generated — is LabError not_found; the name is never joined to a path
   * before it is known to be one we made.
   */
  async open(name: string, kind?: FileKind): Promise<{ file: FileRow; path: string }> {
    const m = STORED_NAME.exec(name);
    if (!m) throw notFound(name);
    const fileKind = KIND_OF[m[1]!]!;
    if (kind && kind !== fileKind) throw notFound(name);
    const file = await this.store.files.get(name);
    if (!file || file.kind !== fileKind) throw notFound(name);
    const dir = this.folder(fileKind);
    const path = resolve(dir, file.storedName);
    if (!path.startsWith(dir + sep)) throw notFound(name); // cannot happen with the pattern above; kept as a guard
    return { file, path };
  }

  /**
   * Run a read of a CSV when a turn is free: at most MAX_READERS at once (memory and CPU stay bounded however
   * many users upload big files), MAX_WAITING in line, the rest refused with 503 and a time to retry.
   */
  private async reading<T>(read: () => Promise<T>): Promise<T> {
    if (this.active < MAX_READERS) this.active++;
    else if (this.waiting.length < MAX_WAITING) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else {
      throw new LabError('unavailable', `${MAX_READERS + MAX_WAITING} CSV files are being read already: try again in a few seconds.`, [{ field: 'file', message: 'busy' }], { retry_after: 2 });
    }
    try {
      return await read();
    } finally {
      const next = this.waiting.shift();
      if (next)
        next(); // the turn passes on
      else this.active--;
    }
  }

  /** A recorded file's bytes (LabError not_found when the record outlived the file). */
  private async bytes(name: string, kind?: FileKind): Promise<{ file: FileRow; data: Buffer }> {
    const { file, path } = await this.open(name, kind);
    try {
      return { file, data: await readFile(path) };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new LabError('not_found', `The file ${name} is recorded but no longer on disk.`, [{ field: 'filename', message: 'missing on disk' }]);
      }
      throw e;
    }
  }

  /** Read a recorded file row by row (see `scanCsvAsync`): nothing is kept but what `options.onRow` keeps. */
  async scan(name: string, kind: FileKind | undefined, options: Omit<ScanOptions, keyof ParseOptions>): Promise<{ file: FileRow; table: CsvScan }> {
    return this.reading(async () => {
      const { file, data } = await this.bytes(name, kind);
      return { file, table: await scanCsvAsync(data, { ...this.options, ...options }) };
    });
  }

  /** A recorded file, parsed whole (for files known to be small; the routes use `preview` and `scan`). */
  async read(name: string, kind?: FileKind): Promise<StoredFile> {
    return this.reading(async () => {
      const { file, data } = await this.bytes(name, kind);
      return { file, table: await parseCsvAsync(data, this.options) };
    });
  }

  /** The first `limit` rows of a recorded file: only they are read, whatever the size of the file. */
  async preview(name: string, limit: number): Promise<{ file: FileRow; head: CsvHead; rows: Record<string, string>[] }> {
    const rows: string[][] = [];
    const { file, table } = await this.scan(name, undefined, { limit, onRow: (cells) => rows.push(cells) });
    const { columns } = table;
    const head = table.types ? { columns, types: table.types } : { columns };
    return { file, head, rows: rows.map((cells) => Object.fromEntries(columns.map((c, i) => [c, cells[i]!]))) };
  }

  /** A recorded file written out again as CSV text (type row dropped, formulas neutralised), read row by row. */
  async csvText(name: string): Promise<{ file: FileRow; text: string }> {
    const parts: string[] = [];
    const { file } = await this.scan(name, undefined, { onHead: (h) => parts.push(csvLine(h.columns)), onRow: (cells) => parts.push(csvLine(cells)) });
    return { file, text: parts.join('') };
  }

  /** The parameter sets of an uploaded config file, checked against a workflow (errors name line and column). */
  async configRows(name: string, workflow: Pick<Workflow, 'name' | 'parameters'>): Promise<Record<string, unknown>[]> {
    const check = configCheck(workflow);
    await this.scan(name, 'config', { onHead: check.onHead, onRow: check.onRow });
    check.end();
    return check.sets();
  }

  /** Uploaded files of a kind, newest first; with a workflow, only those uploaded for it. */
  list(kind: FileKind, workflow?: string): Promise<FileRow[]> {
    return this.store.files.list(kind, workflow);
  }
}
