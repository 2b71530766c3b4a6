/**
 * A manual gp campaign across a kill -9 (issue 31's "done when", on the built `lab serve` as the README
 * installs it): it suggests 4 points, takes 2 results, the server is killed with SIGKILL, started again on
 * the same data folder, takes a third result, and its next suggestions never repeat the one still pending; a
 * staff point's result is in the campaign with who suggested and who measured it.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REACTOR } from '../helpers/workflows.js';
import { labClient, spawnServer } from './server.js';

type Point = { n: number; state: string; parameters: Record<string, number>; suggested_by: string; measured_by: string | null; results: Record<string, number> | null };
const exited = (p: ChildProcess) => (p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', r)));
const key = (p: Point) => `${p.parameters.temperature!.toPrecision(8)},${p.parameters.time!.toPrecision(8)}`;

let dataDir: string;
let proc: ChildProcess | null = null;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'labdeck-manual-kill-'));
});
afterAll(async () => {
  if (proc) {
    proc.kill('SIGKILL');
    await exited(proc);
  }
  await rm(dataDir, { recursive: true, force: true });
});

it('suggests 4, takes 2, survives SIGKILL, takes a third, never suggests the pending point again', async () => {
  let served = await spawnServer(dataDir, ['--no-watch']);
  proc = served.proc;
  const lab = await labClient(served.url.replace(/\/app$/, ''), 'kill');
  const api = lab.api;

  expect((await api('POST', '/workflows', REACTOR)).status).toBe(201);
  const started = await api('POST', '/executions/campaign', {
    workflow: 'react',
    execution: 'manual',
    optimizer_type: 'gp',
    parameters: 'temperature: 20..120, time: 1..30',
    objectives: 'run.yield:max',
    batch_size: 4,
    seed: 3,
  });
  expect(started.status).toBe(200);
  const id = started.body.campaign_id as number;
  const points = async () => (await api('GET', `/executions/campaigns/${id}`)).body.points as Point[];
  expect((await points()).map((p) => p.state)).toEqual(['pending', 'pending', 'pending', 'pending']);
  expect((await api('PUT', `/executions/campaigns/${id}/points/1`, { results: { 'run.yield': 0.41 } })).status).toBe(200);
  expect((await api('PUT', `/executions/campaigns/${id}/points/2`, { results: { 'run.yield': 0.63 } })).status).toBe(200);
  const before = await points();

  // kill -9: nothing is closed cleanly
  proc.kill('SIGKILL');
  await exited(proc);
  served = await spawnServer(dataDir, ['--no-watch']);
  proc = served.proc;
  lab.base = served.url.replace(/\/app$/, '');

  // the same points, as they were; a third result counts
  expect(await points()).toEqual(before);
  const third = await api('PUT', `/executions/campaigns/${id}/points/3`, { results: { 'run.yield': 0.55 } });
  expect(third.body).toMatchObject({ n: 3, state: 'measured', measured_by: 'person:ada' });
  const pending = (await points()).find((p) => p.n === 4)!;
  expect(pending.state).toBe('pending');

  // the next suggestions are new: not the pending point, not any earlier one
  const more = await api('POST', `/executions/campaigns/${id}/suggest`, { n: 3 });
  expect(more.status).toBe(200);
  const keys = (await points()).map(key);
  expect(keys).toHaveLength(7);
  expect(new Set(keys).size).toBe(7);
  expect((more.body.points as Point[]).map(key)).not.toContain(key(pending));

  // a staff point: pending until its result, then measured with who chose and who measured it
  const staff = await api('POST', `/executions/campaigns/${id}/points`, { parameters: { temperature: 77, time: 12 } });
  expect(staff.body).toMatchObject({ n: 8, state: 'pending', suggested_by: 'person:ada', measured_by: null });
  expect((await api('PUT', `/executions/campaigns/${id}/points/8`, { results: { 'run.yield': 0.9 } })).status).toBe(200);
  expect((await points()).find((p) => p.n === 8)).toMatchObject({ state: 'measured', results: { 'run.yield': 0.9 }, suggested_by: 'person:ada', measured_by: 'person:ada' });
}, 90_000);
