/**
 * The pages' Content Security Policy is `style-src 'self'`: a browser blocks every inline `style` attribute
 * (and says so in its console; the every-form browser test fails on it). Pages style through classes in
 * server/static/app.css, so no view or route writes a `style` attribute, and a new one is caught here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../core/paths.js';

it('no page writes an inline style attribute (CSP style-src self blocks it)', () => {
  const files = readdirSync(join(projectRoot, 'server'), { recursive: true, encoding: 'utf8' }).filter((f) => /\.tsx?$/.test(f) && !f.startsWith('static'));
  const found = files.flatMap((f) =>
    readFileSync(join(projectRoot, 'server', f), 'utf8')
      .split('\n')
      .flatMap((line, i) => (/\bstyle=\{|\sstyle="/.test(line) ? [`server/${f}:${i + 1}`] : [])),
  );
  expect(found).toEqual([]);
  expect(files.length).toBeGreaterThan(30);
});
