/**
 * The `lab` commands user / plugins / init, run in-process through their exported functions with a fake
 * `io` (stdin, stdout, stderr). Plugin folders live in the OS temp folder, outside this repository, as a
 * user's would.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { Accounts } from '../../core/accounts/index.js';
import { Deck, NO_RECORDS } from '../../core/deck/index.js';
import { PluginHost } from '../../core/plugins/index.js';
import { openStore } from '../../core/store/index.js';
import { driverIdentifier, initPlugin } from '../../cli/init.js';
import { table, type CliIO } from '../../cli/io.js';
import { pluginsCheck, pluginsList, pluginsTest } from '../../cli/plugins.js';
import { readFirstLine, userAdd, userList, userPasswd } from '../../cli/user.js';
import { preparePluginDirs, serve } from '../../cli/serve.js';
import { waitFor } from '../helpers/wait.js';

const savedAlias = process.env.JITI_ALIAS;
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
  if (savedAlias === undefined) delete process.env.JITI_ALIAS;
  else process.env.JITI_ALIAS = savedAlias;
});

/** A fresh folder in the OS temp folder (outside the repository). */
function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `labdeck-cli-${prefix}-`));
  roots.push(d);
  expect(resolve(d).startsWith(resolve('.'))).toBe(false);
  return d;
}

/** An io whose stdin is `input` (ended) or left open for writes, and whose output is collected. */
function fakeIO(input?: string, tty = false) {
  const stdin = Object.assign(new PassThrough(), { isTTY: tty });
  if (input !== undefined) stdin.end(input);
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = {
    stdin,
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s) },
  };
  return { io, stdin, out: () => out.join(''), err: () => err.join('') };
}

describe('lab user', () => {
  const dataDir = tempDir('users');
  const opts = { dataDir };

  async function login(name: string, password: string) {
    const store = await openStore({ dataDir });
    try {
      return await new Accounts(store).login(name, password);
    } finally {
      await store.close();
    }
  }

  test('with no password flag and no terminal: exit 2, nothing created', async () => {
    const t = fakeIO('');
    expect(await userAdd('ann', opts, t.io)).toBe(2);
    expect(t.err()).toMatch(/not a terminal.*--password-stdin/);
    const l = fakeIO();
    expect(await userList(opts, l.io)).toBe(0);
    expect(l.out()).toMatch(/no users yet/);
  });

  test('the first account is an admin, and says so; later ones are operators unless --admin', async () => {
    const a = fakeIO('first-pass-1\n');
    expect(await userAdd('ann', { ...opts, passwordStdin: true }, a.io)).toBe(0);
    expect(a.out()).toBe('added user ann (admin): the first account is always an admin\n');

    const b = fakeIO('second-pass\nignored line\n');
    expect(await userAdd('bob', { ...opts, passwordStdin: true }, b.io)).toBe(0);
    expect(b.out()).toBe('added user bob (operator)\n');

    const c = fakeIO('third-pass!');
    expect(await userAdd('cy', { ...opts, passwordStdin: true, admin: true }, c.io)).toBe(0);
    expect(c.out()).toBe('added user cy (admin)\n');

    expect((await login('bob', 'second-pass')).role).toBe('operator');
    await expect(login('bob', 'ignored line')).rejects.toThrow(/Wrong username or password/);
  });

  test('an existing user, a bad name or a short password: exit 2 with the message', async () => {
    const dup = fakeIO('whatever-pass\n');
    expect(await userAdd('bob', { ...opts, passwordStdin: true }, dup.io)).toBe(2);
    expect(dup.err()).toMatch(/the user "bob" already exists/);
    expect(dup.out()).toBe('');

    const bad = fakeIO('whatever-pass\n');
    expect(await userAdd('no spaces', { ...opts, passwordStdin: true }, bad.io)).toBe(2);
    expect(bad.err()).toMatch(/bad user name/);

    const short = fakeIO('short\n');
    expect(await userAdd('dee', { ...opts, passwordStdin: true }, short.io)).toBe(2);
    expect(short.err()).toMatch(/at least 8 characters/);

    const empty = fakeIO('\n');
    expect(await userAdd('dee', { ...opts, passwordStdin: true }, empty.io)).toBe(2);
    expect(empty.err()).toMatch(/no password on standard input/);
  });

  test('list prints a table of username, role, created; --json for scripts', async () => {
    const t = fakeIO();
    expect(await userList(opts, t.io)).toBe(0);
    const lines = t.out().trimEnd().split('\n');
    expect(lines[0]).toMatch(/^USERNAME\s+ROLE\s+CREATED$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 2))).toEqual([
      ['ann', 'admin'],
      ['bob', 'operator'],
      ['cy', 'admin'],
    ]);
    expect(lines[1]).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d$/);

    const j = fakeIO();
    expect(await userList({ ...opts, json: true }, j.io)).toBe(0);
    const rows = JSON.parse(j.out()) as { username: string; role: string; created: string }[];
    expect(rows.map((r) => r.username)).toEqual(['ann', 'bob', 'cy']);
    expect(Number.isNaN(Date.parse(rows[0].created))).toBe(false);
  });

  test('passwd sets a new password: the new one logs in, the old one no longer; its sessions end', async () => {
    const store = await openStore({ dataDir });
    const bob = (await store.users.byName('bob'))!;
    await store.sessions.create('bobs-session', JSON.stringify({ userId: bob.id }), new Date(Date.now() + 3_600_000));
    await store.close();
    const t = fakeIO('brand-new-pass\n');
    expect(await userPasswd('bob', { ...opts, passwordStdin: true }, t.io)).toBe(0);
    expect(t.out()).toBe('password of bob changed; 1 session ended\n');
    const after = await openStore({ dataDir });
    expect(await after.sessions.get('bobs-session')).toBeNull();
    // through the account operations: audited as an admin's reset is, and `via: cli`; so is each account added
    const lines = await after.audit.list(50);
    expect(lines.find((a) => a.action === 'user.password')).toMatchObject({ userId: null, detail: { user_id: bob.id, username: 'bob', sessions_ended: 1, via: 'cli' } });
    expect(
      lines
        .filter((a) => a.action === 'user.add')
        .map((a) => (a.detail as { username: string }).username)
        .sort(),
    ).toEqual(['ann', 'bob', 'cy']);
    await after.close();
    expect((await login('bob', 'brand-new-pass')).username).toBe('bob');
    await expect(login('bob', 'second-pass')).rejects.toThrow(/Wrong/);

    const missing = fakeIO('brand-new-pass\n');
    expect(await userPasswd('nobody', { ...opts, passwordStdin: true }, missing.io)).toBe(2);
    expect(missing.err()).toMatch(/no user "nobody"/);

    const noTty = fakeIO('');
    expect(await userPasswd('bob', opts, noTty.io)).toBe(2);
  });

  test('at a terminal the password is asked twice and never echoed', async () => {
    const t = fakeIO(undefined, true);
    const done = userPasswd('ann', opts, t.io);
    t.stdin.write('typed-secret-1\n');
    t.stdin.write('typed-secret-1\n');
    expect(await done).toBe(0);
    expect(t.out()).toMatch(/^New password for ann: \nNew password for ann \(again\): \npassword of ann changed; 0 sessions ended\n$/);
    expect(t.out()).not.toMatch(/typed-secret/);
    expect((await login('ann', 'typed-secret-1')).role).toBe('admin');

    const differ = fakeIO(undefined, true);
    const p = userPasswd('ann', opts, differ.io);
    differ.stdin.write('typed-secret-2\ntyped-secret-3\n');
    expect(await p).toBe(2);
    expect(differ.err()).toMatch(/the two passwords differ/);
    expect((await login('ann', 'typed-secret-1')).username).toBe('ann');
  });

  test('readFirstLine takes the first line only, without its CR LF', async () => {
    expect(await readFirstLine(fakeIO('pa ss\r\nsecond\n').io.stdin)).toBe('pa ss');
    expect(await readFirstLine(fakeIO('no newline').io.stdin)).toBe('no newline');
  });
});

/** A driver written as a user would, in a folder outside the repository. */
const GOOD = `import { defineInstrument, z } from 'labdeck/contracts';
export const shutter = defineInstrument({
  name: 'cli-shutter',
  version: '2.1.0',
  options: z.object({}),
  create: () => ({ open: false }),
  methods: {
    open: { params: z.object({}), run: (s) => { s.open = true; return true; } },
    close: { params: z.object({}), run: (s) => { s.open = false; return false; } },
  },
});
`;
const CLASS = `/** A zero-config driver: a plain class. */
export class CliLamp {
  on(level = 1) { return level; }
}
`;
const BROKEN = `throw new Error('boom on load');\n`;

describe('lab plugins', () => {
  const dir = tempDir('plugins');
  writeFileSync(join(dir, 'good.ts'), GOOD);
  writeFileSync(join(dir, 'lamp.ts'), CLASS);
  writeFileSync(join(dir, 'broken.ts'), BROKEN);

  test('list: first-party and user drivers with version, method count, file; load errors', async () => {
    const t = fakeIO();
    expect(await pluginsList({ plugins: dir, json: true }, t.io)).toBe(0);
    const r = JSON.parse(t.out()) as {
      drivers: { name: string; version: string; methods: number; file: string; firstParty: boolean; inferred: boolean }[];
      errors: { file: string; message: string }[];
    };
    const byName = new Map(r.drivers.map((d) => [d.name, d]));
    expect(byName.get('cli-shutter')).toMatchObject({ version: '2.1.0', methods: 2, file: join(dir, 'good.ts'), firstParty: false, inferred: false });
    expect(byName.get('CliLamp')).toMatchObject({ methods: 1, inferred: true, firstParty: false });
    expect(byName.get('sim-pump')).toMatchObject({ firstParty: true });
    expect(r.errors).toEqual([{ file: join(dir, 'broken.ts'), message: expect.stringMatching(/boom on load/) }]);

    const text = fakeIO();
    expect(await pluginsList({ plugins: dir }, text.io)).toBe(0);
    expect(text.out()).toMatch(/^DRIVER\s+VERSION\s+METHODS\s+FILE$/m);
    expect(text.out()).toMatch(/^cli-shutter\s+2\.1\.0\s+2\s+\S*good\.ts$/m);
    expect(text.out()).toMatch(/1 plugin module\(s\) failed to load:\n.*broken\.ts: .*boom on load/);
  });

  test('check a folder: each module OK or its error with file and message; exit 1 when any fails', async () => {
    const t = fakeIO();
    expect(await pluginsCheck(dir, {}, t.io)).toBe(1);
    expect(t.out()).toMatch(/^FAIL {2}\S*broken\.ts\n {6}.*boom on load$/m);
    expect(t.out()).toMatch(/^ok {4}\S*good\.ts: instrument cli-shutter \(2 methods\)$/m);
    expect(t.out()).toMatch(/^ok {4}\S*lamp\.ts: instrument CliLamp \(1 method\)$/m);
    expect(t.out()).toMatch(/1 of 3 failed to load/);

    const j = fakeIO();
    expect(await pluginsCheck(dir, { json: true }, j.io)).toBe(1);
    const r = JSON.parse(j.out()) as { ok: boolean; results: { file: string; ok: boolean; error?: string }[] };
    expect(r.ok).toBe(false);
    expect(r.results.find((x) => x.file.endsWith('broken.ts'))).toMatchObject({ ok: false, error: expect.stringMatching(/boom/) });
  });

  test('check one file: exit 0 when it loads; a driver name clashing with a first-party one fails', async () => {
    const t = fakeIO();
    expect(await pluginsCheck(join(dir, 'good.ts'), {}, t.io)).toBe(0);
    expect(t.out()).toMatch(/all 1 loaded/);

    const clash = join(tempDir('clash'), 'pump.ts');
    writeFileSync(clash, GOOD.replace("'cli-shutter'", "'sim-pump'"));
    const c = fakeIO();
    expect(await pluginsCheck(clash, {}, c.io)).toBe(1);
    expect(c.out()).toMatch(/"sim-pump" is already provided by/);
  });

  test('check Python plugin files: their classes, or the Python error with its line', async () => {
    const py = tempDir('py');
    writeFileSync(join(py, 'valve.py'), 'class Valve:\n    def open(self, seconds: float = 1.0) -> bool:\n        return True\n');
    writeFileSync(join(py, 'broken.py'), 'import os\nraise OSError("no valve on COM4")\n');
    const t = fakeIO();
    expect(await pluginsCheck(py, {}, t.io)).toBe(1);
    expect(t.out()).toMatch(/^ok {4}\S*valve\.py: instrument Valve \(1 method\)$/m);
    expect(t.out()).toMatch(/^FAIL {2}\S*broken\.py\n {6}OSError: no valve on COM4 \(broken\.py, line 2\)$/m);
    expect(await pluginsCheck(join(py, 'valve.py'), {}, fakeIO().io)).toBe(0);
  }, 20000);

  test('check a missing path or a non-module: exit 2', async () => {
    const t = fakeIO();
    expect(await pluginsCheck(join(dir, 'nope'), {}, t.io)).toBe(2);
    expect(t.err()).toMatch(/no such file or folder/);
    const txt = join(dir, 'notes.txt');
    writeFileSync(txt, 'hello');
    const n = fakeIO();
    expect(await pluginsCheck(txt, {}, n.io)).toBe(2);
    expect(n.err()).toMatch(/not a JavaScript or TypeScript module/);
  });
});

describe('lab init plugin', () => {
  test('scaffolds a driver and its test; refuses to overwrite; validates the name', async () => {
    const dir = join(tempDir('init'), 'my-plugins');
    const t = fakeIO();
    expect(await initPlugin('my-stage', { dir }, t.io)).toBe(0);
    const driver = join(dir, 'my-stage.ts');
    const testFile = join(dir, 'my-stage.test.ts');
    expect(readFileSync(driver, 'utf8')).toMatch(/import \{ defineInstrument, z \} from 'labdeck\/contracts';/);
    expect(readFileSync(driver, 'utf8')).toMatch(/export const myStageDriver = defineInstrument\(\{\n {2}name: 'my-stage',/);
    expect(readFileSync(testFile, 'utf8')).toMatch(/import \{ myStageDriver \} from '\.\/my-stage\.js';/);
    expect(t.out()).toMatch(/wrote .*my-stage\.ts\nwrote .*my-stage\.test\.ts\n/);

    writeFileSync(driver, '// my edits\n');
    const again = fakeIO();
    expect(await initPlugin('my-stage', { dir }, again.io)).toBe(2);
    expect(again.err()).toMatch(/already exist: nothing written/);
    expect(readFileSync(driver, 'utf8')).toBe('// my edits\n');

    // only the test exists: still nothing written
    const other = join(dir, 'other.test.ts');
    writeFileSync(other, '// mine\n');
    expect(await initPlugin('other', { dir }, fakeIO().io)).toBe(2);
    expect(existsSync(join(dir, 'other.ts'))).toBe(false);

    for (const bad of ['9lives', 'has space', 'dot.ted', '', 'x'.repeat(65)]) {
      const b = fakeIO();
      expect(await initPlugin(bad, { dir }, b.io)).toBe(2);
      expect(b.err()).toMatch(/bad plugin name/);
    }
  });

  test('driver identifiers are valid and never keywords', () => {
    expect(driverIdentifier('my-stage')).toBe('myStageDriver');
    expect(driverIdentifier('class')).toBe('classDriver');
    expect(driverIdentifier('_x__y-')).toBe('xYDriver');
    expect(driverIdentifier('_')).toBe('Driver');
    expect(driverIdentifier('Pump_2')).toBe('pump2Driver');
  });

  test('a scaffolded plugin outside the repository loads with the PluginHost and runs', async () => {
    const dir = tempDir('scaffold');
    expect(await initPlugin('stage-x', { dir }, fakeIO().io)).toBe(0);
    const deck = new Deck({ records: NO_RECORDS });
    const host = new PluginHost({ deck, dirs: [dir], watch: false });
    try {
      await host.start();
      expect(host.errors()).toEqual([]);
      expect(deck.drivers().map((d) => [d.name, d.file])).toEqual([['stage-x', join(dir, 'stage-x.ts')]]);
      await deck.connect('stage-x', 'stage', {});
      expect((await deck.call('stage', 'move_to', { position_mm: 7 }, { userId: null })).output).toBe(7);
      expect((await deck.call('stage', 'position', {}, { userId: null })).output).toBe(7);
      await expect(deck.call('stage', 'move_to', { position_mm: 301 }, { userId: null })).rejects.toThrow();
    } finally {
      await host.close();
      await deck.close();
    }
  });

  test('its test runs with `lab plugins test` (node --test); a failing test exits 1', async () => {
    const dir = tempDir('runtests');
    expect(await initPlugin('stage-y', { dir }, fakeIO().io)).toBe(0);
    const failing = join(tempDir('failing'), 'bad.test.ts');
    mkdirSync(join(failing, '..'), { recursive: true });
    writeFileSync(failing, `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\ntest('fails', () => assert.equal(1, 2));\n`);
    const [ok, bad] = await Promise.all([
      (async () => {
        const t = fakeIO();
        return { code: await pluginsTest([dir], t.io), out: t.out() };
      })(),
      (async () => {
        const t = fakeIO();
        return { code: await pluginsTest([failing], t.io), out: t.out() };
      })(),
    ]);
    expect(ok.out).toMatch(/pass 2/);
    expect(ok.out).toMatch(/fail 0/);
    expect(ok.code).toBe(0);
    expect(bad.out).toMatch(/fail 1/);
    expect(bad.code).toBe(1);

    const none = fakeIO();
    expect(await pluginsTest([tempDir('empty')], none.io)).toBe(2);
    expect(none.err()).toMatch(/no test files/);
  });
});

describe('lab serve', () => {
  /** The plugin event a test waits for: a log line that matches, or a time-out naming what was logged. */
  function waitForLine(lines: string[], re: RegExp, ms = 10_000): Promise<string> {
    return waitFor(() => lines.find((l) => re.test(l)), `a line matching ${re}`, ms, 20).catch(() => {
      throw new Error(`no line matching ${re} in:\n${lines.join('\n')}`);
    });
  }

  test('creates a missing plugin folder, names it in the start-up line, and loads a driver scaffolded after start-up', async () => {
    const root = tempDir('serve');
    const dir = join(root, 'lab-plugins');
    const lines: string[] = [];
    const s = await serve({ host: '127.0.0.1', port: 0, deck: false, dataDir: join(root, 'data'), pluginDirs: [dir] }, (l) => lines.push(l));
    try {
      expect(existsSync(dir)).toBe(true);
      expect(lines).toContain(`plugin folder created: ${dir} (empty: save your drivers there, or scaffold one with \`lab init plugin NAME --dir ${dir}\`)`);
      expect(lines.find((l) => l.startsWith('labdeck ready'))).toMatch(
        new RegExp(`^labdeck ready in \\d+ ms: http://127\\.0\\.0\\.1:\\d+/app \\(deck: none, data: .*, plugins: ${dir.replace(/[.\\]/g, '\\$&')} \\(watched\\)\\)$`),
      );
      expect(s.runtime.deck.drivers().some((d) => d.name === 'my-stage')).toBe(false);

      expect(await initPlugin('my-stage', { dir }, fakeIO().io)).toBe(0);
      await waitForLine(lines, /^plugin reloaded: .*my-stage\.ts$/);
      expect(s.runtime.deck.drivers().find((d) => d.name === 'my-stage')).toMatchObject({ origin: 'plugin', file: join(dir, 'my-stage.ts') });
    } finally {
      await s.close();
    }

    // the second start finds the folder: nothing created, and --no-watch says so
    const again: string[] = [];
    const s2 = await serve({ host: '127.0.0.1', port: 0, deck: false, dataDir: join(root, 'data'), pluginDirs: [dir], watch: false }, (l) => again.push(l));
    try {
      expect(again.some((l) => l.startsWith('plugin folder created'))).toBe(false);
      expect(again.find((l) => l.startsWith('labdeck ready'))).toMatch(/, plugins: .*lab-plugins \(not watched\)\)$/);
      expect(s2.runtime.deck.drivers().some((d) => d.name === 'my-stage')).toBe(true);
    } finally {
      await s2.close();
    }
  }, 30_000);

  test('creates a missing folder with its parents; refuses a file, and a folder that cannot be made', async () => {
    const root = tempDir('serve-dirs');
    const deep = join(root, 'lab', 'drivers');
    expect(await preparePluginDirs([deep, root])).toEqual([
      { dir: deep, created: true },
      { dir: root, created: false },
    ]);
    expect(existsSync(deep)).toBe(true);
    const file = join(root, 'drivers.ts');
    writeFileSync(file, '// a module, not a folder\n');
    await expect(preparePluginDirs([file])).rejects.toMatchObject({ code: 'invalid_input', message: `The plugin folder ${file} is a file: name the folder that holds your drivers (--plugins DIR).` });
    const under = join(file, 'lab-plugins');
    await expect(preparePluginDirs([under])).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(new RegExp(`^Cannot create the plugin folder ${under.replace(/[.\\]/g, '\\$&')}: .*ENOTDIR.*\\. Check the --plugins path, or create the folder yourself\\.$`)),
    });
  });
});

test('table pads every column but the last', () => {
  expect(
    table(
      ['A', 'BB'],
      [
        ['xxx', 'y'],
        ['z', ''],
      ],
    ),
  ).toBe('A    BB\nxxx  y\nz');
});
