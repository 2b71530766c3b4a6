/**
 * Uploaded workflow files (DESIGN.md §6): config CSVs (one parameter set per row) and history CSVs
 * (parameter columns then output columns). Each is checked, then kept under a generated name in
 * `<dataDir>/files/config/` or `<dataDir>/files/history/` and recorded in the store. The name the browser
 * sent is display data only; a file is found again only by its generated name, and only inside its folder.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { LabError, type ErrorDetail } from '../errors.js';
import type { FileKind, FileRow, Store } from '../store/types.js';
import { checkConfigRows, coerceValue } from '../workflow/config.js';
import type { Workflow } from '../workflow/model.js';
import { parseCsvAsync, type CsvTable, type ParseOptions } from './csv.js';

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

/** `line 4` for row i of a table: the line it starts on in the file. */
const lineLabel = (table: CsvTable) => (i: number) => `line ${table.lines[i] ?? i + 2}`;

/**
 * Check a config table against a workflow's parameters; returns the parameter sets, coerced. Errors name
 * the line and column (`line 4, column volume`).
 */
export function configRowsOf(workflow: Pick<Workflow, 'name' | 'parameters'>, table: CsvTable): Record<string, unknown>[] {
  // A column that is not a parameter is a problem of the header (line 1), not of the first row.
  const known = new Set(workflow.parameters.map((p) => p.name));
  const unknown = table.columns.filter((c) => !known.has(c));
  if (unknown.length) {
    const names = workflow.parameters.map((p) => p.name).join(', ');
    const details = unknown.map((c) => ({
      field: `line 1, column ${c}`,
      message: `"${c}" is not a parameter of workflow "${workflow.name}"; ${names ? `its parameters are ${names}` : 'it has no parameters'}`,
    }));
    throw new LabError('invalid_input', `The config for workflow "${workflow.name}" is not valid: ${details[0]!.field}: ${details[0]!.message}`, details);
  }
  return checkConfigRows(workflow, table.rows, { label: lineLabel(table) });
}

/**
 * Check a history table against a workflow: every column is a parameter or an output, and a parameter's
 * cells hold values of its type (an empty cell is allowed: an iteration that did not get that far).
 */
export function checkHistory(workflow: WorkflowShape, table: CsvTable): void {
  const params = new Map(workflow.parameters.map((p) => [p.name, p]));
  const outputs = new Set(workflow.outputs);
  const details: ErrorDetail[] = [];
  for (const c of table.columns) {
    if (!params.has(c) && !outputs.has(c)) {
      const known = [...params.keys(), ...outputs];
      details.push({
        field: `line 1, column ${c}`,
        message: `"${c}" is neither a parameter nor an output of workflow "${workflow.name}"${known.length ? ` (those are ${known.join(', ')})` : ''}`,
      });
    }
  }
  const label = lineLabel(table);
  table.rows.forEach((row, i) => {
    for (const c of table.columns) {
      const p = params.get(c);
      if (!p) continue;
      const r = coerceValue(p.type, row[c]);
      if (r.ok === false) details.push({ field: `${label(i)}, column ${c}`, message: `${r.message} (the parameter is ${p.type === 'integer' ? 'an integer' : `a ${p.type}`})` });
    }
  });
  if (details.length) {
    const shown = details.slice(0, 3).map((d) => `${d.field}: ${d.message}`).join('; ');
    const more = details.length > 3 ? `; and ${details.length - 3} more` : '';
    throw new LabError('invalid_input', `The history file does not fit workflow "${workflow.name}": ${shown}${more}`, details.slice(0, 100));
  }
}

/** The browser's file name, for display only: the last path part, no control characters, at most 255 characters. */
function displayName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
  return clean || 'upload.csv';
}

const notFound = (name: string) =>
  new LabError('not_found', `No uploaded file named ${JSON.stringify(name.slice(0, 100))}.`, [{ field: 'filename', message: 'unknown file' }]);

export class FileStore {
  readonly limitBytes: number;
  private readonly root: string;

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
  async save(kind: FileKind, data: Buffer, originalName: string, meta: SaveMeta = {}): Promise<StoredFile> {
    if (data.length > this.limitBytes) {
      throw new LabError('payload_too_large', `The file is ${data.length} bytes; the upload limit is ${this.limitBytes} bytes.`, [
        { field: 'file', message: `over ${this.limitBytes} bytes` },
      ]);
    }
    const table = await parseCsvAsync(data, this.options);
    if (table.rows.length === 0) {
      throw new LabError('invalid_input', 'The CSV file has a header but no rows: add one row per iteration.', [{ field: 'line 2', message: 'no data rows' }]);
    }
    const workflow = meta.workflow ?? null;
    if (workflow) {
      if (kind === 'config') configRowsOf(workflow, table);
      else checkHistory(workflow, table);
    }

    const dir = this.folder(kind);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const storedName = `${PREFIX[kind]}-${randomBytes(8).toString('hex')}.csv`;
    const path = join(dir, storedName);
    await writeFile(`${path}.part`, data, { flag: 'wx', mode: 0o600 });
    try {
      await rename(`${path}.part`, path);
      const file = await this.store.files.add({
        kind,
        storedName,
        originalName: displayName(originalName),
        workflow: workflow?.name ?? null,
        rows: table.rows.length,
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

  /** A recorded file, parsed. */
  async read(name: string, kind?: FileKind): Promise<StoredFile> {
    const { file, path } = await this.open(name, kind);
    let data: Buffer;
    try {
      data = await readFile(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new LabError('not_found', `The file ${name} is recorded but no longer on disk.`, [{ field: 'filename', message: 'missing on disk' }]);
      }
      throw e;
    }
    return { file, table: await parseCsvAsync(data, this.options) };
  }

  /** The parameter sets of an uploaded config file, checked against a workflow (errors name line and column). */
  async configRows(name: string, workflow: Pick<Workflow, 'name' | 'parameters'>): Promise<Record<string, unknown>[]> {
    const { table } = await this.read(name, 'config');
    return configRowsOf(workflow, table);
  }

  /** Uploaded files of a kind, newest first; with a workflow, only those uploaded for it. */
  list(kind: FileKind, workflow?: string): Promise<FileRow[]> {
    return this.store.files.list(kind, workflow);
  }
}
