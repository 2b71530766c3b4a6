/**
 * Operations on uploaded files (DESIGN.md §6, §15): what a door reads of them. Uploads themselves still go
 * through server/routes/files.tsx on core/files (see docs/architecture.md, "Doors still to move").
 */
import type { FileKind, FileRow } from '../store/types.js';
import type { Lab } from './lab.js';

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
    /** The largest upload, in bytes. */
    get limitBytes(): number {
      return files.limitBytes;
    },
  };
}

export type FileOperations = ReturnType<typeof fileOperations>;
