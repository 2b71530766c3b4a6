/**
 * What `npm run build` leaves out of what `lab serve` loads, and that nothing is lost with it (issue 16,
 * scripts/build.mjs): zod's translations load when first used, React's development builds and its streaming
 * renderer are not in the `lab` bundle.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as zod from 'zod';
import { installedFile } from './installed.js';

type Zod = typeof zod;
const built = (): Promise<Zod> => import(pathToFileURL(installedFile('dist/vendor/zod.js')).href) as Promise<Zod>;

describe('the built zod (dist/vendor/zod.js)', () => {
  afterEach(async () => (await built()).config((await built()).locales.en()));

  it('has every translation zod has, each loaded when first called', async () => {
    const z = await built();
    expect(Object.keys(z.locales).sort()).toEqual(Object.keys(zod.locales).sort());
    expect(z.core.locales).toBe(z.locales);
    const text = readFileSync(installedFile('dist/vendor/zod.js'), 'utf8');
    expect(text).not.toContain('Ungültige Eingabe'); // German messages are not in the file…
    z.config(z.locales.de()); // …yet they work
    expect(z.string().safeParse(5).error!.issues[0]!.message).toBe('Ungültige Eingabe: erwartet string, erhalten Zahl');
    z.config(z.locales.frCA());
    expect(z.number().safeParse('x').error!.issues[0]!.message).toMatch(/^Entrée invalide/);
    z.config(z.locales.en());
    expect(z.string().safeParse(5).error!.issues[0]!.message).toBe('Invalid input: expected string, received number');
  });
});

describe('the lab bundle (dist/lab/)', () => {
  const bundle = readdirSync(installedFile('dist/lab'))
    .filter((f) => f.endsWith('.js'))
    .map((f) => readFileSync(join(installedFile('dist/lab'), f), 'utf8'));

  it("carries React's production builds only, and of react-dom/server only the page renderer", () => {
    const all = bundle.join('\n');
    expect(all).toContain('renderToStaticMarkup');
    expect(all).not.toMatch(/react(-dom-server(-legacy)?\.node|-jsx-runtime|)\.development/);
    expect(all).not.toMatch(/exports\.renderToPipeableStream\s*=/); // the streaming renderer's own export
  });
});
