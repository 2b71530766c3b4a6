/**
 * `lab run`, in-process through `runWorkflow` with a fake `io`: each test has its own data folder (SQLite)
 * and the demo deck (simulated instruments with ~30 ms calls). The live ink view is rendered to a string
 * for a few states, and driven once through a fake terminal.
 */
import '../helpers/interactive.js'; // before ink: the fake terminal below needs live frames, also under CI
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { renderToString } from 'ink';
import { createElement } from 'react';
import type { CliIO } from '../../cli/io.js';
import { looksLikeFile, runWorkflow, SHARING } from '../../cli/run.js';
import { createRuntime } from '../../core/runtime.js';
import { initialState, keyAction, reduceRun, RunView, type RunViewState } from '../../cli/run-view.js';
import type { RunnerStatus } from '../../core/runner/index.js';
import { openStore } from '../../core/store/index.js';
import { waitFor } from '../helpers/wait.js';

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `labdeck-run-${prefix}-`));
  roots.push(d);
  return d;
}

const plugins = tempDir('plugins'); // an empty plugin folder: first-party plugins and the demo deck only

/** A fake io; `tty` makes both ends terminals (the live view). Output is collected. */
function fakeIO(tty = false) {
  const stdin = Object.assign(new PassThrough(), { isTTY: tty, setRawMode: () => stdin, ref: () => stdin, unref: () => stdin });
  const out: string[] = [];
  const err: string[] = [];
  const stdout = Object.assign(
    new Writable({
      write(chunk, _enc, cb) {
        out.push(String(chunk));
        cb();
      },
    }),
    { isTTY: tty, columns: 100, rows: 40 },
  );
  const io: CliIO = { stdin, stdout, stderr: { write: (s: string) => err.push(s) } };
  return { io, stdin, out: () => out.join(''), err: () => err.join('') };
}

const call = (instrument: string, method: string, extra: Record<string, unknown> = {}) => ({ kind: 'call', instrument, method, ...extra });

/** Dose a volume and weigh it: one parameter with a default, one output. */
const doseAndWeigh = {
  name: 'dose-and-weigh',
  parameters: [{ name: 'volume', type: 'number', default: 1 }],
  outputs: ['mass'],
  prep: [call('balance', 'tare')],
  main: [call('pump', 'dose', { args: { volume_ml: { param: 'volume' } } }), call('balance', 'weigh', { save_as: 'mass' })],
  cleanup: [call('noop', 'ping')],
};

/** The pump is jammed before it doses: the dose step fails (once; a retry succeeds). */
const jammed = { name: 'jammed', main: [call('pump', 'jam'), call('pump', 'dose', { args: { volume_ml: { value: 1 } } })], cleanup: [call('noop', 'ping')] };

/** A long wait: for interrupting. */
const waits = { name: 'waits', main: [{ kind: 'wait', seconds: 30 }], cleanup: [call('noop', 'ping')] };

function writeJson(dir: string, name: string, doc: unknown): string {
  const p = join(dir, name);
  writeFileSync(p, JSON.stringify(doc));
  return p;
}

async function saveWorkflow(dataDir: string, doc: { name: string }) {
  const store = await openStore({ dataDir });
  try {
    await store.workflows.save(doc.name, doc, null);
  } finally {
    await store.close();
  }
}

async function workflowVersions(dataDir: string, name: string) {
  const store = await openStore({ dataDir });
  try {
    return (await store.workflows.get(name))?.version ?? null;
  } finally {
    await store.close();
  }
}

const jsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });

const until = (check: () => boolean, what: string, ms = 15_000) => waitFor(check, what, ms);

describe('lab run', () => {
  test('a saved workflow by name, --repeat, --json: one event per line, ending with the outcome', async () => {
    const dataDir = tempDir('name');
    await saveWorkflow(dataDir, doseAndWeigh);
    const f = fakeIO();
    const code = await runWorkflow('dose-and-weigh', { repeat: '3', json: true, dataDir, plugins }, f.io);
    expect(f.err()).toBe('');
    expect(code).toBe(0);
    const events = jsonLines(f.out());
    expect(events[0]).toMatchObject({ type: 'start', workflow: 'dose-and-weigh', version: 1, file: null, iterations: 3 });
    const iterations = events.filter((e) => e.type === 'iteration');
    expect(iterations.map((e) => e.iteration)).toEqual([0, 1, 2]);
    for (const it of iterations) {
      expect(it.params).toEqual({ volume: 1 });
      expect(typeof (it.outputs as { mass: unknown }).mass).toBe('number');
    }
    const steps = events.filter((e) => e.type === 'step' && e.state === 'ok');
    expect(steps.map((s) => `${s.phase}:${s.instrument}.${s.method}`)).toEqual(['prep:balance.tare', ...Array(3).fill(['main:pump.dose', 'main:balance.weigh']).flat(), 'cleanup:noop.ping']);
    expect(events.some((e) => e.type === 'status')).toBe(true);
    expect(events.some((e) => e.type === 'log')).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'end', status: 'completed', exit_code: 0, iterations: 3, iterations_done: 3, error: null });
  });

  test('a workflow file with a good --config CSV, plain output; the file is saved as a version once', async () => {
    const dir = tempDir('file');
    const dataDir = join(dir, 'data');
    const file = writeJson(dir, 'dose.json', doseAndWeigh);
    const csv = join(dir, 'volumes.csv');
    writeFileSync(csv, 'volume\nnumber\n0.5\n\n2\n');
    const f = fakeIO();
    const code = await runWorkflow(file, { config: csv, dataDir, plugins }, f.io);
    expect(f.err()).toBe('');
    expect(code).toBe(0);
    const lines = f.out().trim().split('\n');
    expect(lines[0]).toBe(`running dose-and-weigh v1 from ${file} (saved as version 1): 2 iteration(s), task 1`);
    expect(lines[1]).toMatch(/^iteration 1\/2: mass=[\d.]+ {2}\(volume=0\.5\)$/);
    expect(lines[2]).toMatch(/^iteration 2\/2: mass=[\d.]+ {2}\(volume=2\)$/);
    expect(lines.at(-1)).toMatch(/^run 1 completed: 2 iteration\(s\) in [\d.]+ s$/);
    expect(await workflowVersions(dataDir, 'dose-and-weigh')).toBe(1);

    // the same file again: the saved version is reused; a changed file becomes version 2
    const again = fakeIO();
    expect(await runWorkflow(file, { repeat: 1, dataDir, plugins }, again.io)).toBe(0);
    expect(again.out()).toContain('running dose-and-weigh v1 from');
    expect(again.out()).not.toContain('saved as');
    writeJson(dir, 'dose.json', { ...doseAndWeigh, description: 'changed' });
    const changed = fakeIO();
    expect(await runWorkflow(file, { repeat: 1, dataDir, plugins }, changed.io)).toBe(0);
    expect(changed.out()).toContain('(saved as version 2)');
    expect(await workflowVersions(dataDir, 'dose-and-weigh')).toBe(2);
  });

  test('a bad --config CSV: exit 2, the line and column named, nothing run', async () => {
    const dir = tempDir('badcsv');
    const dataDir = join(dir, 'data');
    const file = writeJson(dir, 'dose.json', doseAndWeigh);
    const csv = join(dir, 'bad.csv');
    writeFileSync(csv, 'volume\n1\nlots\n');
    const f = fakeIO();
    expect(await runWorkflow(file, { config: csv, dataDir, plugins }, f.io)).toBe(2);
    expect(f.err()).toContain(`lab: ${csv}: `);
    expect(f.err()).toContain('line 3, column volume');
    expect(f.err()).toContain('"lots" is not a number');
    expect(f.out()).toBe('');

    const ragged = join(dir, 'ragged.csv');
    writeFileSync(ragged, 'volume\n1\n2,3\n');
    const g = fakeIO();
    expect(await runWorkflow(file, { config: ragged, dataDir, plugins, json: true }, g.io)).toBe(2);
    expect(g.err()).toContain('line 3');
    expect(jsonLines(g.out())).toEqual([expect.objectContaining({ type: 'error', code: 'invalid_input', exit_code: 2 })]);
  });

  test('bad input: unknown workflow, invalid file (step paths), option mistakes → exit 2', async () => {
    const dir = tempDir('bad');
    const dataDir = join(dir, 'data');
    const unknown = fakeIO();
    expect(await runWorkflow('nope', { repeat: 1, dataDir, plugins }, unknown.io)).toBe(2);
    expect(unknown.err()).toContain('there is no saved workflow "nope"');

    const invalid = writeJson(dir, 'invalid.json', { name: 'invalid', main: [call('laser', 'fire'), call('pump', 'explode')] });
    const inv = fakeIO();
    expect(await runWorkflow(invalid, { dataDir, plugins }, inv.io)).toBe(2);
    expect(inv.err()).toContain('main[0].instrument');
    expect(inv.err()).toContain('main[1].method');
    expect(await workflowVersions(dataDir, 'invalid')).toBeNull(); // an invalid file is not saved

    const file = writeJson(dir, 'dose.json', doseAndWeigh);
    const both = fakeIO();
    expect(await runWorkflow(file, { repeat: 1, config: 'x.csv', dataDir, plugins }, both.io)).toBe(2);
    expect(both.err()).toContain('not both');
    const neither = fakeIO();
    expect(await runWorkflow(file, { dataDir, plugins }, neither.io)).toBe(2);
    expect(neither.err()).toContain('has parameters (volume)');
    const zero = fakeIO();
    expect(await runWorkflow(file, { repeat: '0', dataDir, plugins }, zero.io)).toBe(2);
    expect(zero.err()).toContain('--repeat must be a whole number of iterations, 1 or more (got "0")');
    const words = fakeIO();
    expect(await runWorkflow(file, { repeat: 'abc', dataDir, plugins }, words.io)).toBe(2);
    expect(words.err()).toContain('(got "abc")');
    const missing = fakeIO();
    expect(await runWorkflow(join(dir, 'missing.json'), { dataDir, plugins }, missing.io)).toBe(2);
    expect(missing.err()).toContain('no such file');
  });

  test('a workflow without parameters runs once; a failing step in --json aborts the run → exit 1, cleanup ran', async () => {
    const dir = tempDir('fail');
    const dataDir = join(dir, 'data');
    const f = fakeIO();
    const code = await runWorkflow(writeJson(dir, 'jammed.json', jammed), { json: true, dataDir, plugins }, f.io);
    expect(code).toBe(1);
    const events = jsonLines(f.out());
    expect(events[0]).toMatchObject({ type: 'start', iterations: 1 });
    expect(events).toContainEqual(expect.objectContaining({ type: 'step', state: 'error', method: 'dose', error: expect.stringContaining('pump jammed') }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'note', message: expect.stringContaining('no operator') }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'step', phase: 'cleanup', state: 'ok', method: 'ping' }));
    expect(events.at(-1)).toMatchObject({ type: 'end', status: 'aborted', exit_code: 1 });

    // the abort held the queue; lab run leaves it as it found it, so the next run in this folder starts
    const next = fakeIO();
    expect(await runWorkflow(writeJson(dir, 'dose.json', doseAndWeigh), { repeat: 1, dataDir, plugins }, next.io)).toBe(0);
  });

  test('a pause step without an operator (plain output) aborts the run → exit 1', async () => {
    const dir = tempDir('pause');
    const f = fakeIO();
    const doc = { name: 'asks', main: [{ kind: 'pause', message: 'load the vial' }, call('noop', 'ping')] };
    expect(await runWorkflow(writeJson(dir, 'asks.json', doc), { dataDir: join(dir, 'data'), plugins }, f.io)).toBe(1);
    const lines = f.out().trim().split('\n');
    expect(lines).toContain('the pause step main[0] needs an operator and there is no operator (not a terminal): aborting the run; its cleanup phase runs');
    expect(lines.at(-1)).toMatch(/^run 1 aborted: after 0 of 1 iteration\(s\) in [\d.]+ s: the pause step main\[0\] needs an operator and there was no operator$/);
  });

  test('Ctrl-C (SIGINT) aborts: the cleanup phase runs, exit 1', async () => {
    const dir = tempDir('sigint');
    const signals = new EventEmitter();
    const f = fakeIO();
    const running = runWorkflow(writeJson(dir, 'waits.json', waits), { json: true, dataDir: join(dir, 'data'), plugins }, f.io, { signals });
    await until(() => f.out().includes('"kind":"wait"'), 'the wait step');
    signals.emit('SIGINT');
    expect(await running).toBe(1);
    const events = jsonLines(f.out());
    expect(events).toContainEqual(expect.objectContaining({ type: 'step', phase: 'cleanup', method: 'ping', state: 'ok' }));
    expect(events.at(-1)).toMatchObject({ type: 'end', status: 'aborted', exit_code: 1 });
    expect(signals.listenerCount('SIGINT')).toBe(0);
  });

  test('the queue of the data folder must be empty: another unfinished task → exit 2, nothing run', async () => {
    const dataDir = tempDir('busy');
    await saveWorkflow(dataDir, doseAndWeigh);
    const store = await openStore({ dataDir });
    await store.queue.add({ name: 'someone else', kind: 'workflow', payload: {}, createdBy: null });
    await store.queue.update(1, { status: 'interrupted' });
    await store.close();
    const f = fakeIO();
    expect(await runWorkflow('dose-and-weigh', { repeat: 1, dataDir, plugins }, f.io)).toBe(2);
    expect(f.err()).toContain('#1 "someone else" interrupted');
  });

  test('beside a running lab serve on the same data folder: refused for an instrument it drives, else run; --help and docs/deploy.md say so', async () => {
    const dataDir = tempDir('shared');
    await saveWorkflow(dataDir, doseAndWeigh);
    // a server with the demo deck drives pump and balance
    const server = await createRuntime({ dataDir, watch: false, pluginDirs: [plugins], labHost: { kind: 'serve', name: 'lab serve on the bench' } });
    try {
      const f = fakeIO();
      expect(await runWorkflow('dose-and-weigh', { repeat: 1, dataDir, plugins }, f.io)).toBe(2);
      expect(f.err()).toMatch(/balance, noop, pump are driven by lab serve on the bench, another labdeck on this database/);
    } finally {
      await server.close();
    }
    // a server that drives none of them, running on the same folder: lab run runs its task, the server never takes it
    const other = await createRuntime({ dataDir, deck: false, watch: false, pluginDirs: [plugins], labHost: { kind: 'serve', name: 'lab serve, other deck' } });
    try {
      const f = fakeIO();
      expect(await runWorkflow('dose-and-weigh', { repeat: 2, dataDir, plugins }, f.io)).toBe(0);
      expect(f.out()).toMatch(/run \d+ completed: 2 iteration\(s\)/);
      expect(other.runner.status().busy).toBe(false);
    } finally {
      await other.close();
    }
    // the help says what was just shown, and docs/deploy.md says it in the same words
    const flat = (t: string) => t.replace(/^> /gm, '').replace(/\s+/g, ' ').trim();
    expect(flat(await readFile('docs/deploy.md', 'utf8'))).toContain(flat(SHARING));
    expect(SHARING).toContain('It may share a data folder');
  });

  test('in a terminal: the live view, and the operator retries a failed step with r', async () => {
    const dir = tempDir('tty');
    const f = fakeIO(true);
    const running = runWorkflow(writeJson(dir, 'jammed.json', jammed), { dataDir: join(dir, 'data'), plugins }, f.io);
    await until(() => f.out().includes('r retry the failed step'), 'the failed-step prompt');
    expect(f.out()).toContain('pump jammed');
    f.stdin.write('r');
    expect(await running).toBe(0);
    expect(f.out()).toContain('Run completed');
  });
});

test('WORKFLOW is a file when it has a / \\ or . in it (names cannot)', () => {
  expect(looksLikeFile('dose-and-weigh')).toBe(false);
  expect(looksLikeFile('dose.json')).toBe(true);
  expect(looksLikeFile('wf/dose')).toBe(true);
  expect(looksLikeFile('C:\\wf')).toBe(true);
});

describe('the live view (rendered to a string)', () => {
  const status = (over: Partial<RunnerStatus> = {}): RunnerStatus => ({
    busy: true,
    state: 'running',
    paused: false,
    queue_held: false,
    current_task: { id: 4, name: 'dose × 3', kind: 'workflow', run_id: 7, workflow: 'dose', started_at: '2026-01-01T10:00:00.000Z' },
    progress: { phase: 'main', iteration: 2, iterations: 3, step: 1, steps: 2 },
    failed_step: null,
    waiting: null,
    input: null,
    interrupted: null,
    store_error: null,
    elsewhere: [],
    running: [],
    parallel: 1,
    ...over,
  });
  const base = () => initialState({ workflow: 'dose', version: 2, file: null, iterations: 3, interactive: true, taskId: 4 });
  const view = (s: RunViewState) => renderToString(createElement(RunView, { state: s }), { columns: 120 });

  test('running: progress bar, the current step, the last outputs and the log', () => {
    let s = base();
    s = reduceRun(s, { type: 'run', run_id: 7, task_id: 4, status: 'running' });
    s = reduceRun(s, { type: 'log', run_id: 7, level: 'info', message: 'Started dose v2: 3 iteration(s).', at: '2026-01-01T10:00:00.000Z' });
    s = reduceRun(s, { type: 'iteration', run_id: 7, iteration: 0, params: { volume: 1 }, outputs: { mass: 1.00213 } });
    s = reduceRun(s, { type: 'status', status: status() });
    s = reduceRun(s, { type: 'step', run_id: 7, phase: 'main', iteration: 1, path: 'main[1]', index: 1, state: 'start', kind: 'call', instrument: 'balance', method: 'weigh' });
    const text = view(s);
    expect(text).toContain('dose v2 · task 4 · run 7 · running');
    expect(text).toContain('1/3 iterations (33%)');
    expect(text).toContain('█'.repeat(10) + '░'.repeat(20));
    expect(text).toContain('main · iteration 2/3 · step 2/2  main[1] balance.weigh …');
    expect(text).toContain('#1  mass=1.00213   (volume=1)');
    expect(text).toContain('10:00:00 Started dose v2');
    expect(text).toContain('p pause · n stop after this iteration · a abort the task (cleanup runs) · q quit');
    expect(text).not.toContain('retry');
  });

  test('failed: the step, its error and the keys; without an operator no keys are shown', () => {
    const failed = reduceRun(base(), { type: 'status', status: status({ state: 'failed', failed_step: { phase: 'main', iteration: 1, path: 'main[0]', error: 'pump jammed' } }) });
    const text = view(failed);
    expect(text).toContain('failed');
    expect(text).toContain('Step main[0] failed: pump jammed. Retry it, skip it, or abort the task.');
    expect(text).toContain('failed step waiting for a decision');
    // (the key line is long: ink wraps it at the 120 columns)
    expect(text.replace(/\s*\n\s*/g, ' ')).toContain('r retry the failed step · s skip the failed step · n stop after this iteration · a abort the task (cleanup runs) · q quit');
    expect(text).not.toContain('p pause');
    expect(view({ ...failed, interactive: false })).not.toContain('r retry');
    const quitting = view(reduceRun(failed, { type: 'quitting' }));
    expect(quitting).toContain('Aborting: the cleanup phase runs');
    expect(quitting).toContain('q quit at once');
    expect(quitting).not.toContain('r retry');
  });

  test('a skipped step: its iteration says skipped, and the run ends "completed with 1 skipped step", not green', () => {
    let s = base();
    s = reduceRun(s, { type: 'iteration', run_id: 7, iteration: 0, params: { volume: 1 }, outputs: { mass: 0.5 }, skipped: true });
    s = reduceRun(s, { type: 'run', run_id: 7, task_id: 4, status: 'completed', skipped: 1 });
    const text = view(s);
    expect(text).toContain('#1  skipped (a failed step was skipped: not data)');
    expect(text).not.toContain('mass=0.5');
    expect(text).toContain('Run completed with 1 skipped step');
  });

  test('ended: the outcome replaces the keys', () => {
    const s = reduceRun(base(), { type: 'end', status: 'aborted', error: 'aborted by the operator' });
    const text = view(s);
    expect(text).toContain('Run aborted: aborted by the operator');
    expect(text).not.toContain('q quit');
  });

  test("paused and at a pause step: the state in the web page's words, and the keys that apply", () => {
    const pausing = view(reduceRun(base(), { type: 'status', status: status({ paused: true }) }));
    expect(pausing).toContain('task 4 · pausing after this step');
    expect(pausing).toContain('p resume · n stop after this iteration');
    const paused = view(reduceRun(base(), { type: 'status', status: status({ state: 'paused', paused: true }) }));
    expect(paused).toContain('task 4 · paused');
    const waiting = view(reduceRun(base(), { type: 'status', status: status({ state: 'paused', waiting: { path: 'main[1]', message: 'load the vial' } }) }));
    expect(waiting).toContain('task 4 · waiting at a pause step');
    expect(waiting).toContain('Waiting at a pause step: load the vial. Continue when it is done.');
    expect(waiting).toContain('c continue · n stop after this iteration · a abort the task (cleanup runs) · q quit');
    expect(waiting).not.toContain('p pause');
  });

  test("keys: each does one thing, only when it applies (as the web page's buttons); Ctrl-C quits; nothing after the end", () => {
    const running = { status: status(), outcome: null };
    const failed = { status: status({ state: 'failed' }), outcome: null };
    const waiting = { status: status({ state: 'paused', waiting: { path: 'main[1]', message: 'load' } }), outcome: null };
    const paused = { status: status({ state: 'paused', paused: true }), outcome: null };
    expect(keyAction('r', { ctrl: false }, running)).toBeNull();
    expect(keyAction('s', { ctrl: false }, running)).toBeNull();
    expect(keyAction('r', { ctrl: false }, failed)).toBe('retry');
    expect(keyAction('s', { ctrl: false }, failed)).toBe('skip');
    expect(keyAction('p', { ctrl: false }, failed)).toBeNull(); // a pause never skips a failed step
    expect(keyAction('p', { ctrl: false }, running)).toBe('pause');
    expect(keyAction('p', { ctrl: false }, paused)).toBe('resume');
    expect(keyAction('p', { ctrl: false }, waiting)).toBeNull();
    expect(keyAction('c', { ctrl: false }, waiting)).toBe('continue');
    expect(keyAction('c', { ctrl: false }, running)).toBeNull();
    expect(keyAction('n', { ctrl: false }, { status: status({ state: 'stopping' }), outcome: null })).toBeNull();
    expect(keyAction('n', { ctrl: false }, running)).toBe('stop-iteration');
    expect(keyAction('a', { ctrl: false }, failed)).toBe('abort');
    expect(keyAction('c', { ctrl: true }, running)).toBe('quit');
    expect(keyAction('q', { ctrl: false }, running)).toBe('quit');
    expect(keyAction('q', { ctrl: false }, { ...running, outcome: 'completed' })).toBeNull();
  });
});
