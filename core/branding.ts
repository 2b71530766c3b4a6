/** The lab's logo and display mode (light/dark): a file in the data directory plus a setting. */
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { privateDir } from './paths.js';
import { LabError, storageFailure } from './errors.js';
import type { Store } from './store/types.js';

export type Mode = 'light' | 'dark';
export interface Branding {
  mode: Mode;
  logo: { file: string; type: string } | null;
}

/** Image types accepted as a logo, recognised by their first bytes (never by the name the browser sent). */
const SIGNATURES: { type: string; ext: string; test: (b: Buffer) => boolean }[] = [
  { type: 'image/png', ext: 'png', test: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { type: 'image/jpeg', ext: 'jpg', test: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { type: 'image/gif', ext: 'gif', test: (b) => b.subarray(0, 6).toString('latin1') === 'GIF89a' || b.subarray(0, 6).toString('latin1') === 'GIF87a' },
  { type: 'image/webp', ext: 'webp', test: (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP' },
];

export const LOGO_MAX_BYTES = 1024 * 1024;

export class BrandingService {
  private cache: Branding | null = null;
  constructor(
    private readonly store: Store,
    private readonly dir: string,
  ) {}

  async get(): Promise<Branding> {
    this.cache ??= (await this.store.settings.get<Branding>('branding')) ?? { mode: 'light', logo: null };
    return this.cache;
  }

  /** Store a new logo (optional) and mode. The file is kept under a generated name in the data directory. */
  async update(mode: unknown, logo?: Buffer): Promise<Branding> {
    if (mode !== undefined && mode !== '' && mode !== 'light' && mode !== 'dark') {
      throw new LabError('invalid_input', `mode must be "light" or "dark", got ${JSON.stringify(mode)}`, [{ field: 'mode', message: 'must be light or dark' }]);
    }
    const current = await this.get();
    const next: Branding = { mode: (mode as Mode) || current.mode, logo: current.logo };
    if (logo && logo.length > 0) {
      if (logo.length > LOGO_MAX_BYTES) throw new LabError('payload_too_large', 'The logo must be at most 1 MB.');
      const sig = SIGNATURES.find((s) => s.test(logo));
      if (!sig) {
        throw new LabError('invalid_input', 'The logo must be a PNG, JPEG, GIF or WebP image.', [{ field: 'logo', message: 'not a PNG, JPEG, GIF or WebP image' }]);
      }
      const file = `logo-${randomBytes(8).toString('hex')}.${sig.ext}`;
      try {
        await privateDir(this.dir);
        await writeFile(join(this.dir, `${file}.part`), logo, { mode: 0o600 });
        await rename(join(this.dir, `${file}.part`), join(this.dir, file));
      } catch (e) {
        await unlink(join(this.dir, `${file}.part`)).catch(() => undefined);
        throw storageFailure(e, this.dir, 'The logo');
      }
      if (current.logo) await unlink(join(this.dir, current.logo.file)).catch(() => undefined);
      next.logo = { file, type: sig.type };
    }
    await this.store.settings.set('branding', next);
    this.cache = next;
    return next;
  }

  async logo(): Promise<{ data: Buffer; type: string } | null> {
    const { logo } = await this.get();
    if (!logo) return null;
    return { data: await readFile(join(this.dir, logo.file)), type: logo.type };
  }
}
