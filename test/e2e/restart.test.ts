/**
 * The restart test (issue 3): a real `lab serve` with a deck whose `slow` instrument takes seconds, one task
 * killed with SIGKILL in the middle of that call and one more queued behind it; the server is started again
 * on the same data folder. Nothing may be lost: the queued task is still there, the cut-off run is marked
 * `interrupted` with its in-flight step in-doubt and every earlier step recorded, and the operator resumes it
 * through the HTTP API to completion. Each slow call uses a tip (issue 32): the one killed mid-call leaves its
 * tip in doubt (not counted, not forgotten) until a person settles it; the re-run call counts its own.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type StepRow } from '../../core/store/index.js';
import { labClient, spawnServer } from './server.js';
import { installedFile } from './installed.js';
import { waitForValue } from '../helpers/wait.js';

const deck = installedFile('test/fixtures/runner/deck.ts');

interface Server {
  base: string;
  proc: ChildProcess;
}

/** `lab serve` with the fixture deck on a free port over `dataDir`; resolves once it says it is ready. */
async function serve(dataDir: string): Promise<Server> {
  const { url, proc } = await spawnServer(dataDir, ['--deck', deck, '--no-watch']);
  return { base: url.replace(/\/app$/, ''), proc };
}

/** Each step of a run as `phase<iteration>[index] method status`, in order. */
const trail = (steps: StepRow[]) => steps.map((s) => `${s.phase}${s.iteration ?? ''}[${s.stepIndex}] ${s.method} ${s.status}`);

const exited = (p: ChildProcess) => (p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', r)));

/** The workflow: prep saves `base`; each iteration counts, works for `ms`, counts by `base`. */
const LONG = {
  name: 'long',
  parameters: [
    { name: 'x', type: 'number', default: 1 },
    { name: 'ms', type: 'number', default: 10 },
  ],
  outputs: ['a', 'w', 'b'],
  prep: [{ kind: 'call', instrument: 'counter', method: 'inc', args: { by: { value: 10 } }, save_as: 'base' }],
  main: [
    { kind: 'call', instrument: 'counter', method: 'inc', args: { by: { param: 'x' } }, save_as: 'a' },
    { kind: 'call', instrument: 'slow', method: 'work', args: { ms: { param: 'ms' } }, save_as: 'w' },
    { kind: 'call', instrument: 'counter', method: 'inc', args: { by: { var: 'base' } }, save_as: 'b' },
  ],
  cleanup: [{ kind: 'call', instrument: 'counter', method: 'read', save_as: 'end' }],
};
const QUICK = { name: 'quick', main: [{ kind: 'call', instrument: 'counter', method: 'read' }] };

/** The in-flight call lasts this long: long enough to be killed in, short enough to be re-run by the test. */
const SLOW_MS = 2500;

describe('a server killed mid-run', () => {
  let dataDir: string;
  let server: Server | null = null;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'labdeck-restart-'));
  });
  afterAll(async () => {
    if (server) {
      server.proc.kill('SIGKILL');
      await exited(server.proc);
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it('loses nothing, and the operator resumes the run to completion', async () => {
    server = await serve(dataDir);
    // an account and an API token (both live in the database, so they survive the restart)
    const lab = await labClient(server.base, 'restart');
    const { api, auth } = lab;

    for (const wf of [LONG, QUICK]) expect((await api('POST', '/workflows', wf)).status).toBe(201);
    // each slow call uses a tip (issue 32): the call killed mid-way leaves its tip in doubt, for a person
    expect((await api('PUT', '/resources/consumption', [{ target: 'slow', method: 'work', resource: 'tips', amount: 1 }])).status).toBe(200);
    expect((await api('POST', '/resources', { name: 'tips', kind: 'consumable', quantity: 10 })).status).toBe(201);

    // watch the live events for the slow call of iteration 1, then queue the long task and one more
    const controller = new AbortController();
    const events = await fetch(`${lab.base}/app/executions/events`, { headers: auth, signal: controller.signal });
    const reader = events.body!.getReader();
    const first = await api('POST', '/executions/config', {
      workflow: 'long',
      config: [
        { x: 1, ms: 10 },
        { x: 2, ms: SLOW_MS },
      ],
    });
    expect(first.status).toBe(200);
    const second = await api('POST', '/executions/config', { workflow: 'quick', repeat: 1 });
    expect(second.status).toBe(200);
    const longId: number = first.body.task_id;
    const quickId: number = second.body.task_id;
    let seen = '';
    const decoder = new TextDecoder();
    while (
      !/"state":"start"[^\n]*"method":"work"/.test(
        seen
          .split('\n')
          .filter((l) => l.includes('"iteration":1'))
          .join('\n'),
      )
    ) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the event stream ended:\n${seen}`);
      seen += decoder.decode(value, { stream: true });
    }
    controller.abort();

    // kill -9 in the middle of the slow call
    server.proc.kill('SIGKILL');
    await exited(server.proc);
    server = null;

    // what the database holds right after the kill: the run and its in-flight step still `running`
    const store = await openStore({ dataDir });
    let runId: number;
    try {
      const task = (await store.queue.get(longId))!;
      expect(task.status).toBe('running');
      runId = task.runId!;
      const steps = await store.runSteps.list(runId);
      expect(trail(steps)).toEqual(['prep[0] inc ok', 'main0[0] inc ok', 'main0[1] work ok', 'main0[2] inc ok', 'main1[0] inc ok', 'main1[1] work running']);
    } finally {
      await store.close();
    }

    // start again on the same data folder
    server = await serve(dataDir);
    lab.base = server.base;
    const status = (await api('GET', '/executions/status')).body;
    expect(status).toMatchObject({
      busy: false,
      queue_held: true,
      interrupted: { task_id: longId, run_id: runId, step: { phase: 'main', iteration: 1, index: 1, instrument: 'slow', method: 'work' } },
    });
    const queue = (await api('GET', '/executions/queue')).body;
    expect(queue.tasks.map((t: { id: number; status: string }) => [t.id, t.status])).toEqual([
      [longId, 'interrupted'],
      [quickId, 'pending'],
    ]);
    expect(queue.queue_held).toBe(true);
    // the tip of the call that was cut: neither counted nor forgotten, in doubt until a person settles it
    const tips = (await api('GET', '/resources/tips')).body;
    expect(tips.resource).toMatchObject({ quantity: 9, in_doubt: 1 });
    const doubt = (await api('GET', '/resources?format=json')).body.in_doubt.filter((m: { resource: string }) => m.resource === 'tips');
    expect(doubt).toEqual([expect.objectContaining({ resource: 'tips', status: 'in-doubt', run_id: runId, delta: -1 })]);
    expect((await api('POST', `/resources/moves/${doubt[0].id}/settle`, { used: false })).status).toBe(200);
    expect((await api('GET', '/resources/tips')).body.resource).toMatchObject({ quantity: 9, in_doubt: 0 });

    // the operator re-runs the in-doubt step; the run completes and the queue goes on
    expect((await api('POST', '/executions/retry')).status).toBe(200);
    await waitForValue(
      async () => (await api('GET', '/executions/queue')).body,
      (q) => q.tasks.length === 0,
      'the queue to finish',
      20_000,
      50,
    );
    expect((await api('GET', `/executions/queue/task/${longId}`)).body.status).toBe('done');
    expect((await api('GET', `/executions/queue/task/${quickId}`)).body.status).toBe('done');
    expect((await api('GET', '/executions/status')).body).toMatchObject({ busy: false, queue_held: false, interrupted: null });
    // the re-run call used its own tip
    expect((await api('GET', '/resources/tips')).body.resource).toMatchObject({ quantity: 8, in_doubt: 0 });

    // stop cleanly, then read every record
    server.proc.kill('SIGTERM');
    await exited(server.proc);
    server = null;
    const after = await openStore({ dataDir });
    try {
      const run = (await after.runs.get(runId))!;
      expect(run).toMatchObject({ status: 'completed', error: null });
      const steps = await after.runSteps.list(runId);
      expect(trail(steps)).toEqual([
        'prep[0] inc ok',
        'main0[0] inc ok',
        'main0[1] work ok',
        'main0[2] inc ok',
        'main1[0] inc ok',
        'main1[1] work in-doubt',
        'main1[1] work ok',
        'main1[2] inc ok',
        'cleanup[0] read ok',
      ]);
      // the restored variable `base` (10, from prep before the kill) fed the step after the in-doubt one
      expect(steps[7].args).toEqual({ by: 10 });
      const phases = await after.phases.list(runId);
      expect(phases.map((p) => `${p.phase}${p.iteration ?? ''}:${p.status}`)).toEqual(['prep:ok', 'main0:ok', 'main1:ok', 'cleanup:ok']);
      expect(phases[2].outputs).toEqual({ a: steps[4].output, w: SLOW_MS, b: steps[7].output });
      const log = (await after.logs.list(runId)).map((l) => l.message);
      expect(log).toEqual(expect.arrayContaining([expect.stringContaining('Interrupted'), expect.stringContaining('Resuming'), 'Run completed.']));
    } finally {
      await after.close();
    }
  });
});
