/**
 * The store on the dialect chosen by LABDECK_TEST_DB: SQLite by default, PostgreSQL with
 * `LABDECK_TEST_DB=postgres npm test -- test/unit/store.test.ts`. Run both.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { LabError } from '../../core/errors.js';
import { migrations } from '../../core/store/migrations/index.js';
import { dataSourceOf, openStore, parseDbUrl, SQLITE_FILE } from '../../core/store/index.js';
import { Sql } from '../../core/store/sql.js';
import { migrateSqlite, openSqlite } from '../../core/store/sqlite.js';
import type { NewStep, Store } from '../../core/store/types.js';
import { postgresTestDb, testDbUrl, testStore, usingPostgres, withTestStore } from '../helpers/db.js';
import { labError } from '../helpers/errors.js';

/** Every migration, by name, in order (one list for both dialects). */
const MIGRATIONS = migrations.map((M) => new M().name);

const dialect = usingPostgres() ? 'postgres' : 'sqlite';

let store: Store;
withTestStore((t) => (store = t.store));

let seq = 0;
const uniq = (s: string) => `${s}-${++seq}`;
const newUser = (role: 'admin' | 'operator' = 'operator') => store.users.create({ username: uniq('user'), passwordHash: 'scrypt$x', role });

function step(over: Partial<NewStep> = {}): NewStep {
  return {
    runId: null,
    phase: null,
    iteration: null,
    stepIndex: null,
    instrument: 'pump',
    method: 'dose',
    args: { volume_ml: 1.5 },
    output: null,
    status: 'running',
    error: null,
    userId: null,
    startedAt: new Date('2024-03-01T10:00:00.123Z'),
    endedAt: null,
    log: null,
    ...over,
  };
}

describe(`schema (${dialect})`, () => {
  it('opens the requested dialect', () => {
    expect(store.dialect).toBe(dialect);
  });

  it('leaves nothing for TypeORM to change after migrating (entities and migrations agree)', async () => {
    const log = await dataSourceOf(store).driver.createSchemaBuilder().log();
    expect(log.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('uses the connection settings chosen for the dialect', async () => {
    const ds = dataSourceOf(store);
    if (dialect === 'sqlite') {
      expect(await ds.query('PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);
      expect(await ds.query('PRAGMA foreign_keys')).toEqual([{ foreign_keys: 1 }]);
      expect(await ds.query('PRAGMA busy_timeout')).toEqual([{ timeout: 5000 }]);
      expect(await ds.query('PRAGMA synchronous')).toEqual([{ synchronous: 1 }]); // NORMAL
    } else {
      expect(await ds.query('SHOW synchronous_commit')).toEqual([{ synchronous_commit: 'on' }]);
    }
  });
});

describe(`users (${dialect})`, () => {
  it('creates, counts, lists and finds users', async () => {
    const before = await store.users.count();
    const u = await store.users.create({ username: 'Alice', passwordHash: 'h1', role: 'admin' });
    expect(u).toEqual({ id: expect.any(Number), username: 'Alice', passwordHash: 'h1', role: 'admin', createdAt: expect.any(Date), disabledAt: null, deletedAt: null });
    expect(Math.abs(u.createdAt.getTime() - Date.now())).toBeLessThan(60_000);
    expect(await store.users.count()).toBe(before + 1);
    expect((await store.users.list()).map((x) => x.username)).toContain('Alice');
    expect(await store.users.byId(u.id)).toEqual(u);
    expect(await store.users.byName('Alice')).toEqual(u);
    expect(await store.users.byId(999_999)).toBeNull();
  });

  it('matches usernames exactly, case-sensitively', async () => {
    await store.users.create({ username: 'Bob', passwordHash: 'h', role: 'operator' });
    expect(await store.users.byName('bob')).toBeNull();
    expect(await store.users.byName('BOB')).toBeNull();
    expect(await store.users.byName('Bob ')).toBeNull();
    expect((await store.users.byName('Bob'))?.username).toBe('Bob');
  });

  it('rejects a taken username with a conflict naming the field', async () => {
    await store.users.create({ username: 'carol', passwordHash: 'h', role: 'operator' });
    const e = await labError(store.users.create({ username: 'carol', passwordHash: 'h2', role: 'admin' }));
    expect(e.code).toBe('conflict');
    expect(e.details).toEqual([{ field: 'username', message: 'already taken' }]);
    expect((await store.users.byName('carol'))?.passwordHash).toBe('h');
  });

  it('rejects an unknown role', async () => {
    const e = await labError(store.users.create({ username: uniq('r'), passwordHash: 'h', role: 'root' as 'admin' }));
    expect(e.code).toBe('invalid_input');
    expect(e.details?.[0]?.field).toBe('role');
  });

  it('changes a password, and says when the user does not exist', async () => {
    const u = await newUser();
    await store.users.setPassword(u.id, 'new-hash');
    expect((await store.users.byId(u.id))?.passwordHash).toBe('new-hash');
    expect((await labError(store.users.setPassword(999_999, 'x'))).code).toBe('not_found');
  });

  it('changes a role, disables, enables and deletes; a deleted user keeps its row and name but nothing else', async () => {
    const u = await newUser();
    expect(await store.users.change(u.id, { role: 'admin' })).toMatchObject({ id: u.id, role: 'admin', disabledAt: null });
    const off = await store.users.change(u.id, { disabled: true });
    expect(off?.disabledAt).toBeInstanceOf(Date);
    // disabling again keeps the time it was first disabled
    expect((await store.users.change(u.id, { disabled: true }))?.disabledAt).toEqual(off?.disabledAt);
    expect((await store.users.change(u.id, { disabled: false }))?.disabledAt).toBeNull();
    expect((await labError(store.users.change(u.id, { role: 'root' as 'admin' }))).details?.[0]?.field).toBe('role');

    await store.tokens.create({ userId: u.id, name: 't', tokenHash: uniq('hash'), prefix: 'lab_x' });
    await store.prefs.setOrder(u.id, 'pump', ['dose']);
    const gone = await store.users.change(u.id, { deleted: true });
    expect(gone).toMatchObject({ id: u.id, username: u.username, deletedAt: expect.any(Date), passwordHash: '!' });
    expect(await store.tokens.list(u.id)).toEqual([]);
    expect(await store.prefs.get(u.id, 'pump')).toEqual({ order: [], hidden: [] });
    expect((await store.users.list()).map((x) => x.id)).not.toContain(u.id);
    expect((await store.users.byId(u.id))?.username).toBe(u.username);
    expect(await store.users.change(u.id, { disabled: false })).toBeNull();
    expect((await labError(store.users.setPassword(u.id, 'back'))).code).toBe('not_found');
    expect(await store.users.change(999_999, { role: 'admin' })).toBeNull();
  });

  it('runs the check of a change with the user as it is and the other admins who can log in; a refusal changes nothing', async () => {
    const a = await newUser('admin');
    const seen: [string, number][] = [];
    await store.users.change(a.id, { disabled: true }, (u, others) => void seen.push([u.username, others]));
    const before = (await store.users.list()).filter((x) => x.role === 'admin' && !x.disabledAt && !x.deletedAt && x.id !== a.id).length;
    expect(seen).toEqual([[a.username, before]]);
    await expect(
      store.users.change(a.id, { role: 'operator', disabled: false }, () => {
        throw new LabError('conflict', 'no');
      }),
    ).rejects.toThrow('no');
    expect(await store.users.byId(a.id)).toMatchObject({ role: 'admin', disabledAt: expect.any(Date) });
  });

  it('keeps an admin when admins demote each other at once, in one process and (PostgreSQL) in two', async () => {
    // a fresh database: no admins of other tests; on PostgreSQL a second store stands for a second labdeck
    const t = await testStore();
    const other = usingPostgres() ? await openStore({ url: t.url, dataDir: t.dataDir }) : t.store;
    try {
      const keepOne = (u: { role: string }, others: number) => {
        if (u.role === 'admin' && others === 0) throw new LabError('conflict', 'the last admin');
      };
      const names = ['x', 'y', 'z'];
      const ids = await Promise.all(names.map(async (n) => (await t.store.users.create({ username: n, passwordHash: 'h', role: 'admin' })).id));
      for (let round = 0; round < 10; round++) {
        for (const id of ids) await t.store.users.change(id, { role: 'admin' });
        const results = await Promise.allSettled(ids.map((id, i) => (i % 2 ? other : t.store).users.change(id, { role: 'operator' }, keepOne)));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
        expect((await t.store.users.list()).filter((u) => u.role === 'admin')).toHaveLength(1);
      }
    } finally {
      if (other !== t.store) await other.close();
      await t.cleanup();
    }
  });
});

describe(`sessions (${dialect})`, () => {
  const inMs = (ms: number) => new Date(Date.now() + ms);

  it('stores, replaces, touches and destroys a session', async () => {
    const exp = new Date(Date.now() + 3_600_000);
    await store.sessions.create('s1', '{"user":1}', exp);
    expect(await store.sessions.get('s1')).toEqual({ data: '{"user":1}', expiresAt: exp });
    expect(await store.sessions.update('s1', '{"user":2}', exp)).toBe(true);
    expect((await store.sessions.get('s1'))?.data).toBe('{"user":2}');
    const later = inMs(7_200_000);
    await store.sessions.touch('s1', later);
    expect((await store.sessions.get('s1'))?.expiresAt).toEqual(later);
    await store.sessions.destroy('s1');
    expect(await store.sessions.get('s1')).toBeNull();
    expect(await store.sessions.get('never')).toBeNull();
  });

  it('never makes a deleted session again: a change to it writes nothing (a request in flight at log-out)', async () => {
    const exp = new Date(Date.now() + 3_600_000);
    await store.sessions.create('gone', '{"userId":1}', exp);
    await store.sessions.destroy('gone');
    expect(await store.sessions.update('gone', '{"userId":1,"workflow":"w"}', exp)).toBe(false);
    expect(await store.sessions.get('gone')).toBeNull();
    await store.sessions.create('twice', '{}', exp);
    const again = await store.sessions.create('twice', '{"userId":1}', exp).then(
      () => 'written',
      (e: { code?: string }) => String(e.code),
    );
    expect(again).toMatch(/^(SQLITE_CONSTRAINT_PRIMARYKEY|23505)$/);
    expect((await store.sessions.get('twice'))?.data).toBe('{}');
  });

  it('does not return an expired session, and prune deletes exactly the expired ones', async () => {
    await store.sessions.prune(inMs(10 * 86_400_000)); // start from an empty table
    await store.sessions.create('old1', 'a', inMs(-60_000));
    await store.sessions.create('old2', 'b', inMs(-1));
    await store.sessions.create('live', 'c', inMs(60_000));
    expect(await store.sessions.get('old1')).toBeNull();
    expect(await store.sessions.prune()).toBe(2);
    expect(await store.sessions.prune()).toBe(0);
    expect((await store.sessions.get('live'))?.data).toBe('c');
    // With an explicit "now" in the future, the live one is expired too.
    expect(await store.sessions.prune(inMs(120_000))).toBe(1);
    expect(await store.sessions.get('live')).toBeNull();
  });
});

describe(`api tokens (${dialect})`, () => {
  it('creates, lists, resolves and revokes tokens', async () => {
    const u = await newUser();
    const other = await newUser();
    const t = await store.tokens.create({ userId: u.id, name: 'notebook', tokenHash: uniq('hash'), prefix: 'ld_ab12' });
    expect(t).toEqual({
      id: expect.any(Number),
      userId: u.id,
      name: 'notebook',
      prefix: 'ld_ab12',
      createdAt: expect.any(Date),
      lastUsedAt: null,
    });
    const hash2 = uniq('hash');
    const t2 = await store.tokens.create({ userId: u.id, name: 'ci', tokenHash: hash2, prefix: 'ld_cd34' });
    expect((await store.tokens.list(u.id)).map((x) => x.id)).toEqual([t.id, t2.id]);
    expect(await store.tokens.list(other.id)).toEqual([]);

    const found = await store.tokens.userFor(hash2);
    expect(found).toEqual({ ...u, token: { id: t2.id, name: 'ci' } });
    const used = (await store.tokens.list(u.id)).find((x) => x.id === t2.id);
    expect(used?.lastUsedAt).toBeInstanceOf(Date);
    expect(Math.abs(used!.lastUsedAt!.getTime() - Date.now())).toBeLessThan(60_000);
    expect(await store.tokens.userFor('no-such-hash')).toBeNull();

    expect(await store.tokens.revoke(other.id, t2.id)).toBe(false); // not theirs
    expect(await store.tokens.revoke(u.id, t2.id)).toBe(true);
    expect(await store.tokens.revoke(u.id, t2.id)).toBe(false);
    expect(await store.tokens.userFor(hash2)).toBeNull();
    expect((await store.tokens.list(u.id)).map((x) => x.id)).toEqual([t.id]);
  });

  it('rejects a token for a missing user and a duplicate hash', async () => {
    const u = await newUser();
    const e1 = await labError(store.tokens.create({ userId: 999_999, name: 'x', tokenHash: uniq('h'), prefix: 'p' }));
    expect(e1.code).toBe('not_found');
    expect(e1.details?.[0]?.field).toBe('userId');
    const hash = uniq('h');
    await store.tokens.create({ userId: u.id, name: 'a', tokenHash: hash, prefix: 'p' });
    const e2 = await labError(store.tokens.create({ userId: u.id, name: 'b', tokenHash: hash, prefix: 'p' }));
    expect(e2.code).toBe('conflict');
  });
});

describe(`method preferences (${dialect})`, () => {
  it('round-trips order and hidden methods per user and instrument', async () => {
    const u = await newUser();
    const v = await newUser();
    expect(await store.prefs.get(u.id, 'pump')).toEqual({ order: [], hidden: [] });

    await store.prefs.setOrder(u.id, 'pump', ['dose', 'prime', 'stop']);
    await store.prefs.setHidden(u.id, 'pump', 'prime', true);
    await store.prefs.setHidden(u.id, 'pump', 'stop', true);
    await store.prefs.setHidden(u.id, 'pump', 'stop', true); // idempotent
    expect(await store.prefs.get(u.id, 'pump')).toEqual({ order: ['dose', 'prime', 'stop'], hidden: ['prime', 'stop'] });

    await store.prefs.setHidden(u.id, 'pump', 'prime', false);
    await store.prefs.setOrder(u.id, 'pump', ['stop', 'dose']);
    expect(await store.prefs.get(u.id, 'pump')).toEqual({ order: ['stop', 'dose'], hidden: ['stop'] });

    // Other users and other instruments are separate rows.
    expect(await store.prefs.get(v.id, 'pump')).toEqual({ order: [], hidden: [] });
    expect(await store.prefs.get(u.id, 'balance')).toEqual({ order: [], hidden: [] });
    await store.prefs.setHidden(v.id, 'pump', 'dose', true);
    expect(await store.prefs.get(v.id, 'pump')).toEqual({ order: [], hidden: ['dose'] });
  });

  it('loses no change when methods are hidden concurrently', async () => {
    const u = await newUser();
    const methods = ['a', 'b', 'c', 'd', 'e', 'f'];
    await Promise.all(methods.map((m) => store.prefs.setHidden(u.id, 'scope', m, true)));
    expect((await store.prefs.get(u.id, 'scope')).hidden.sort()).toEqual(methods);
  });

  it('says when the user does not exist', async () => {
    expect((await labError(store.prefs.setOrder(999_999, 'pump', ['a']))).code).toBe('not_found');
  });
});

describe(`steps (${dialect})`, () => {
  it('keeps what the instrument printed with the call', async () => {
    const id = await store.steps.insert(step({ status: 'ok', log: 'dosing 1 mL\nINFO lab.pump: done' }));
    expect((await store.steps.get(id))?.log).toBe('dosing 1 mL\nINFO lab.pump: done');
    await store.steps.update(id, { log: null });
    expect((await store.steps.get(id))?.log).toBeNull();
  });

  it('inserts and reads back a step with nested JSON, nulls and dates', async () => {
    const u = await newUser();
    const s = step({
      runId: 42,
      phase: 'main',
      iteration: 3,
      stepIndex: 7,
      args: { volume_ml: 1.5, opts: { mode: 'fast', list: [1, 'two', null, { deep: true }] }, none: null, txt: 'é ✓ "q"' },
      userId: u.id,
    });
    const id = await store.steps.insert(s);
    expect(Number.isInteger(id)).toBe(true);
    expect(await store.steps.get(id)).toEqual({ id, ...s });
    expect(await store.steps.get(id + 1_000_000)).toBeNull();
  });

  it('keeps args and output values of every JSON kind', async () => {
    for (const v of [null, 0, -1.25, 'text', true, [], [1, [2, [3]]], { a: { b: { c: null } } }]) {
      const id = await store.steps.insert(step({ args: v, output: v }));
      const got = await store.steps.get(id);
      expect(got?.args).toEqual(v);
      expect(got?.output).toEqual(v);
    }
    const id = await store.steps.insert(step({ args: undefined, output: undefined }));
    expect(await store.steps.get(id)).toMatchObject({ args: null, output: null });
  });

  it('gives increasing ids', async () => {
    const a = await store.steps.insert(step());
    const b = await store.steps.insert(step());
    expect(b).toBeGreaterThan(a);
  });

  it('updates only the given fields', async () => {
    const id = await store.steps.insert(step({ iteration: 1 }));
    const ended = new Date('2024-03-01T10:00:02.456Z');
    await store.steps.update(id, { status: 'ok', output: { mass_g: 0.98, raw: [1, 2] }, endedAt: ended });
    expect(await store.steps.get(id)).toEqual({ id, ...step({ iteration: 1 }), status: 'ok', output: { mass_g: 0.98, raw: [1, 2] }, endedAt: ended });

    await store.steps.update(id, { status: 'error', error: 'timeout', output: null, iteration: undefined });
    expect(await store.steps.get(id)).toMatchObject({ status: 'error', error: 'timeout', output: null, iteration: 1, endedAt: ended });

    await store.steps.update(id, {}); // nothing to change, still checks the step exists
    expect((await labError(store.steps.update(999_999_999, { status: 'ok' }))).code).toBe('not_found');
    expect((await labError(store.steps.update(999_999_999, {}))).code).toBe('not_found');
  });

  it('rejects an unknown status and values that are not JSON', async () => {
    const e1 = await labError(store.steps.insert(step({ status: 'done' as 'ok' })));
    expect(e1.code).toBe('invalid_input');
    expect(e1.details?.[0]?.field).toBe('status');
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const e2 = await labError(store.steps.insert(step({ output: circular })));
    expect(e2.code).toBe('invalid_input');
    expect(e2.details?.[0]?.field).toBe('output');
    // BigInts are kept as decimal strings rather than failing the call record.
    const id = await store.steps.insert(step({ output: { n: 2n ** 70n } }));
    expect((await store.steps.get(id))?.output).toEqual({ n: '1180591620717411303424' });
  });

  it('keeps millisecond timestamps exactly', async () => {
    const startedAt = new Date('1999-12-31T23:59:59.999Z');
    const endedAt = new Date('2000-01-01T00:00:00.001Z');
    const id = await store.steps.insert(step({ startedAt, endedAt }));
    const got = await store.steps.get(id);
    expect(got?.startedAt).toEqual(startedAt);
    expect(got?.endedAt).toEqual(endedAt);
  });

  it('deletes one record (a call refused before anything acted on it), saying whether there was one', async () => {
    const id = await store.steps.insert(step({ status: 'running', endedAt: null }));
    expect(await store.steps.delete(id)).toBe(true);
    expect(await store.steps.get(id)).toBeNull();
    expect(await store.steps.delete(id)).toBe(false);
  });

  it("marks direct calls left running in-doubt: only those instruments', not a run's, not a later one, not an ended one", async () => {
    const instrument = `doubt-${dialect}`;
    const at = new Date('2025-01-01T10:00:00.000Z');
    const later = new Date('2025-01-01T12:00:00.000Z');
    const mine = await store.steps.insert(step({ instrument, status: 'running', startedAt: at, endedAt: null }));
    const fresh = await store.steps.insert(step({ instrument, status: 'running', startedAt: later, endedAt: null }));
    const ended = await store.steps.insert(step({ instrument, status: 'ok', startedAt: at }));
    const other = await store.steps.insert(step({ instrument: `${instrument}-other`, status: 'running', startedAt: at, endedAt: null }));
    expect(await store.steps.markInDoubt([instrument], 'stopped during it', new Date('2025-01-01T11:00:00.000Z'))).toBe(1);
    expect(await store.steps.get(mine)).toMatchObject({ status: 'in-doubt', error: 'stopped during it', endedAt: null });
    for (const [id, status] of [
      [fresh, 'running'],
      [ended, 'ok'],
      [other, 'running'],
    ] as const)
      expect((await store.steps.get(id))?.status).toBe(status);
    expect(await store.steps.markInDoubt([instrument], 'stopped during it')).toBe(1); // no bound: any left running
    expect(await store.steps.markInDoubt([], 'none')).toBe(0);
  });

  it('records a thousand calls at once, each with its own id and output (the hot path; its speed is in npm run bench)', async () => {
    const ids = await Promise.all(Array.from({ length: 1000 }, (_, i) => store.steps.insert(step({ stepIndex: i, output: { i } }))));
    expect(new Set(ids).size).toBe(1000);
  });
});

describe(`audit log (${dialect})`, () => {
  it('lists entries newest first with their JSON detail, up to a limit', async () => {
    const u = await newUser('admin');
    await store.audit.add({ userId: u.id, action: 'console.exec', detail: { code: '1+1', lines: [1, 2] } });
    await store.audit.add({ userId: null, action: 'plugins.reload', detail: null });
    await store.audit.add({ userId: u.id, action: 'module.import', detail: 'deck.ts' });
    const rows = await store.audit.list(2);
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => r.action)).toEqual(['module.import', 'plugins.reload']);
    expect(rows[1]).toEqual({ id: expect.any(Number), userId: null, action: 'plugins.reload', detail: null, at: expect.any(Date) });
    const all = await store.audit.list();
    const first = all.find((r) => r.action === 'console.exec');
    expect(first).toMatchObject({ userId: u.id, detail: { code: '1+1', lines: [1, 2] } });
    expect(all[0]!.id).toBeGreaterThan(all[1]!.id);
  });
});

describe(`settings (${dialect})`, () => {
  it('round-trips JSON values and overwrites', async () => {
    expect(await store.settings.get('missing')).toBeNull();
    const cases: [string, unknown][] = [
      ['signup', { enabled: false, roles: ['operator'] }],
      ['logo', { mode: 'dark', file: null, nested: { a: [1, { b: 2 }] } }],
      ['count', 3],
      ['title', 'Lab "A"'],
      ['flag', true],
      ['list', []],
    ];
    for (const [k, v] of cases) await store.settings.set(k, v);
    for (const [k, v] of cases) expect(await store.settings.get(k)).toEqual(v);
    await store.settings.set('count', 4);
    expect(await store.settings.get<number>('count')).toBe(4);
    await store.settings.set('count', null);
    expect(await store.settings.get('count')).toBeNull();
  });
});

describe(`re-opening (${dialect})`, () => {
  it('keeps the data and does not run migrations again', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'labdeck-reopen-'));
    const db = await testDbUrl();
    try {
      const s1 = await openStore({ url: db.url, dataDir });
      const u = await s1.users.create({ username: 'keeper', passwordHash: 'h', role: 'admin' });
      const stepId = await s1.steps.insert(step({ output: { kept: true } }));
      await s1.close();
      await s1.close(); // closing twice is harmless
      if (!db.url) expect(fs.existsSync(path.join(dataDir, SQLITE_FILE))).toBe(true);

      const s2 = await openStore({ url: db.url, dataDir });
      try {
        expect(await s2.users.byName('keeper')).toEqual(u);
        expect((await s2.steps.get(stepId))?.output).toEqual({ kept: true });
        const ran = (await dataSourceOf(s2).query('SELECT "name" FROM "migrations"')) as { name: string }[];
        expect(ran.map((r) => r.name)).toEqual(MIGRATIONS);
        expect(await dataSourceOf(s2).showMigrations()).toBe(false); // nothing pending
      } finally {
        await s2.close();
      }
    } finally {
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('two labdecks opening one new PostgreSQL database at once (whatever LABDECK_TEST_DB says)', () => {
  it('both open it: one migrates, the other waits for it and finds nothing left to do', async () => {
    const db = await postgresTestDb({ empty: true });
    const dirs = [0, 1].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'labdeck-twopg-')));
    const opened = await Promise.allSettled(dirs.map((dataDir) => openStore({ url: db.url, dataDir })));
    try {
      expect(opened.map((o) => (o.status === 'rejected' ? String(o.reason) : 'opened'))).toEqual(['opened', 'opened']);
      const ran = (await dataSourceOf((opened[0] as PromiseFulfilledResult<Store>).value).query('SELECT "name" FROM "migrations"')) as { name: string }[];
      expect(ran.map((r) => r.name).sort()).toEqual([...new Set(ran.map((r) => r.name))].sort()); // each once
      expect(ran).toHaveLength(migrations.length);
    } finally {
      for (const o of opened) if (o.status === 'fulfilled') await o.value.close();
      await db.drop();
      for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    }
  });
});

describe('database URLs', () => {
  const dir = path.join(os.tmpdir(), 'labdeck-data');

  it('defaults to SQLite in the data directory', () => {
    expect(parseDbUrl(undefined, dir)).toEqual({ dialect: 'sqlite', database: path.join(dir, 'labdeck.db') });
    expect(parseDbUrl('', dir)).toEqual({ dialect: 'sqlite', database: path.join(dir, 'labdeck.db') });
  });

  it('reads sqlite: and postgres: URLs', () => {
    expect(parseDbUrl('sqlite::memory:', dir)).toEqual({ dialect: 'sqlite', database: ':memory:' });
    expect(parseDbUrl('sqlite:/tmp/x.db', dir)).toEqual({ dialect: 'sqlite', database: '/tmp/x.db' });
    expect(parseDbUrl('sqlite:///tmp/y.db', dir)).toEqual({ dialect: 'sqlite', database: '/tmp/y.db' });
    expect(parseDbUrl('sqlite:rel/z.db', dir)).toEqual({ dialect: 'sqlite', database: path.resolve('rel/z.db') });
    expect(parseDbUrl('postgres://u@h/db', dir)).toEqual({ dialect: 'postgres', url: 'postgres://u@h/db' });
    expect(parseDbUrl('postgresql://u@h/db', dir)).toEqual({ dialect: 'postgres', url: 'postgresql://u@h/db' });
  });

  it('rejects other URLs without echoing a password', () => {
    for (const bad of ['mysql://root:s3cret@h/db', 'sqlite:', 'labdeck.db']) {
      let e: unknown;
      try {
        parseDbUrl(bad, dir);
      } catch (err) {
        e = err;
      }
      expect(e).toBeInstanceOf(LabError);
      expect((e as LabError).code).toBe('invalid_input');
      expect((e as LabError).message).not.toContain('s3cret');
    }
  });

  it('opens an in-memory SQLite store and creates the data directory', async () => {
    const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'labdeck-mem-')), 'nested', 'data');
    const s = await openStore({ url: 'sqlite::memory:', dataDir });
    try {
      expect(fs.existsSync(dataDir)).toBe(true);
      expect(fs.existsSync(path.join(dataDir, SQLITE_FILE))).toBe(false);
      await s.settings.set('k', { v: 1 });
      expect(await s.settings.get('k')).toEqual({ v: 1 });
    } finally {
      await s.close();
      fs.rmSync(path.dirname(path.dirname(dataDir)), { recursive: true, force: true });
    }
  });

  it('reports an unreachable PostgreSQL server as a LabError without the password', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'labdeck-pg-'));
    const e = await labError(openStore({ url: 'postgres://u:s3cret@127.0.0.1:1/none', dataDir }));
    fs.rmSync(dataDir, { recursive: true, force: true });
    expect(e.code).toBe('internal');
    expect(e.message).toContain('127.0.0.1:1');
    expect(e.message).not.toContain('s3cret');
  });
});

describe('group commit of call records', () => {
  it('gives each of many concurrent inserts its own id, in order, and fails only a bad row', async () => {
    {
      const step = (method: string, userId: number | null = null) => ({
        runId: null,
        phase: null,
        iteration: null,
        stepIndex: null,
        instrument: 'pump',
        method,
        args: {},
        output: 1,
        status: 'ok' as const,
        error: null,
        userId,
        startedAt: new Date(),
        endedAt: new Date(),
      });
      const ids = await Promise.all(Array.from({ length: 50 }, (_, i) => store.steps.insert(step(`m${i}`))));
      expect(new Set(ids).size).toBe(50);
      for (const [i, id] of ids.entries()) expect((await store.steps.get(id))?.method).toBe(`m${i}`);
      // a row that breaks a constraint (unknown user) fails alone; its neighbours in the batch are stored
      const results = await Promise.allSettled([store.steps.insert(step('ok1')), store.steps.insert(step('bad', 999_999)), store.steps.insert(step('ok2'))]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      for (const r of results) if (r.status === 'fulfilled') expect(await store.steps.get(r.value)).not.toBeNull();
    }
  });
});

// SQLite is opened without TypeORM (core/store/sqlite.ts); these pin what that runner must keep doing.
describe('opening a SQLite file (whatever LABDECK_TEST_DB says)', () => {
  const fresh = () => fs.mkdtempSync(path.join(os.tmpdir(), 'labdeck-open-'));

  it('migrates one new file opened twice at once in one process: each migration runs and is recorded once', async () => {
    const dataDir = fresh();
    try {
      const [a, b] = await Promise.all([openStore({ dataDir }), openStore({ dataDir })]);
      try {
        await a.users.create({ username: 'from-a', passwordHash: 'h', role: 'admin' });
        expect((await b.users.byName('from-a'))?.username).toBe('from-a');
        const ran = (await dataSourceOf(a).query('SELECT "name" FROM "migrations" ORDER BY "id"')) as { name: string }[];
        expect(ran.map((r) => r.name)).toEqual(MIGRATIONS);
      } finally {
        await a.close();
        await b.close();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  /**
   * Another process takes `file`'s write lock (as a second labdeck starting, or busy, would): for 700 ms, or
   * (`untilTold`) until `release()`.
   */
  const holdWriteLock = async (file: string, untilTold: boolean) => {
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `
      const db = new (require('better-sqlite3'))(${JSON.stringify(file)});
      db.pragma('journal_mode = WAL');
      db.exec('BEGIN IMMEDIATE');
      console.log('locked');
      const done = () => { require('fs').writeFileSync(${JSON.stringify(`${file}.released`)}, ''); db.exec('COMMIT'); db.close(); process.exit(0); };
      if (${untilTold}) process.stdin.once('data', done); else setTimeout(done, 700);`,
      ],
      { cwd: process.cwd(), stdio: ['pipe', 'pipe', 'inherit'] },
    );
    // the holder marks the release just before it commits: read at once after an open, it says whether the lock was let go first
    const state = {
      get released() {
        return fs.existsSync(`${file}.released`);
      },
    };
    const exited = new Promise<void>((resolve) => holder.once('exit', () => resolve()));
    await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
    const release = () => (holder.stdin.end('go\n'), exited);
    return { state, exited, release }; // (an object: a promise returned here would be awaited with the lock)
  };

  /** Open the store of `dataDir` while another process holds its write lock: was the lock let go by then? */
  const openWhileLocked = async (dataDir: string, untilTold: boolean) => {
    const lock = await holdWriteLock(path.join(dataDir, SQLITE_FILE), untilTold);
    const s = await openStore({ dataDir });
    const releasedFirst = lock.state.released;
    try {
      expect(await s.users.count()).toBe(0);
    } finally {
      await s.close();
    }
    await (untilTold ? lock.release() : lock.exited);
    return releasedFirst;
  };

  it('waits for another process holding the write lock, then migrates', async () => {
    const dataDir = fresh();
    try {
      expect(await openWhileLocked(dataDir, false)).toBe(true); // it waited for the lock instead of failing
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('opens a database with nothing to migrate without the write lock (another process may be writing)', async () => {
    const dataDir = fresh();
    try {
      await (await openStore({ dataDir })).close();
      expect(await openWhileLocked(dataDir, true)).toBe(false); // read only: it opened while the lock was held
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('rolls back every migration when one fails, and names the database', async () => {
    const dataDir = fresh();
    const file = path.join(dataDir, SQLITE_FILE);
    try {
      // a table in the way of the first migration: nothing of it, or of the ones after it, may stay
      const db = new Database(file);
      db.exec('CREATE TABLE "users" ("x" integer)');
      db.close();
      const e = await labError(openStore({ dataDir }));
      expect(e.message).toContain(`Cannot open the database ${file}`);
      expect(e.message).toContain('table "users" already exists');
      const after = new Database(file, { readonly: true });
      try {
        expect(after.prepare(`SELECT "name" FROM sqlite_master WHERE "type" = 'table' ORDER BY "name"`).pluck().all()).toEqual(['users']);
      } finally {
        after.close();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('keeps a bounded number of prepared statements, however many different texts it is given', async () => {
    const db = openSqlite(':memory:');
    try {
      const sql = new Sql({ dialect: 'sqlite', db }, 'memory');
      for (let i = 0; i < 500; i++) expect(await sql.one<{ n: number }>(`SELECT ${i} AS "n"`)).toEqual({ n: i });
      expect((sql as unknown as { statements: Map<string, unknown> }).statements.size).toBe(200);
      expect(await sql.one<{ n: number }>('SELECT 0 AS "n"')).toEqual({ n: 0 }); // evicted, prepared again
    } finally {
      db.close();
    }
  });

  it('refuses a migration whose name does not end with its timestamp', async () => {
    const db = openSqlite(':memory:');
    try {
      class Nameless {
        name = 'Nameless';
        async up() {}
        async down() {}
      }
      await expect(migrateSqlite(db, [Nameless])).rejects.toThrow('Migration Nameless: its name must end with a 13-digit timestamp.');
      expect(db.inTransaction).toBe(false);
    } finally {
      db.close();
    }
  });
});
