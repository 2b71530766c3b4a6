/**
 * The labdeck the end-to-end tests run: a copy of the committed files, built as `npm install` builds them
 * (test/e2e/global-setup.ts), never the sources of this folder nor a dist/ left here by an earlier build.
 */
import { join } from 'node:path';

const root = process.env.LABDECK_E2E_INSTALLED;
if (!root) throw new Error('the end-to-end tests run through their global setup (npm run test:e2e): LABDECK_E2E_INSTALLED is not set');

/** The installed copy's folder. */
export const INSTALLED: string = root;
/** Its `lab` command, as the README's users run it. */
export const LAB_BIN = join(root, 'bin', 'lab');
/** A file of the installed copy, e.g. `fixture('test/fixtures/runner/deck.ts')`. */
export const installedFile = (path: string): string => join(root, path);
