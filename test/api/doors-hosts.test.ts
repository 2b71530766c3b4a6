/**
 * A run control through any door goes to the labdeck that runs the task (issue 27, docs/architecture.md):
 * two labdecks on one database, B driving the demo deck and running the task, A driving nothing. An ivoryOS
 * pause, resume and abort asked on A act on B's task, as /app's do on A, and leave the same audit line
 * (`via: ivoryos` apart); so does an ivoryOS call to B's instrument (made and recorded by B). PostgreSQL
 * carries the requests between them; on SQLite (one PC, nothing relayed) each door acts on A alike.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp, type App } from '../../server/app.js';
import { createRuntime, type Runtime } from '../../core/runtime.js';
import { testDbUrl, usingPostgres } from '../helpers/db.js';
import { PASSWORD, signupAndLogin, until } from './helpers.js';

const J = 'application/json';
/** A task that stays running until it is aborted: one long wait (it uses the pump, which only B drives). */
const LONG = {
  name: 'long-b',
  main: [
    { kind: 'call', instrument: 'pump', method: 'status', args: {} },
    { kind: 'wait', seconds: 30 },
  ],
};

let dataDir: string;
let db: Awaited<ReturnType<typeof testDbUrl>>;
let a: Runtime;
let b: Runtime;
let app: App;
let admin: ReturnType<typeof request.agent>;
let ivoryos: ReturnType<typeof request.agent>;
let adaId: number;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'labdeck-doors-'));
  db = await testDbUrl();
  const common = { dataDir, db: db.url, watch: false, pluginDirs: [] };
  b = await createRuntime({ ...common, labHost: { kind: 'serve', name: 'lab serve on pc-b', leaseMs: 2000 } });
  a = await createRuntime({ ...common, deck: false, labHost: { kind: 'serve', name: 'lab serve on pc-a', leaseMs: 2000 } });
  app = await createApp(a);
  admin = await signupAndLogin(app, 'ada');
  adaId = (await a.store.users.byName('ada'))!.id;
  ivoryos = request.agent(app);
  await ivoryos.post('/ivoryos/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).expect(302);
  await until(async () => a.runner.catalogue.list!().some((i) => i.name === 'pump'));
  await admin.post('/app/workflows').set('Accept', J).send(LONG).expect(201);
}, 30_000);
afterAll(async () => {
  (app.locals.sessionStore as { close(): void }).close();
  await a.close();
  await b.close();
  await db.drop();
  await rm(dataDir, { recursive: true, force: true });
});

/** Queue LONG through A's /app; B runs it (A drives nothing); A sees it running on B. */
async function runningOnB(): Promise<number> {
  const { task_id } = (await admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'long-b', repeat: 1 }).expect(200)).body;
  await until(async () => b.runner.status().current_task?.id === task_id && b.runner.status().state === 'running');
  await until(async () => a.runner.status().elsewhere.some((t) => t.task_id === task_id));
  return task_id;
}

/** The latest audit line of `action` (the database both share), `via` apart. */
async function lastLine(action: string) {
  const row = (await a.store.audit.list(50)).find((x) => x.action === action);
  expect(row).toBeDefined();
  const { via, ...detail } = row!.detail as Record<string, unknown>;
  return { line: { userId: row!.userId, action: row!.action, detail }, via };
}

if (usingPostgres())
  describe('PostgreSQL: a control on A of a task B runs is done on B', () => {
    it("an ivoryOS pause on A pauses B's task and leaves /app's audit line (via ivoryos); resume and abort too", async () => {
      const task = await runningOnB();
      expect(a.runner.status().busy).toBe(false); // A runs nothing itself

      // /app's pause-resume on A, for the line to compare with
      await admin.post('/app/executions/pause-resume').set('Accept', J).send({}).expect(200);
      expect(b.runner.status()).toMatchObject({ paused: true, current_task: { id: task } });
      const app1 = await lastLine('runner.pause-resume');
      expect(app1.via).toBeUndefined();
      await admin.post('/app/executions/resume').set('Accept', J).send({}).expect(200);
      expect(b.runner.status().paused).toBe(false);

      // the same through ivoryOS on A: B's task pauses, and the same line is written
      const paused = await ivoryos.post('/ivoryos/executions/pause-resume').set('Accept', '*/*').expect(200);
      expect(paused.body).toMatchObject({ status: 'ok', pause_status: 'Paused' });
      expect(b.runner.status()).toMatchObject({ paused: true, current_task: { id: task } });
      const ivory = await lastLine('runner.pause-resume');
      expect(ivory.via).toBe('ivoryos');
      expect(ivory.line).toEqual(app1.line);
      expect(ivory.line).toMatchObject({ userId: adaId });

      // and back: ivoryOS's one pause button resumes it there
      expect((await ivoryos.post('/ivoryos/executions/pause-resume').set('Accept', '*/*').expect(200)).body.pause_status).toBe('Resumed');
      expect(b.runner.status().paused).toBe(false);

      // ivoryOS's abort on A aborts B's task: cleanup runs there, it is recorded aborted, B's queue is held
      const abort = await ivoryos.post('/ivoryos/executions/abort/next-task').set('Accept', '*/*').expect(200);
      expect(abort.body.message).toContain('queue is held');
      await until(async () => (await a.store.queue.get(task))?.status === 'aborted');
      const aborted = await lastLine('runner.abort.next-task');
      expect(aborted).toEqual({ line: { userId: adaId, action: 'runner.abort.next-task', detail: { status: expect.any(String) } }, via: 'ivoryos' });
      await until(async () => !b.runner.status().busy);
      await b.runner.release();
    }, 30_000);

    it("an ivoryOS call on A to B's instrument is made and recorded by B, as /app's is", async () => {
      const snapshot = (await ivoryos.get('/ivoryos/instruments').set('Accept', '*/*').expect(200)).body;
      expect(Object.keys(snapshot)).toContain('deck.pump');
      const before = (await a.store.steps.recent('pump', 100)).length;
      const res = await ivoryos.post('/ivoryos/instruments/deck.pump').set('Accept', '*/*').send({ hidden_name: 'dose', hidden_wait: true, volume_ml: '1.5' }).expect(200);
      expect(res.body).toMatchObject({ success: true, task_id: expect.any(Number) });
      expect(await a.store.steps.get(res.body.task_id)).toMatchObject({ instrument: 'pump', method: 'dose', args: { volume_ml: 1.5 }, status: 'ok', userId: adaId });
      expect((await a.store.steps.recent('pump', 100)).length).toBe(before + 1); // once, by B
      // a call answered before it ends (hidden_wait false) goes there too
      const early = await ivoryos.post('/ivoryos/instruments/deck.pump').set('Accept', '*/*').send({ hidden_name: 'status', hidden_wait: false }).expect(200);
      expect(early.body).toMatchObject({ status: 'task started', task_id: expect.any(Number) });
      await until(async () => (await a.store.steps.get(early.body.task_id))?.status === 'ok');
    }, 20_000);
  });

if (!usingPostgres())
  describe('SQLite: nothing is relayed', () => {
    it("an ivoryOS pause-resume on A does what /app's does there (A's own pause flag; B's task runs on) and leaves the same line", async () => {
      const task = await runningOnB();
      const lines = [];
      for (const [door, toggle] of [
        ['app', () => admin.post('/app/executions/pause-resume').set('Accept', J).send({})],
        ['ivoryos', () => ivoryos.post('/ivoryos/executions/pause-resume').set('Accept', '*/*')],
      ] as const) {
        await toggle().expect(200);
        expect(a.runner.status()).toMatchObject({ paused: true, busy: false });
        expect(b.runner.status()).toMatchObject({ paused: false, current_task: { id: task } });
        const { line, via } = await lastLine('runner.pause-resume');
        expect(via).toBe(door === 'app' ? undefined : door);
        lines.push(line);
        await toggle().expect(200);
        expect(a.runner.status()).toMatchObject({ paused: false, queue_held: false });
      }
      expect(lines[1]).toEqual(lines[0]);
      expect(lines[0]).toMatchObject({ userId: adaId });
      await b.runner.abortNextTask(task);
      await until(async () => (await a.store.queue.get(task))?.status === 'aborted' && !b.runner.status().busy);
      await b.runner.release();
    }, 30_000);
  });
