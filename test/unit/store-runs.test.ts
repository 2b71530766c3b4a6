/**
 * Workflows, the durable queue, run records and files in the store, on the dialect chosen by
 * LABDECK_TEST_DB (SQLite by default; `LABDECK_TEST_DB=postgres npm test -- test/unit/store-runs.test.ts`).
 * The last block fills a second store with 100,000 runs and 100,000 steps and prints how long the records
 * list and the step export take (timings are printed, never asserted).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DataSource } from 'typeorm';
import { migrations } from '../../core/store/migrations/index.js';
import { dataSourceOf, openStore, SQLITE_FILE } from '../../core/store/index.js';
import { Init1732300000000 } from '../../core/store/migrations/1732300000000-init.js';
import type { NewStep, QueueTaskRow, Store } from '../../core/store/types.js';
import { testDbUrl, usingPostgres, withTestStore } from '../helpers/db.js';
import { labError } from '../helpers/errors.js';

/** Every migration, by name, in order (one list for both dialects). */
const MIGRATIONS = migrations.map((M) => new M().name);

const dialect = usingPostgres() ? 'postgres' : 'sqlite';

let store: Store;
withTestStore((t) => (store = t.store));

let seq = 0;
const uniq = (s: string) => `${s}-${++seq}`;
const newUser = () => store.users.create({ username: uniq('user'), passwordHash: 'scrypt$x', role: 'operator' });

const T0 = new Date('2024-05-01T08:00:00.250Z');

type NewRun = Parameters<Store['runs']['create']>[0];
function newRun(over: Partial<NewRun> = {}): NewRun {
  return {
    taskId: null,
    name: 'run',
    workflowName: 'wf',
    workflowVersion: 1,
    workflow: { name: 'wf', main: [{ kind: 'wait', seconds: 1 }] },
    parameters: [{ volume: 1.5 }],
    status: 'running',
    userId: null,
    startedAt: T0,
    ...over,
  };
}

function step(runId: number | null, over: Partial<NewStep> = {}): NewStep {
  return {
    runId,
    phase: 'main',
    iteration: 0,
    stepIndex: 0,
    instrument: 'pump',
    method: 'dose',
    args: { volume_ml: 1 },
    output: null,
    status: 'ok',
    error: null,
    userId: null,
    startedAt: T0,
    endedAt: null,
    log: null,
    ...over,
  };
}

describe(`workflows (${dialect})`, () => {
  it('saves versions, returns the latest or a given one, and round-trips the definition', async () => {
    const u = await newUser();
    const def1 = { name: 'dose', parameters: [{ name: 'v', type: 'number', default: 1 }], main: [{ kind: 'wait', seconds: 2 }] };
    const def2 = { ...def1, description: 'ünïcode "quoted"', main: [{ kind: 'repeat', times: 3, steps: [] }] };
    const v1 = await store.workflows.save('dose', def1, u.id, { expectNew: true });
    expect(v1).toEqual({ id: expect.any(Number), name: 'dose', version: 1, definition: def1, createdBy: u.id, createdAt: expect.any(Date), deletedAt: null });
    expect(Math.abs(v1.createdAt.getTime() - Date.now())).toBeLessThan(60_000);
    const v2 = await store.workflows.save('dose', def2, null);
    expect(v2).toMatchObject({ name: 'dose', version: 2, definition: def2, createdBy: null });
    const v3 = await store.workflows.save('dose', def1, u.id);
    expect(v3.version).toBe(3);

    expect(await store.workflows.get('dose')).toEqual(v3);
    expect(await store.workflows.get('dose', 2)).toEqual(v2);
    expect(await store.workflows.get('dose', 1)).toEqual(v1);
    expect(await store.workflows.get('dose', 4)).toBeNull();
    expect(await store.workflows.get('Dose')).toBeNull(); // names are exact
    expect(await store.workflows.get('nope')).toBeNull();
  });

  it('refuses a new workflow whose name exists, naming it', async () => {
    await store.workflows.save('taken', { main: [] }, null, { expectNew: true });
    const e = await labError(store.workflows.save('taken', { main: [1] }, null, { expectNew: true }));
    expect(e.code).toBe('conflict');
    expect(e.message).toContain('"taken"');
    expect(e.details).toEqual([{ field: 'name', message: 'already exists' }]);
    expect(await store.workflows.get('taken')).toMatchObject({ version: 1, definition: { main: [] } });
  });

  it('rejects an empty name and an unknown user', async () => {
    expect((await labError(store.workflows.save('  ', {}, null))).details?.[0]?.field).toBe('name');
    const e = await labError(store.workflows.save(uniq('wf'), {}, 999_999));
    expect(e.code).toBe('not_found');
    expect(e.details?.[0]?.field).toBe('userId');
  });

  it('gives concurrent saves of one name distinct versions', async () => {
    const name = uniq('busy');
    const saved = await Promise.all(Array.from({ length: 8 }, (_, i) => store.workflows.save(name, { i }, null)));
    expect(saved.map((w) => w.version).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('lists the latest version of each name, sorted by name', async () => {
    const names = ['beta', 'Alpha', 'run 10', 'run 2'];
    for (const n of names) await store.workflows.save(n, { v: 1 }, null);
    await store.workflows.save('beta', { v: 2 }, null);
    const mine = (await store.workflows.list()).filter((w) => names.includes(w.name));
    expect(mine.map((w) => [w.name, w.version, w.definition])).toEqual([
      ['Alpha', 1, { v: 1 }],
      ['beta', 2, { v: 2 }],
      ['run 2', 1, { v: 1 }],
      ['run 10', 1, { v: 1 }],
    ]);
  });

  it('deletes every version of a name (kept, marked, for the records), says when there was none, and never reuses a version number', async () => {
    await store.workflows.save('gone', { a: 1 }, null);
    await store.workflows.save('gone', { a: 2 }, null);
    expect(await store.workflows.delete('gone')).toBe(true);
    expect(await store.workflows.get('gone')).toBeNull();
    expect(await store.workflows.first('gone')).toBeNull();
    // a record that ran version 1 still finds the document it ran, marked deleted
    expect(await store.workflows.get('gone', 1)).toMatchObject({ definition: { a: 1 }, deletedAt: expect.any(Date) });
    expect((await store.workflows.list()).some((w) => w.name === 'gone')).toBe(false);
    expect(await store.workflows.delete('gone')).toBe(false);
    // made again, the name may be created as new, and goes on from version 3: v1 and v2 name the old documents
    const again = await store.workflows.save('gone', { b: 1 }, null, { expectNew: true });
    expect(again).toMatchObject({ version: 3, deletedAt: null });
    expect(await store.workflows.first('gone')).toMatchObject({ version: 3 });
    expect((await store.workflows.list()).filter((w) => w.name === 'gone').map((w) => w.version)).toEqual([3]);
    expect((await labError(store.workflows.save('gone', {}, null, { expectNew: true }))).code).toBe('conflict');
  });

  it('keeps a workflow when its author is deleted (created_by becomes null)', async () => {
    const u = await newUser();
    const w = await store.workflows.save(uniq('orphan'), {}, u.id);
    await dataSourceOf(store).query(`DELETE FROM "users" WHERE "id" = ${u.id}`);
    expect((await store.workflows.get(w.name))?.createdBy).toBeNull();
  });
});

describe(`queue (${dialect})`, () => {
  const names = async () => (await store.queue.open()).map((t) => t.name);
  const tasks: Record<string, QueueTaskRow> = {};
  const move = (n: string, d: 'up' | 'down' | 'top' | 'bottom') => store.queue.move(tasks[n]!.id, d);

  beforeAll(async () => {
    for (const t of await store.queue.open()) await store.queue.delete(t.id);
  });

  it('adds tasks at the end, pending, with their JSON payload', async () => {
    const u = await newUser();
    const payload = { workflow: 'dose', config: [{ v: 1 }, { v: 2.5 }], note: null };
    let prev = -Infinity;
    for (const n of ['A', 'B', 'C', 'D', 'E']) {
      const t = await store.queue.add({ name: n, kind: 'workflow', payload: { ...payload, n }, createdBy: u.id });
      expect(t).toEqual({
        id: expect.any(Number),
        name: n,
        kind: 'workflow',
        payload: { ...payload, n },
        status: 'pending',
        position: expect.any(Number),
        runId: null,
        createdBy: u.id,
        createdAt: expect.any(Date),
        startedAt: null,
        endedAt: null,
        hostId: null,
        holdsQueue: false,
      });
      expect(t.position).toBeGreaterThan(prev);
      prev = t.position;
      tasks[n] = t;
    }
    expect(await store.queue.get(tasks.A!.id)).toEqual(tasks.A);
    expect(await store.queue.get(999_999)).toBeNull();
    expect(await names()).toEqual(['A', 'B', 'C', 'D', 'E']);
  });

  it('reorders through a sequence of moves', async () => {
    await move('C', 'up');
    expect(await names()).toEqual(['A', 'C', 'B', 'D', 'E']);
    await move('A', 'up'); // first up: nothing happens
    await move('E', 'down'); // last down: nothing happens
    expect(await names()).toEqual(['A', 'C', 'B', 'D', 'E']);
    await move('A', 'down');
    expect(await names()).toEqual(['C', 'A', 'B', 'D', 'E']);
    await move('D', 'top');
    expect(await names()).toEqual(['D', 'C', 'A', 'B', 'E']);
    await move('C', 'bottom');
    expect(await names()).toEqual(['D', 'A', 'B', 'E', 'C']);

    const before = await store.queue.open();
    await move('D', 'top'); // already first
    await move('C', 'bottom'); // already last
    expect(await store.queue.open()).toEqual(before);

    // Finished tasks leave the queue and are skipped as neighbours; running and interrupted stay in it.
    await store.queue.update(tasks.B!.id, { status: 'done', endedAt: new Date() });
    await store.queue.update(tasks.D!.id, { status: 'running', startedAt: new Date() });
    await store.queue.update(tasks.A!.id, { status: 'interrupted' });
    expect(await names()).toEqual(['D', 'A', 'E', 'C']);
    await move('E', 'up');
    expect(await names()).toEqual(['D', 'E', 'A', 'C']);
    await move('A', 'down');
    expect(await names()).toEqual(['D', 'E', 'C', 'A']);

    // A new task goes to the end of the queue as it now is.
    tasks.F = await store.queue.add({ name: 'F', kind: 'campaign', payload: null, createdBy: null });
    expect(await names()).toEqual(['D', 'E', 'C', 'A', 'F']);
    await move('F', 'top');
    expect(await names()).toEqual(['F', 'D', 'E', 'C', 'A']);
  });

  it('moves correctly between tasks that share a position', async () => {
    const open = await store.queue.open();
    const [c, a] = [open.find((t) => t.name === 'C')!, open.find((t) => t.name === 'A')!];
    await store.queue.update(a.id, { position: c.position }); // a tie, ordered by id
    expect(await names()).toEqual(c.id < a.id ? ['F', 'D', 'E', 'C', 'A'] : ['F', 'D', 'E', 'A', 'C']);
    const [first, second] = c.id < a.id ? ['C', 'A'] : ['A', 'C'];
    await move(second, 'up');
    const after = await store.queue.open();
    expect(after.map((t) => t.name)).toEqual(['F', 'D', 'E', second, first]);
    const positions = after.map((t) => t.position);
    expect(new Set(positions).size).toBe(positions.length);
  });

  it('refuses to move finished or unknown tasks and unknown directions', async () => {
    const e1 = await labError(move('B', 'up'));
    expect(e1.code).toBe('conflict');
    const e2 = await labError(store.queue.move(999_999, 'up'));
    expect(e2.code).toBe('not_found');
    const e3 = await labError(store.queue.move(tasks.A!.id, 'sideways' as 'up'));
    expect(e3.code).toBe('invalid_input');
    expect(e3.details?.[0]?.field).toBe('direction');
  });

  it('updates only the given fields and checks ids, statuses and kinds', async () => {
    const t = await store.queue.add({ name: 'upd', kind: 'workflow', payload: [1, 'x'], createdBy: null });
    const started = new Date('2024-05-01T09:00:00.001Z');
    await store.queue.update(t.id, { name: 'renamed', status: 'running', startedAt: started });
    expect(await store.queue.get(t.id)).toEqual({ ...t, name: 'renamed', status: 'running', startedAt: started });
    await store.queue.update(t.id, {}); // nothing to change
    expect((await labError(store.queue.update(999_999, { status: 'done' }))).code).toBe('not_found');
    expect((await labError(store.queue.update(999_999, {}))).code).toBe('not_found');
    const e = await labError(store.queue.update(t.id, { status: 'finished' as 'done' }));
    expect(e.code).toBe('invalid_input');
    expect(e.details?.[0]?.field).toBe('status');
    const e2 = await labError(store.queue.update(t.id, { runId: 999_999 }));
    expect(e2.code).toBe('not_found');
    expect(e2.details?.[0]?.field).toBe('runId');
    const e3 = await labError(store.queue.add({ name: 'x', kind: 'job' as 'workflow', payload: null, createdBy: null }));
    expect(e3.details?.[0]?.field).toBe('kind');
    const e4 = await labError(store.queue.add({ name: 'x', kind: 'workflow', payload: null, createdBy: 999_999 }));
    expect(e4.code).toBe('not_found');
    expect(e4.details?.[0]?.field).toBe('createdBy');
  });

  it('deletes a task, and says when there was none', async () => {
    const t = await store.queue.add({ name: 'del', kind: 'workflow', payload: {}, createdBy: null });
    expect(await store.queue.delete(t.id)).toBe(true);
    expect(await store.queue.get(t.id)).toBeNull();
    expect(await store.queue.delete(t.id)).toBe(false);
  });
});

describe(`runs (${dialect})`, () => {
  it('creates, reads and updates a run with its JSON snapshot and parameters', async () => {
    const u = await newUser();
    const task = await store.queue.add({ name: 'job', kind: 'workflow', payload: {}, createdBy: u.id });
    const r = await store.runs.create(newRun({ taskId: task.id, userId: u.id, name: 'first' }));
    expect(r).toEqual({ id: expect.any(Number), ...newRun({ taskId: task.id, userId: u.id, name: 'first' }), error: null, endedAt: null, skipped: 0, hostId: null });
    expect(await store.runs.get(r.id)).toEqual(r);
    expect(await store.runs.get(999_999)).toBeNull();

    const ended = new Date('2024-05-01T08:05:00.999Z');
    const params = [{ volume: 1 }, { volume: 2, solvent: 'water' }];
    await store.runs.update(r.id, { status: 'failed', error: 'pump jammed', endedAt: ended, parameters: params });
    expect(await store.runs.get(r.id)).toEqual({ ...r, status: 'failed', error: 'pump jammed', endedAt: ended, parameters: params });
    await store.runs.update(r.id, { error: null });
    expect((await store.runs.get(r.id))?.error).toBeNull();

    expect((await labError(store.runs.update(999_999, { status: 'completed' }))).code).toBe('not_found');
    expect((await labError(store.runs.update(r.id, { status: 'done' as 'completed' }))).details?.[0]?.field).toBe('status');
    const e = await labError(store.runs.create(newRun({ taskId: 999_999 })));
    expect(e.code).toBe('not_found');
    expect(e.details?.[0]?.field).toBe('taskId');
    expect((await labError(store.runs.create(newRun({ userId: 999_999 })))).details?.[0]?.field).toBe('userId');
  });

  it('links a task and its run both ways, and unlinks when either is deleted', async () => {
    const task = await store.queue.add({ name: 'linked', kind: 'workflow', payload: {}, createdBy: null });
    const r = await store.runs.create(newRun({ taskId: task.id }));
    await store.queue.update(task.id, { runId: r.id });
    expect((await store.queue.get(task.id))?.runId).toBe(r.id);
    expect(await store.runs.delete(r.id)).toBe(true);
    expect((await store.queue.get(task.id))?.runId).toBeNull();

    const r2 = await store.runs.create(newRun({ taskId: task.id }));
    expect(await store.queue.delete(task.id)).toBe(true);
    expect((await store.runs.get(r2.id))?.taskId).toBeNull();
  });

  it('lists the runs left running by no host, and interrupts each once', async () => {
    const a = await store.runs.create(newRun({ name: 'crashed-a' }));
    const b = await store.runs.create(newRun({ name: 'crashed-b' }));
    const c = await store.runs.create(newRun({ name: 'finished', status: 'completed' }));
    await store.runs.update(b.id, { status: 'interrupted' });
    const ids = (await store.runs.orphaned()).map((r) => r.id);
    expect(ids).toContain(a.id);
    expect(ids).not.toContain(b.id);
    expect(ids).not.toContain(c.id);
    expect((await store.runs.orphaned()).every((r) => r.status === 'running')).toBe(true);
    expect(await store.runs.interrupt(a.id, 'gone')).toBe(true);
    expect(await store.runs.interrupt(a.id, 'gone again')).toBe(false); // another host got there first
    expect(await store.runs.get(a.id)).toMatchObject({ status: 'interrupted', error: 'gone' });
  });

  it('deletes a run with its phases, log lines and steps, and nothing of other runs', async () => {
    const r = await store.runs.create(newRun({ name: 'doomed' }));
    const keep = await store.runs.create(newRun({ name: 'kept' }));
    for (const run of [r, keep]) {
      await store.phases.create({ runId: run.id, phase: 'prep', iteration: null, params: null, startedAt: T0 });
      await store.logs.add(run.id, 'info', 'started');
      await store.steps.insert(step(run.id));
      await store.steps.insert(step(run.id, { stepIndex: 1 }));
    }
    const direct = await store.steps.insert(step(null));
    const doomedSteps = (await store.runSteps.list(r.id)).map((s) => s.id);
    expect(doomedSteps).toHaveLength(2);

    expect(await store.runs.delete(r.id)).toBe(true);
    expect(await store.runs.get(r.id)).toBeNull();
    expect(await store.phases.list(r.id)).toEqual([]);
    expect(await store.logs.list(r.id)).toEqual([]);
    expect(await store.runSteps.list(r.id)).toEqual([]);
    for (const id of doomedSteps) expect(await store.steps.get(id)).toBeNull();
    // Rows of the other run and direct calls are untouched.
    expect(await store.phases.list(keep.id)).toHaveLength(1);
    expect(await store.logs.list(keep.id)).toHaveLength(1);
    expect(await store.runSteps.list(keep.id)).toHaveLength(2);
    expect(await store.steps.get(direct)).not.toBeNull();
    expect(await store.runs.delete(r.id)).toBe(false);
  });
});

describe(`records list (${dialect})`, () => {
  let ids: number[] = [];

  beforeAll(async () => {
    await dataSourceOf(store).query(`DELETE FROM "runs"`);
    const specs: [string, string][] = [
      ['Titration morning', 'acid-base'],
      ['calibrate', 'Balance-Check'],
      ['TITRATION evening', 'acid-base'],
      ['weigh 50%_done', 'weigh'],
      ['weigh 50 done', 'weigh'],
      ['overnight', 'titration-long'],
      ['plain', 'other'],
    ];
    ids = [];
    for (const [name, workflowName] of specs) ids.push((await store.runs.create(newRun({ name, workflowName }))).id);
  });

  const list = (q: { keyword?: string; page?: number; perPage?: number }) => store.runs.list({ page: 1, perPage: 20, ...q });

  it('pages newest first with the total', async () => {
    const all = await list({});
    expect(all.total).toBe(7);
    expect(all.rows.map((r) => r.id)).toEqual([...ids].reverse());
    expect(all.rows[0]).toEqual(await store.runs.get(ids[6]!));

    const p1 = await list({ perPage: 3, page: 1 });
    const p2 = await list({ perPage: 3, page: 2 });
    const p3 = await list({ perPage: 3, page: 3 });
    const p4 = await list({ perPage: 3, page: 4 });
    expect([p1, p2, p3, p4].map((p) => p.total)).toEqual([7, 7, 7, 7]);
    expect([...p1.rows, ...p2.rows, ...p3.rows].map((r) => r.id)).toEqual([...ids].reverse());
    expect(p3.rows).toHaveLength(1);
    expect(p4.rows).toEqual([]);
  });

  it('matches the run or workflow name, case-insensitively, as a substring', async () => {
    const names = async (keyword: string) => (await list({ keyword })).rows.map((r) => r.name);
    expect(await names('titration')).toEqual(['overnight', 'TITRATION evening', 'Titration morning']);
    expect(await names('TiTrAtIoN')).toEqual(['overnight', 'TITRATION evening', 'Titration morning']);
    expect(await names('balance-')).toEqual(['calibrate']);
    expect(await names('ACID')).toEqual(['TITRATION evening', 'Titration morning']);
    expect((await list({ keyword: 'acid' })).total).toBe(2);
    expect(await names('  plain  ')).toEqual(['plain']); // trimmed
    expect(await names('nothing like it')).toEqual([]);
    expect((await list({ keyword: 'nothing like it' })).total).toBe(0);
    expect((await list({ keyword: '' })).total).toBe(7);
  });

  it('treats % and _ in a keyword literally', async () => {
    expect((await list({ keyword: '50%_' })).rows.map((r) => r.name)).toEqual(['weigh 50%_done']);
    expect((await list({ keyword: '%' })).total).toBe(1);
    expect((await list({ keyword: '_' })).total).toBe(1);
    expect((await list({ keyword: '!' })).total).toBe(0);
  });

  it('pages through keyword matches with a total of all matches', async () => {
    const p1 = await list({ keyword: 'TITRATION', perPage: 2, page: 1 });
    const p2 = await list({ keyword: 'TITRATION', perPage: 2, page: 2 });
    expect([p1.total, p2.total]).toEqual([3, 3]);
    expect([...p1.rows, ...p2.rows].map((r) => r.name)).toEqual(['overnight', 'TITRATION evening', 'Titration morning']);
  });

  it('clamps nonsensical page numbers and sizes', async () => {
    expect((await list({ page: 0, perPage: 2 })).rows.map((r) => r.id)).toEqual([ids[6], ids[5]]);
    expect((await list({ page: -3, perPage: 0 })).rows).toHaveLength(1);
    expect((await list({ page: Number.NaN, perPage: Number.NaN })).rows).toHaveLength(7);
  });
});

describe(`phases and logs (${dialect})`, () => {
  it('creates, updates and lists the phases of a run in order', async () => {
    const r = await store.runs.create(newRun());
    const prep = await store.phases.create({ runId: r.id, phase: 'prep', iteration: null, params: null, startedAt: T0 });
    const params = { volume: 2.5, nested: { list: [1, 'a', null] } };
    const main0 = await store.phases.create({ runId: r.id, phase: 'main', iteration: 0, params, startedAt: T0, status: 'ok' });
    const ended = new Date('2024-05-01T08:01:00.042Z');
    await store.phases.update(prep, { status: 'ok', endedAt: ended, outputs: { mass: 0.98 } });
    const list = await store.phases.list(r.id);
    expect(list).toEqual([
      { id: prep, runId: r.id, phase: 'prep', iteration: null, params: null, outputs: { mass: 0.98 }, status: 'ok', startedAt: T0, endedAt: ended },
      { id: main0, runId: r.id, phase: 'main', iteration: 0, params, outputs: null, status: 'ok', startedAt: T0, endedAt: null },
    ]);
    await store.phases.update(main0, { outputs: [1, 2] });
    expect((await store.phases.list(r.id))[1]).toMatchObject({ outputs: [1, 2], status: 'ok' });

    expect((await labError(store.phases.update(999_999, { status: 'ok' }))).code).toBe('not_found');
    const bad = await labError(store.phases.create({ runId: r.id, phase: 'middle' as 'main', iteration: 0, params: null, startedAt: T0 }));
    expect(bad.details?.[0]?.field).toBe('phase');
    const noRun = await labError(store.phases.create({ runId: 999_999, phase: 'main', iteration: 0, params: null, startedAt: T0 }));
    expect(noRun.code).toBe('not_found');
    expect(noRun.details?.[0]?.field).toBe('runId');
  });

  it('adds and lists log lines in order', async () => {
    const r = await store.runs.create(newRun());
    const at = new Date('2024-05-01T08:00:01.500Z');
    await store.logs.add(r.id, 'info', 'prep started', at);
    await store.logs.add(r.id, 'warn', 'low reagent');
    await store.logs.add(r.id, 'error', 'pump "P1" jammed ✗');
    const lines = await store.logs.list(r.id);
    expect(lines.map((l) => [l.level, l.message])).toEqual([
      ['info', 'prep started'],
      ['warn', 'low reagent'],
      ['error', 'pump "P1" jammed ✗'],
    ]);
    expect(lines[0]).toEqual({ id: expect.any(Number), runId: r.id, at, level: 'info', message: 'prep started' });
    expect(Math.abs(lines[1]!.at.getTime() - Date.now())).toBeLessThan(60_000);
    expect((await labError(store.logs.add(r.id, 'debug' as 'info', 'x'))).details?.[0]?.field).toBe('level');
    expect((await labError(store.logs.add(999_999, 'info', 'x'))).code).toBe('not_found');
  });
});

describe(`run steps (${dialect})`, () => {
  it('lists and iterates a run’s steps in id order, in batches', async () => {
    const r = await store.runs.create(newRun());
    const other = await store.runs.create(newRun());
    const ids: number[] = [];
    for (let i = 0; i < 25; i++) {
      ids.push(await store.steps.insert(step(r.id, { stepIndex: i, output: { i } })));
      if (i % 4 === 0) await store.steps.insert(step(other.id)); // interleaved steps of another run
    }
    const all = await store.runSteps.list(r.id);
    expect(all.map((s) => s.id)).toEqual(ids);
    expect(all[3]).toEqual({ id: ids[3], ...step(r.id, { stepIndex: 3, output: { i: 3 } }) });

    const sizes: number[] = [];
    const seen: number[] = [];
    for await (const batch of store.runSteps.iterate(r.id, 10)) {
      sizes.push(batch.length);
      seen.push(...batch.map((s) => s.id));
    }
    expect(sizes).toEqual([10, 10, 5]);
    expect(seen).toEqual(ids);

    // An exact multiple of the batch size ends without an empty batch; the default batch takes all 25.
    const exact: number[] = [];
    for await (const batch of store.runSteps.iterate(r.id, 5)) exact.push(batch.length);
    expect(exact).toEqual([5, 5, 5, 5, 5]);
    const whole: number[] = [];
    for await (const batch of store.runSteps.iterate(r.id)) whole.push(batch.length);
    expect(whole).toEqual([25]);
    const none: unknown[] = [];
    for await (const batch of store.runSteps.iterate(999_999)) none.push(batch);
    expect(none).toEqual([]);
  });

  it('marks only the running steps of the run in doubt', async () => {
    const r = await store.runs.create(newRun());
    const other = await store.runs.create(newRun());
    const ok = await store.steps.insert(step(r.id, { status: 'ok' }));
    const running = await store.steps.insert(step(r.id, { status: 'running' }));
    const failed = await store.steps.insert(step(r.id, { status: 'error', error: 'x' }));
    const otherRunning = await store.steps.insert(step(other.id, { status: 'running' }));
    expect(await store.runSteps.markInDoubt(r.id)).toBe(1);
    expect((await store.steps.get(running))?.status).toBe('in-doubt');
    expect((await store.steps.get(ok))?.status).toBe('ok');
    expect((await store.steps.get(failed))?.status).toBe('error');
    expect((await store.steps.get(otherRunning))?.status).toBe('running');
    expect(await store.runSteps.markInDoubt(r.id)).toBe(0);
  });
});

describe(`files (${dialect})`, () => {
  it('adds, gets and lists files by kind and workflow, newest first', async () => {
    const u = await newUser();
    const f = { kind: 'config' as const, originalName: 'my config.csv', rows: 3, columns: ['volume', 'temp °C'], size: 1234 };
    const a = await store.files.add({ ...f, storedName: 'cfg-a.csv', workflow: 'dose', createdBy: u.id });
    expect(a).toEqual({ id: expect.any(Number), ...f, storedName: 'cfg-a.csv', workflow: 'dose', createdBy: u.id, createdAt: expect.any(Date) });
    const b = await store.files.add({ ...f, storedName: 'cfg-b.csv', workflow: 'titrate', createdBy: null });
    const c = await store.files.add({ ...f, storedName: 'cfg-c.csv', workflow: 'dose', createdBy: null });
    const h = await store.files.add({ ...f, kind: 'history', storedName: 'hist-a.csv', workflow: null, columns: [], createdBy: null });

    expect(await store.files.get('cfg-a.csv')).toEqual(a);
    expect(await store.files.get('nope.csv')).toBeNull();
    expect((await store.files.list('config')).map((x) => x.id)).toEqual([c.id, b.id, a.id]);
    expect((await store.files.list('config', 'dose')).map((x) => x.id)).toEqual([c.id, a.id]);
    expect(await store.files.list('config', 'unknown')).toEqual([]);
    expect(await store.files.list('history')).toEqual([h]);
  });

  it('refuses a duplicate stored name and an unknown kind', async () => {
    const f = { kind: 'history' as const, originalName: 'x.csv', workflow: null, rows: 0, columns: [], size: 0, createdBy: null };
    await store.files.add({ ...f, storedName: 'dup.csv' });
    const e = await labError(store.files.add({ ...f, storedName: 'dup.csv' }));
    expect(e.code).toBe('conflict');
    expect(e.details?.[0]?.field).toBe('storedName');
    expect((await labError(store.files.add({ ...f, kind: 'data' as 'history', storedName: 'k.csv' }))).details?.[0]?.field).toBe('kind');
  });
});

describe(`schema after the runs migration (${dialect})`, () => {
  it('has run every migration and leaves nothing for TypeORM to change', async () => {
    const ds = dataSourceOf(store);
    const ran = (await ds.query('SELECT "name" FROM "migrations" ORDER BY "id"')) as { name: string }[];
    expect(ran.map((r) => r.name)).toEqual(MIGRATIONS);
    const log = await ds.driver.createSchemaBuilder().log();
    expect(log.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('upgrades a database made before it, keeping the recorded steps', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'labdeck-upgrade-'));
    const db = await testDbUrl();
    try {
      const old = new DataSource(
        db.url ? { type: 'postgres', url: db.url, migrations: [Init1732300000000] } : { type: 'better-sqlite3', database: path.join(dataDir, SQLITE_FILE), migrations: [Init1732300000000] },
      );
      await old.initialize();
      await old.runMigrations();
      await old.query(
        `INSERT INTO "steps" ("run_id", "instrument", "method", "status", "started_at") VALUES (7, 'pump', 'dose', 'running', ` + `${db.url ? `'2024-01-01T00:00:00Z'` : `'2024-01-01 00:00:00.000'`})`,
      );
      await old.destroy();

      const s = await openStore({ url: db.url, dataDir });
      try {
        const ran = (await dataSourceOf(s).query('SELECT "name" FROM "migrations" ORDER BY "id"')) as { name: string }[];
        expect(ran.map((r) => r.name)).toEqual(MIGRATIONS);
        expect((await s.runSteps.list(7)).map((x) => [x.instrument, x.status])).toEqual([['pump', 'running']]);
        expect(await s.runSteps.markInDoubt(7)).toBe(1);
        expect(await dataSourceOf(s).driver.createSchemaBuilder().log()).toMatchObject({ upQueries: [] });
      } finally {
        await s.close();
      }
    } finally {
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe(`100,000 runs and steps (${dialect})`, () => {
  const N = 100_000;
  let big: Store;
  const timings: Record<string, string> = {};

  withTestStore((t) => (big = t.store));
  afterAll(() => {
    console.log(
      `store timings (${dialect}):\n${Object.entries(timings)
        .map(([k, v]) => `  ${k}: ${v}`)
        .join('\n')}`,
    );
  });

  /** First (cold) and median-of-5 (warm) time of a call, in ms. */
  async function time<T>(label: string, fn: () => Promise<T>): Promise<T> {
    let t = performance.now();
    const result = await fn();
    const cold = performance.now() - t;
    const warm: number[] = [];
    for (let i = 0; i < 5; i++) {
      t = performance.now();
      await fn();
      warm.push(performance.now() - t);
    }
    warm.sort((a, b) => a - b);
    timings[label] = `${cold.toFixed(1)} ms cold, ${warm[2]!.toFixed(1)} ms warm`;
    return result;
  }

  it('answers a keyword search at page 500 quickly, with the right rows and total', async () => {
    const ds = dataSourceOf(big);
    // One INSERT … SELECT (a single transaction); every run carries an ~800-byte workflow snapshot.
    // Run n is named "Run n Titration" when n % 10 = 0, else "Run n dose"; its workflow is wf-(n % 50).
    const t = performance.now();
    if (dialect === 'sqlite') {
      await ds.query(
        `WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ${N}) ` +
          `INSERT INTO "runs" ("name", "workflow_name", "workflow_version", "workflow", "parameters", "status", "started_at") ` +
          `SELECT 'Run ' || n || CASE WHEN n % 10 = 0 THEN ' Titration' ELSE ' dose' END, 'wf-' || (n % 50), 1, ` +
          `'{"name":"wf","main":"' || hex(zeroblob(400)) || '"}', '[{"x":1}]', 'completed', '2024-01-01 00:00:00.000' FROM seq`,
      );
    } else {
      await ds.query(
        `INSERT INTO "runs" ("name", "workflow_name", "workflow_version", "workflow", "parameters", "status", "started_at") ` +
          `SELECT 'Run ' || n || CASE WHEN n % 10 = 0 THEN ' Titration' ELSE ' dose' END, 'wf-' || (n % 50), 1, ` +
          `'{"name":"wf","main":"' || repeat('0', 800) || '"}', '[{"x":1}]', 'completed', '2024-01-01T00:00:00Z' ` +
          `FROM generate_series(1, ${N}) AS n`,
      );
      // Steady state of a live database: autovacuum has set the visibility map (index-only scans).
      await ds.query(`VACUUM ANALYZE "runs"`);
    }
    timings[`insert ${N} runs`] = `${(performance.now() - t).toFixed(0)} ms`;

    const page = await time('runs.list keyword "titration", page 500 of 20', () => big.runs.list({ keyword: 'titration', page: 500, perPage: 20 }));
    // Matches are every 10th run; newest first, page 500 holds matches 9,981..10,000: runs 200 down to 10.
    expect(page.total).toBe(N / 10);
    expect(page.rows.map((r) => r.name)).toEqual(Array.from({ length: 20 }, (_, i) => `Run ${200 - 10 * i} Titration`));
    expect(page.rows[0]?.workflow).toMatchObject({ name: 'wf' });

    const wf = await time('runs.list keyword "WF-7" (workflow name), page 1', () => big.runs.list({ keyword: 'WF-7', page: 1, perPage: 20 }));
    expect(wf.total).toBe(N / 50);
    expect(wf.rows[0]?.name).toBe(`Run ${N - 43} dose`); // the newest n with n % 50 = 7
    const none = await time('runs.list keyword with no match', () => big.runs.list({ keyword: 'zzz', page: 1, perPage: 20 }));
    expect(none).toEqual({ rows: [], total: 0 });
    const plain = await time('runs.list no keyword, page 500', () => big.runs.list({ page: 500, perPage: 20 }));
    expect(plain.total).toBe(N);
    expect(plain.rows[0]?.name).toBe(`Run ${N - 9980} Titration`);
    await time('runs.orphaned() over 100k runs', () => big.runs.orphaned());
  });

  it('streams a 100,000-step export in batches with flat memory', async () => {
    const ds = dataSourceOf(big);
    const run = await big.runs.create(newRun());
    const other = await big.runs.create(newRun());
    const cols = `("run_id", "phase", "iteration", "step_index", "instrument", "method", "args", "output", "status", "started_at")`;
    // Steps of two runs interleaved (odd n: ours, even n: the other run's), so ids of one run are not contiguous.
    const t = performance.now();
    const values = (n: string, ts: string) =>
      `CASE WHEN n % 2 = 1 THEN ${run.id} ELSE ${other.id} END, 'main', n / 20, n % 10, 'pump', 'dose', ` + `'{"volume_ml":1.5}', '{"mass_g":0.98,"raw":[1,2,3]}', 'ok', ${ts}`;
    if (dialect === 'sqlite') {
      await ds.query(
        `WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ${2 * N}) ` + `INSERT INTO "steps" ${cols} SELECT ${values('n', `'2024-01-01 00:00:00.000'`)} FROM seq`,
      );
    } else {
      await ds.query(`INSERT INTO "steps" ${cols} SELECT ${values('n', `'2024-01-01T00:00:00Z'`)} FROM generate_series(1, ${2 * N}) AS n`);
      await ds.query(`VACUUM ANALYZE "steps"`);
    }
    timings[`insert ${2 * N} steps`] = `${(performance.now() - t).toFixed(0)} ms`;

    global.gc?.();
    const heap0 = process.memoryUsage().heapUsed;
    let peak = heap0;
    let count = 0;
    let batches = 0;
    let last = 0;
    let ordered = true;
    const t1 = performance.now();
    for await (const batch of big.runSteps.iterate(run.id, 1000)) {
      batches++;
      count += batch.length;
      for (const s of batch) {
        if (s.id <= last || s.runId !== run.id) ordered = false;
        last = s.id;
      }
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
    timings[`runSteps.iterate ${N} steps, batch 1000`] = `${(performance.now() - t1).toFixed(0)} ms, heap peak +${((peak - heap0) / 1e6).toFixed(1)} MB`;
    expect(count).toBe(N);
    expect(batches).toBe(N / 1000);
    expect(ordered).toBe(true);
    await time('runSteps.markInDoubt on a 100k-step run', () => big.runSteps.markInDoubt(run.id));
  });
});
