/**
 * The generated clients (GET /app/instruments/proxy) against a real labdeck on a real port, as a scientist
 * uses them on their first day: download the client with a token, call an instrument, queue a run of a
 * workflow and wait for it, read its record; a call the instrument fails keeps its task id; a step that
 * fails, a retry, an abort, a stop, a timeout and a campaign. The Python client runs in python3; the
 * TypeScript client is transformed by esbuild and imported.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { transform } from 'esbuild';
import { startLab, type TestLab } from './helpers.js';
import { waitFor } from '../helpers/wait.js';

const J = 'application/json';
const exec = promisify(execFile);

/** Dose a volume, then ping: one iteration per row (or repeat). */
const DOSE = {
  name: 'first-day',
  parameters: [{ name: 'volume', type: 'number', default: 0.5 }],
  outputs: ['dosed', 'pong'],
  main: [
    { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } }, save_as: 'dosed' },
    { kind: 'call', instrument: 'noop', method: 'ping', save_as: 'pong' },
  ],
};
/** Jam the pump, then dose: the dose (main[1]) fails once. */
const JAMS = {
  name: 'jams',
  main: [
    { kind: 'call', instrument: 'pump', method: 'jam' },
    { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { value: 1 } }, save_as: 'dosed' },
  ],
  outputs: ['dosed'],
};
/** Takes a while: `seconds` per iteration. */
const SLOW = {
  name: 'slow',
  parameters: [{ name: 'seconds', type: 'number', default: 0.3 }],
  main: [
    { kind: 'wait', seconds: 0.3 },
    { kind: 'call', instrument: 'noop', method: 'ping', save_as: 'pong' },
  ],
  outputs: ['pong'],
};
/** The simulated reactor, for a campaign. */
const REACT = {
  name: 'react',
  parameters: [
    { name: 't', type: 'number', default: 60 },
    { name: 'm', type: 'number', default: 10 },
  ],
  outputs: ['r.yield'],
  main: [{ kind: 'call', instrument: 'reactor', method: 'run', args: { temperature: { param: 't' }, time: { param: 'm' } }, save_as: 'r' }],
};

let lab: TestLab;
let server: Server;
let base: string;
let token: string;
let dir: string;

beforeAll(async () => {
  lab = await startLab();
  for (const wf of [DOSE, JAMS, SLOW, REACT]) await lab.admin.post('/app/workflows').set('Accept', J).send(wf).expect(201);
  token = (await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'notebook' }).expect(201)).body.token;
  server = lab.app.listen(0);
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}/app`;
  dir = await mkdtemp(join(tmpdir(), 'labdeck-clients-'));
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await lab.close();
  await rm(dir, { recursive: true, force: true });
});

/** Leave the runner idle, its queue empty and released, between tests. */
afterEach(async () => {
  const runner = lab.runtime.runner;
  await waitFor(
    async () => {
      const s = runner.status();
      if (!s.busy && !s.queue_held && !s.paused && (await runner.queue()).tasks.length === 0) return true;
      if (s.busy) await runner.abortNextTask().catch(() => undefined);
      else if (s.queue_held || s.paused) await runner.pauseResume();
      return false;
    },
    'the runner to come back to idle',
    5000,
    50,
  ).catch((e) => {
    throw new Error(`${(e as Error).message}: ${JSON.stringify(runner.status())}`);
  });
});

/** Download a client from the running lab, with the token, as a script would. */
async function download(lang: 'python' | 'typescript'): Promise<string> {
  const res = await fetch(`${base}/instruments/proxy?lang=${lang}`, { headers: { Authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return res.text();
}

describe('the Python client', () => {
  const env = { ...process.env, PYTHONDONTWRITEBYTECODE: '1', NO_PROXY: '*', no_proxy: '*' };
  /** Run a script after `lab = Lab(token=...)` (the client's default base URL is the lab it came from); its stdout is JSON. */
  const python = async (script: string) => {
    const prelude = `import json\nimport time\nfrom labdeck_client import Lab, LabError, RunError, WaitTimeout\nlab = Lab(token=${JSON.stringify(token)})\n`;
    const { stdout } = await exec('python3', ['-c', prelude + script], { cwd: dir, env, timeout: 30_000 });
    return JSON.parse(stdout) as unknown;
  };

  beforeAll(async () => {
    await writeFile(join(dir, 'labdeck_client.py'), await download('python'));
  });

  it('queues a repeat run of a workflow, waits for it, and reads its record', async () => {
    const out = (await python(`
task = lab.queue_run("first-day", repeat=3, name="three doses")
record = lab.wait_for_run(task, timeout=20, poll=0.05)
listed = lab.records(keyword="three doses")
print(json.dumps({"task": task, "record": record, "listed": listed, "status": lab.runner_status(), "queue": lab.queue()}))`)) as {
      task: { task_id: number; status: string };
      record: { id: number; name: string; status: string; task_id: number; error: null; phases: { phase: string; outputs: Record<string, unknown> }[]; logs: { message: string }[] };
      listed: { records: { id: number }[]; total: number };
      status: { busy: boolean; state: string };
      queue: { tasks: unknown[] };
    };
    expect(out.task).toEqual({ task_id: expect.any(Number), status: expect.stringMatching(/^(running|queued)$/) });
    expect(out.record).toMatchObject({ name: 'three doses', status: 'completed', task_id: out.task.task_id, error: null, workflow: 'first-day' });
    const mains = out.record.phases.filter((p) => p.phase === 'main');
    expect(mains.map((p) => p.outputs)).toEqual([0, 1, 2].map(() => ({ dosed: 0.5, pong: 'pong' })));
    expect(out.listed.records.map((r) => r.id)).toEqual([out.record.id]);
    expect(out.status).toMatchObject({ busy: false, state: 'idle' });
    expect(out.queue.tasks).toEqual([]);
    // the record is the server's own
    const server = (await lab.admin.get(`/app/executions/records/${out.record.id}`).set('Accept', J).expect(200)).body;
    expect(server.status).toBe('completed');
  });

  it('queues config rows; a bad row is a LabError naming it', async () => {
    const out = (await python(`
record = lab.wait_for_run(lab.queue_run("first-day", [{"volume": 1.5}, {"volume": 2}])["task_id"], poll=0.05)
try:
    lab.queue_run("first-day", [{"volume": "lots"}])
    bad = None
except LabError as e:
    bad = [e.status, e.code, e.details]
try:
    lab.queue_run("no-such-workflow", repeat=1)
    missing = None
except LabError as e:
    missing = [e.status, e.code]
print(json.dumps({"outputs": [p["outputs"]["dosed"] for p in record["phases"] if p["phase"] == "main"], "bad": bad, "missing": missing}))`)) as {
      outputs: number[];
      bad: [number, string, { field: string }[]];
      missing: [number, string];
    };
    expect(out.outputs).toEqual([1.5, 2]);
    expect(out.bad[0]).toBe(400);
    expect(out.bad[2][0].field).toMatch(/volume/);
    expect(out.missing).toEqual([404, 'not_found']);
  });

  it('a call the instrument fails (502) keeps its task id, and its record can be read', async () => {
    const out = (await python(`
lab.pump.jam()
try:
    lab.pump.dose(volume_ml=1)
    print(json.dumps(None))
except LabError as e:
    print(json.dumps({"status": e.status, "code": e.code, "message": e.message, "task_id": e.task_id, "data": e.data, "str": str(e), "call": lab.call_record(e.task_id)}))`)) as {
      status: number;
      code: string;
      message: string;
      task_id: number;
      data: Record<string, unknown>;
      str: string;
      call: { task_id: number; status: string; error: string; instrument: string; method: string };
    };
    expect(out).toMatchObject({ status: 502, code: 'instrument_error', message: expect.stringContaining('pump jammed'), task_id: expect.any(Number) });
    expect(out.data).toMatchObject({ task_id: out.task_id, instrument: 'pump', method: 'dose' });
    expect(out.str).toContain(`(task ${out.task_id})`);
    expect(out.call).toMatchObject({ task_id: out.task_id, status: 'error', instrument: 'pump', method: 'dose', error: expect.stringContaining('pump jammed') });
  });

  it('a failed step raises RunError at once; after a retry the run completes', async () => {
    const out = (await python(`
task = lab.queue_run("jams", repeat=1)
try:
    lab.wait_for_run(task, timeout=20, poll=0.05)
    first = None
except RunError as e:
    first = {"status": e.status, "error": e.error, "task_id": e.task_id, "run_id": e.run_id, "step": e.failed_step, "record": e.record["status"], "str": str(e)}
lab.retry()
record = lab.wait_for_run(task, timeout=20, poll=0.05)
print(json.dumps({"task": task, "first": first, "record": record}))`)) as {
      task: { task_id: number };
      first: { status: string; error: string; task_id: number; run_id: number; step: { path: string }; record: string; str: string };
      record: { id: number; status: string; phases: { phase: string; outputs: Record<string, unknown> }[] };
    };
    expect(out.first).toMatchObject({
      status: 'step_failed',
      error: expect.stringContaining('pump jammed'),
      task_id: out.task.task_id,
      run_id: out.record.id,
      step: { path: 'main[1]' },
      record: 'running',
    });
    expect(out.first.str).toMatch(/^run \d+ \(task \d+\) step failed: .*pump jammed/);
    expect(out.record.status).toBe('completed');
    expect(out.record.phases.find((p) => p.phase === 'main')!.outputs).toEqual({ dosed: 1 });
  });

  it('an aborted run raises RunError with the record; so does a stopped one', async () => {
    const out = (await python(`
task = lab.queue_run("jams", repeat=1)
try:
    lab.wait_for_run(task, poll=0.05)
except RunError as e:
    assert e.status == "step_failed", e.status
lab.abort_next_task()
try:
    lab.wait_for_run(task, timeout=20, poll=0.05)
    aborted = None
except RunError as e:
    aborted = {"status": e.status, "record": e.record["status"], "run_id": e.run_id}
held = lab.queue()["queue_held"]
lab.pause_resume()  # release the held queue
slow = lab.queue_run("slow", repeat=20)
while not lab.runner_status()["busy"]:  # it may be queued a moment before it runs
    time.sleep(0.02)
lab.abort_next_iteration()
try:
    lab.wait_for_run(slow, timeout=20, poll=0.05)
    stopped = None
except RunError as e:
    stopped = {"status": e.status, "record": e.record["status"], "iterations": len([p for p in e.record["phases"] if p["phase"] == "main"])}
print(json.dumps({"aborted": aborted, "held": held, "stopped": stopped}))`)) as {
      aborted: { status: string; record: string; run_id: number };
      held: boolean;
      stopped: { status: string; record: string; iterations: number };
    };
    expect(out.aborted).toMatchObject({ status: 'aborted', record: 'aborted', run_id: expect.any(Number) });
    expect(out.held).toBe(true);
    expect(out.stopped).toMatchObject({ status: 'stopped', record: 'stopped' });
    expect(out.stopped.iterations).toBeLessThan(20);
  });

  it('waiting with wait_for_operator=True goes on through a failed step until the operator decides', async () => {
    const out = (await python(`
import threading, time
task = lab.queue_run("jams", repeat=1)
def operator():
    while lab.runner_status()["state"] != "failed":
        time.sleep(0.05)
    time.sleep(0.2)
    lab.pause_resume()  # skip the failed step
threading.Thread(target=operator).start()
record = lab.wait_for_run(task, timeout=20, poll=0.05, wait_for_operator=True)
print(json.dumps({"status": record["status"], "skipped": record["skipped_steps"]}))`)) as { status: string; skipped: number };
    expect(out).toEqual({ status: 'completed', skipped: 1 });
  });

  it('gives up after its timeout with WaitTimeout; the run goes on', async () => {
    const out = (await python(`
task = lab.queue_run("slow", repeat=3)
try:
    lab.wait_for_run(task, timeout=0.2, poll=0.05)
    timed_out = None
except WaitTimeout as e:
    timed_out = {"task_id": e.task_id, "state": e.state, "is_timeout": isinstance(e, TimeoutError), "str": str(e)}
record = lab.wait_for_run(task["task_id"], timeout=20, poll=0.05)
print(json.dumps({"timed_out": timed_out, "status": record["status"]}))`)) as { timed_out: { task_id: number; state: string; is_timeout: boolean; str: string }; status: string };
    expect(out.timed_out).toMatchObject({ task_id: expect.any(Number), state: 'running', is_timeout: true });
    expect(out.timed_out.str).toContain('the run goes on');
    expect(out.status).toBe('completed');
  });

  it('starts a campaign with JSON and waits for it', async () => {
    const out = (await python(`
task = lab.start_campaign("react", 3, "sobol", [{"name": "t", "type": "range", "bounds": [20, 120]}], "r.yield:max", seed=3, name="first campaign")
record = lab.wait_for_run(task, timeout=20, poll=0.05)
try:
    lab.start_campaign("react", 3, "sobol", "nope: 1..2", "r.yield:max")
    bad = None
except LabError as e:
    bad = [e.status, e.details[0]["field"]]
print(json.dumps({"task": task, "record": record, "bad": bad}))`)) as {
      task: { task_id: number; status: string };
      record: { name: string; status: string; phases: { phase: string; params: { t: number; m: number } }[] };
      bad: [number, string];
    };
    expect(out.record).toMatchObject({ name: 'first campaign', status: 'completed' });
    const mains = out.record.phases.filter((p) => p.phase === 'main');
    expect(mains).toHaveLength(3);
    for (const p of mains) {
      expect(p.params.t).toBeGreaterThanOrEqual(20);
      expect(p.params.m).toBe(10); // not searched: the default
    }
    expect(out.bad).toEqual([400, 'parameters[0].name']);
  });
});

describe('the TypeScript client', () => {
  interface Client {
    createLab(base?: string, token?: string): any; // eslint-disable-line @typescript-eslint/no-explicit-any
    LabError: new (...a: unknown[]) => Error;
    RunError: new (...a: unknown[]) => Error;
    WaitTimeoutError: new (...a: unknown[]) => Error;
  }
  let mod: Client;
  beforeAll(async () => {
    const js = (await transform(await download('typescript'), { loader: 'ts', format: 'esm' })).code;
    const file = join(dir, 'labdeck-client.mjs');
    await writeFile(file, js);
    mod = (await import(pathToFileURL(file).href)) as Client;
  });

  it('queues a run, waits for it, reads its record; a failed call keeps its task id', async () => {
    const lab = mod.createLab(undefined, token); // the default base URL is the lab it came from
    const task = await lab.queueRun({ workflow: 'first-day', config: [{ volume: 0.25 }, { volume: 0.75 }] });
    const record = await lab.waitForRun(task, { timeoutMs: 20_000, pollMs: 50 });
    expect(record).toMatchObject({ status: 'completed', task_id: task.task_id, workflow: 'first-day' });
    expect(record.phases.filter((p: { phase: string }) => p.phase === 'main').map((p: { outputs: { dosed: number } }) => p.outputs.dosed)).toEqual([0.25, 0.75]);
    expect((await lab.records({ keyword: 'first-day', per_page: 1 })).records[0].id).toBe(record.id);
    expect((await lab.record(record.id)).id).toBe(record.id);
    expect(await lab.runnerStatus()).toMatchObject({ busy: false, state: 'idle' });

    await lab.pump.jam();
    const err = await lab.pump.dose({ volume_ml: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(mod.LabError);
    expect(err).toMatchObject({ status: 502, code: 'instrument_error', taskId: expect.any(Number), data: { instrument: 'pump', method: 'dose' } });
    const call = await lab.callRecord((err as { taskId: number }).taskId);
    expect(call).toMatchObject({ status: 'error', method: 'dose', error: expect.stringContaining('pump jammed') });
  });

  it('rejects with RunError for a failed step and an aborted run, with WaitTimeoutError after its timeout', async () => {
    const lab = mod.createLab(base, token);
    const task = await lab.queueRun({ workflow: 'jams', repeat: 1 });
    const failed = await lab.waitForRun(task.task_id, { pollMs: 50 }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(mod.RunError);
    expect(failed).toMatchObject({ status: 'step_failed', taskId: task.task_id, failedStep: { path: 'main[1]' }, error: expect.stringContaining('pump jammed') });
    await lab.abortNextTask();
    const aborted = await lab.waitForRun(task, { timeoutMs: 20_000, pollMs: 50 }).catch((e: unknown) => e);
    expect(aborted).toBeInstanceOf(mod.RunError);
    expect(aborted).toMatchObject({ status: 'aborted', record: { status: 'aborted' }, runId: expect.any(Number) });
    expect((await lab.queue()).queue_held).toBe(true);
    await lab.pauseResume();

    const slow = await lab.queueRun({ workflow: 'slow', repeat: 2 });
    const late = await lab.waitForRun(slow, { timeoutMs: 100, pollMs: 20 }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(mod.WaitTimeoutError);
    expect(late).toMatchObject({ taskId: slow.task_id, state: 'running' });
    expect((await lab.waitForRun(slow, { pollMs: 50 })).status).toBe('completed');

    const campaign = await lab.startCampaign({ workflow: 'react', repeat: 2, optimizer_type: 'random', parameters: 'm: 1..60', objectives: [{ name: 'r.yield', minimize: false }], seed: 1 });
    expect((await lab.waitForRun(campaign, { timeoutMs: 20_000, pollMs: 50 })).status).toBe('completed');
  });
});
