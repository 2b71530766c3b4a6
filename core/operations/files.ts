/**
 * Operations on uploaded files (DESIGN.md §6, §15): an upload (checked against its workflow, stored under a
 * generated name, audited `file.upload.<kind>`), a preview, a file's text, and the stored files.
 */
import { LabError } from '../errors.js';
import type { SaveMeta } from '../files/store.js';
import type { FileKind, FileRow } from '../store/types.js';
import { Workflow } from '../workflow/model.js';
import type { Caller } from './caller.js';
import { audit, type Lab } from './lab.js';

export function fileOperations(lab: Lab) {
  const { store, files } = lab;
  return {
    /** A stored file's row by its stored name, or null. */
    async find(name: string): Promise<FileRow | null> {
      return store.files.get(name);
    },
    /** The stored files of a kind (config or history), for `workflow` when named. */
    list(kind: FileKind, workflow?: string): Promise<FileRow[]> {
      return files.list(kind, workflow);
    },
    /** The latest version of a saved workflow, or 404 naming `workflow`. */
    async workflow(name: string): Promise<Workflow> {
      const row = await store.workflows.get(name);
      if (!row) throw new LabError('not_found', `No workflow named ${JSON.stringify(name)}.`, [{ field: 'workflow', message: 'unknown workflow' }]);
      return Workflow.parse(row.definition);
    },

    /** Store an uploaded CSV as the caller: checked (against `workflow` when given), audited. */
    async upload(caller: Caller, kind: FileKind, data: Buffer, originalName: string, workflow: SaveMeta['workflow'] = null) {
      const saved = await files.save(kind, data, originalName, { workflow, userId: caller.userId });
      const { file } = saved;
      await audit(lab, caller, `file.upload.${kind}`, { filename: file.storedName, original_name: file.originalName, workflow: file.workflow });
      return saved;
    },

    /** The head and first rows of a stored CSV. */
    preview(name: string, rows: number) {
      return files.preview(name, rows);
    },

    /** A stored CSV's text. */
    csvText(name: string) {
      return files.csvText(name);
    },

    /** The largest upload, in bytes. */
    get limitBytes(): number {
      return files.limitBytes;
    },
  };
}

export type FileOperations = ReturnType<typeof fileOperations>;
