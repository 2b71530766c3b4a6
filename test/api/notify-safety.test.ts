/**
 * safety_blocked (docs/notifications.md) through a whole labdeck: the safety guard refusing a direct call
 * opens one alert per instrument and method, resolved by the next call of it the guard lets through; a
 * blocked step of a run opens safety_blocked (not step_failed), resolved when it is retried or skipped; a
 * safety file that does not validate is one alert, resolved by the first call let through once it is fixed.
 * Each reaches a real webhook receiver on loopback, with the link.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLab, until, type TestLab } from './helpers.js';
import { startHttpSink, type HttpSink } from '../helpers/sinks.js';

const J = 'application/json';
const DECK = new URL('../fixtures/safety/deck.ts', import.meta.url).pathname;
const FILE = {
  format: 'ivoryos-safety/1',
  enabled: true,
  limits: [{ target: 'heater', method: 'set_temperature', param: 'setpoint_c', min: 0, max: 120 }],
  rules: [{ id: 'door', when: { target: 'heater', method: 'set_temperature' }, require: [{ left: { state: 'door' }, op: '==', right: { value: 'closed' } }] }],
  states: {
    door: {
      label: 'Enclosure door',
      values: ['open', 'closed'],
      set_by: [
        { target: 'door', method: 'open_door', value: 'open' },
        { target: 'door', method: 'close_door', value: 'closed' },
      ],
    },
  },
};

type Body = { event: string; state: string; id: string; run_id: number | null; step: string | null; url: string | null; message: string; resolution?: string; problems?: unknown[] };

let sink: HttpSink;
const of = (event: string): Body[] => sink.received.map((r) => r.json as Body).filter((b) => b.event === event);

async function labWithHook(opts: Parameters<typeof startLab>[0] = {}): Promise<TestLab> {
  const lab = await startLab({ deck: DECK, ...opts });
  await lab.admin
    .put('/app/notifications')
    .set('Accept', J)
    .send({ base_url: 'http://lab.example:8000', channels: [{ name: 'hook', kind: 'webhook', url: `${sink.url}/hook`, rate_per_minute: 600 }] })
    .expect(200);
  return lab;
}

beforeAll(async () => {
  sink = await startHttpSink();
});
afterAll(() => sink.close());

describe('safety_blocked', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await labWithHook();
    await lab.admin.put('/app/safety').set('Accept', J).send(FILE).expect(200);
    await lab.admin.post('/app/instruments/door').set('Accept', J).send({ method: 'close_door', args: {} }).expect(200);
  }, 30_000);
  afterAll(() => lab?.close());
  const call = (method: string, args: Record<string, unknown> = {}, instrument = 'heater') => lab.admin.post(`/app/instruments/${instrument}`).set('Accept', J).send({ method, args });
  const done = (taskId: number) => until(async () => (await lab.runtime.store.queue.get(taskId))!.status === 'done');

  it('a direct call refused: one alert per method (a second refusal adds none); the next call let through resolves it', async () => {
    const from = sink.received.length;
    await call('set_temperature', { setpoint_c: 150 }).expect(409);
    await until(async () => of('safety_blocked').length === 1);
    const open = of('safety_blocked')[0]!;
    expect(open).toMatchObject({
      state: 'open',
      step: 'heater.set_temperature',
      run_id: null,
      url: 'http://lab.example:8000/app/safety',
      message: expect.stringContaining('setpoint_c = 150 is above the maximum of 120'),
    });
    expect(open.problems).toEqual([expect.objectContaining({ field: 'setpoint_c', value: 150 })]);
    await call('set_temperature', { setpoint_c: 160 }).expect(409);
    // another method's call let through resolves nothing
    await call('read_temperature').expect(200);
    expect((await lab.runtime.store.outbox.open()).filter((r) => r.event === 'safety_blocked')).toHaveLength(1);
    await call('set_temperature', { setpoint_c: 40 }).expect(200);
    await until(async () => of('safety_blocked').length === 2);
    expect(of('safety_blocked')[1]).toMatchObject({ state: 'resolved', id: open.id, resolution: 'a call of heater.set_temperature was let through' });
    expect(sink.received.slice(from).map((r) => (r.json as Body).event)).toEqual(['safety_blocked', 'safety_blocked']);
  });

  it('a blocked step of a run: safety_blocked (not step_failed) with the run; resolved by the retry once it is safe, or by the skip', async () => {
    await lab.admin
      .post('/app/workflows')
      .set('Accept', J)
      .send({ name: 'heat', parameters: [{ name: 't', type: 'number', default: 30 }], main: [{ kind: 'call', instrument: 'heater', method: 'set_temperature', args: { setpoint_c: { param: 't' } } }] })
      .expect(201);
    const before = of('safety_blocked').length;
    await call('open_door', {}, 'door').expect(200);
    const first = (
      await lab.admin
        .post('/app/executions/config')
        .set('Accept', J)
        .send({ workflow: 'heat', config: [{ t: 35 }] })
        .expect(200)
    ).body.task_id as number;
    await until(async () => of('safety_blocked').length === before + 1);
    const run = (await lab.runtime.store.queue.get(first))!.runId!;
    const opened = of('safety_blocked')[before]!;
    expect(opened).toMatchObject({
      state: 'open',
      run_id: run,
      step: 'main[0]',
      url: `http://lab.example:8000/app/executions/records/${run}`,
      message: expect.stringContaining('Blocked by the safety guard'),
    });
    expect(opened.problems).toEqual([expect.objectContaining({ rule: expect.anything() })]);
    expect(of('step_failed')).toEqual([]);
    // made safe, retried: resolved with the same id, and the run completes
    await call('close_door', {}, 'door').expect(200);
    await lab.admin.post('/app/executions/retry').set('Accept', J).expect(200);
    await until(async () => of('safety_blocked').length === before + 2);
    expect(of('safety_blocked')[before + 1]).toMatchObject({ state: 'resolved', id: opened.id, resolution: 'the step was retried' });
    await done(first);

    // blocked again in another run, skipped: resolved by the skip
    await call('open_door', {}, 'door').expect(200);
    const second = (
      await lab.admin
        .post('/app/executions/config')
        .set('Accept', J)
        .send({ workflow: 'heat', config: [{ t: 35 }] })
        .expect(200)
    ).body.task_id as number;
    await until(async () => of('safety_blocked').length === before + 3);
    await lab.admin.post('/app/executions/skip').set('Accept', J).expect(200);
    await until(async () => of('safety_blocked').length === before + 4);
    expect(of('safety_blocked')[before + 3]).toMatchObject({ state: 'resolved', id: of('safety_blocked')[before + 2]!.id, resolution: 'the step was skipped' });
    await done(second);
    await call('close_door', {}, 'door').expect(200);
    expect(of('step_failed')).toEqual([]);
  });

  it('a safety file that does not validate: one alert while every call is blocked, resolved by the first call let through once fixed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labdeck-safety-'));
    const file = join(dir, 'lab-safety.json');
    await writeFile(file, '{"format": "ivoryos-safety/1", "limits": [{"target": "heater"}]');
    const other = await labWithHook({ safety: file });
    try {
      const before = of('safety_blocked').length;
      await other.admin.post('/app/instruments/heater').set('Accept', J).send({ method: 'read_temperature', args: {} }).expect(503);
      await other.admin.post('/app/instruments/door').set('Accept', J).send({ method: 'close_door', args: {} }).expect(503);
      await until(async () => of('safety_blocked').length === before + 1);
      expect(of('safety_blocked')[before]).toMatchObject({ state: 'open', message: expect.stringContaining('The safety file is not valid: every call is blocked') });
      await other.admin.put('/app/safety').set('Accept', J).send({ format: 'ivoryos-safety/1' }).expect(200);
      await other.admin.post('/app/instruments/door').set('Accept', J).send({ method: 'close_door', args: {} }).expect(200);
      await until(async () => of('safety_blocked').length === before + 2);
      expect(of('safety_blocked')[before + 1]).toMatchObject({ state: 'resolved', id: of('safety_blocked')[before]!.id });
      expect((await other.runtime.store.outbox.open()).filter((r) => r.event === 'safety_blocked')).toEqual([]);
    } finally {
      await other.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
