/**
 * Files people give to `file` input steps (issue 31): kept in the data folder under `inputs/`, under a
 * generated name (the original name is display data only, DESIGN.md §6); the run saves an InputFile that
 * describes it. A file that the step then refuses (too big, not of an accepted type) is deleted again.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { InputFile } from '../workflow/input.js';

export const INPUT_FILES_DIR = 'inputs';

/** Store `data` and describe it; `discard` removes it (the value was refused). */
export async function keepInputFile(dataDir: string, data: Buffer, originalName: string, type: string): Promise<{ file: InputFile; discard(): Promise<void> }> {
  const dir = join(dataDir, INPUT_FILES_DIR);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const ext = extname(originalName).toLowerCase();
  const filename = `${randomBytes(12).toString('hex')}${/^\.[a-z0-9]{1,8}$/.test(ext) ? ext : ''}`;
  const path = join(dir, filename);
  await writeFile(path, data, { mode: 0o600 });
  return { file: { filename, original_name: originalName.slice(0, 200), bytes: data.length, type }, discard: () => rm(path, { force: true }) };
}
