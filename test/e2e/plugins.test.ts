/**
 * A lab's TypeScript plugin that imports zod by its own name, through the built `lab serve`: labdeck's zod
 * is its one-file build (dist/vendor/zod.js), the plugin's is node_modules' copy, and the two must work
 * together (the driver is recognised, its schema validates calls and describes its form).
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnServer } from './server.js';

const PLUGIN = `import { defineInstrument } from 'labdeck/contracts';
import { z } from 'zod';
export default defineInstrument({
  name: 'scale',
  version: '1.0.0',
  description: 'A scale whose plugin brings its own zod',
  options: z.object({}),
  methods: {
    weigh: { params: z.object({ grams: z.number().min(0).describe('How much to weigh') }), run: async (_s: unknown, a: { grams: number }) => a.grams * 2 },
  },
  create: () => ({}),
});
`;

describe("a lab's plugin with its own zod", () => {
  it('connects, validates and describes its calls with labdeck built on its own copy', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'labdeck-e2e-'));
    const plugins = join(dataDir, 'plugins');
    await mkdir(join(plugins, 'node_modules'), { recursive: true });
    await symlink(resolve('node_modules/zod'), join(plugins, 'node_modules', 'zod'), 'dir');
    await writeFile(join(plugins, 'scale.ts'), PLUGIN);
    const { url: base, proc } = await spawnServer(dataDir, ['--no-watch']);
    try {
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const account = new URLSearchParams({ username: 'ada', password: 'correct horse' }).toString();
      await fetch(`${base}/auth/signup`, { method: 'POST', headers: form, body: account, redirect: 'manual' });
      const login = await fetch(`${base}/auth/login`, { method: 'POST', headers: form, body: account, redirect: 'manual' });
      const cookie = login.headers
        .getSetCookie()
        .find((c) => c.startsWith('labdeck.sid='))!
        .split(';')[0]!;
      const made = await fetch(`${base}/account/tokens`, {
        method: 'POST',
        headers: { cookie, accept: 'application/json', 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'e2e' }),
      });
      const headers = { authorization: `Bearer ${((await made.json()) as { token: string }).token}`, accept: 'application/json', 'content-type': 'application/json' };

      const connect = await fetch(`${base}/instruments/new/scale`, { method: 'POST', headers, body: JSON.stringify({ device_name: 'sc' }), redirect: 'manual' });
      expect([connect.status, await connect.text()]).toEqual([302, '']);
      const call = await fetch(`${base}/instruments/sc`, { method: 'POST', headers, body: JSON.stringify({ method: 'weigh', args: { grams: 2 } }) });
      expect(await call.json()).toEqual({ task_id: expect.any(Number), output: 4 });
      const bad = await fetch(`${base}/instruments/sc`, { method: 'POST', headers, body: JSON.stringify({ method: 'weigh', args: { grams: -1 } }) });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { details: { field: string }[] } }).error.details[0]!.field).toBe('grams');
      const page = await (await fetch(`${base}/instruments/sc`, { headers })).text();
      expect(page).toContain('How much to weigh');
    } finally {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
