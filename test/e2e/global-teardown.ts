/** After the end-to-end tests: remove the installed copy (test/e2e/global-setup.ts). */
import { rmSync } from 'node:fs';

export default function removeCopy(): void {
  const dir = process.env.LABDECK_E2E_INSTALLED;
  if (dir && !process.env.LABDECK_E2E_KEEP) rmSync(dir, { recursive: true, force: true });
}
