/**
 * When a call's record is in the database (SQLite, core/store/sql.ts): a step record is begun by a commit of
 * its own before the insert answers, so the call it records is made only once another process could read it
 * (a labdeck killed during the call leaves it); completed records wait for the group commit, and go in the
 * same transaction as the next record begun.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openStore, SQLITE_FILE } from '../../core/store/index.js';
import type { NewStep, Store } from '../../core/store/types.js';

const step = (): NewStep => ({
  runId: null,
  phase: null,
  iteration: null,
  stepIndex: null,
  instrument: 'pump',
  method: 'dose',
  args: { ml: 1 },
  output: null,
  status: 'running',
  error: null,
  userId: null,
  startedAt: new Date(),
  endedAt: null,
});

let dir: string;
let store: Store;
let other: Database.Database;
const statusOf = (id: number) => (other.prepare('SELECT "status" FROM "steps" WHERE "id" = ?').get(id) as { status: string } | undefined)?.status;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'labdeck-commit-'));
  store = await openStore({ dataDir: dir });
  other = new Database(path.join(dir, SQLITE_FILE), { readonly: true });
});
afterAll(async () => {
  other.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('a record begun is committed before the insert answers, in the same turn: another connection reads it at once', async () => {
  const count = () => (other.prepare('SELECT COUNT(*) AS "n" FROM "steps"').get() as { n: number }).n;
  const before = count();
  const begun = store.steps.insert(step());
  expect(count()).toBe(before + 1); // committed before anything else ran (the group commit would wait for the turn's end)
  expect(statusOf(await begun)).toBe('running');
});

it('a completed record waits for the group commit, and is committed with the next record begun', async () => {
  const first = await store.steps.insert(step());
  const done = store.steps.update(first, { status: 'ok', output: 1, endedAt: new Date() });
  expect(statusOf(first)).toBe('running'); // not yet: it waits for this turn of the event loop to end
  const second = await store.steps.insert(step());
  expect([statusOf(first), statusOf(second)]).toEqual(['ok', 'running']); // one commit took both
  await done;
  // an update of a record that is not there still says so
  await expect(store.steps.update(second + 100, { status: 'ok' })).rejects.toMatchObject({ code: 'not_found' });
});
