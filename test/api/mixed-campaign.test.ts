/**
 * Mixed campaigns (issue 31): a robot campaign, while it runs, takes a point a person measured by hand and a
 * point a person is still measuring. Its next suggestion is made by an optimizer that counts the hand-measured
 * point among its observations and never suggests the pending one, which the same optimizer, not told of it,
 * would have suggested next. The run is held mid-way by an input step (the yield read off by a person), so
 * the points arrive between two iterations without any timing.
 */
import type { ParamValues } from '../../core/contracts/index.js';
import { startLab, until, type TestLab } from './helpers.js';

const J = 'application/json';

/** The reactor runs; a person reads the yield off and types it in. */
const READ_YIELD = {
  name: 'react-read',
  parameters: [
    { name: 'temperature', type: 'number', default: 60 },
    { name: 'time', type: 'number', default: 10 },
  ],
  outputs: ['yield'],
  main: [
    { kind: 'call', instrument: 'reactor', method: 'run', args: { temperature: { param: 'temperature' }, time: { param: 'time' } }, save_as: 'run' },
    { kind: 'input', prompt: 'Read the yield off the reactor', save_as: 'yield', schema: { type: 'number', minimum: 0, maximum: 1 } },
  ],
};

const key = (p: Record<string, unknown>) => `${Number(p.temperature).toPrecision(8)},${Number(p.time).toPrecision(8)}`;

describe('a robot campaign running takes points people measure', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab();
    await lab.admin.post('/app/workflows').set('Accept', J).send(READ_YIELD).expect(201);
  });
  afterAll(() => lab.close());

  const status = async () => (await lab.admin.get('/app/executions/status').set('Accept', J).expect(200)).body;
  /** The input the run waits for, once it waits for one other than `after` (a step id). */
  const waitingInput = async (after: number | null) => {
    let input: { task_id: number; run_id: number; step_id: number } | null = null;
    await until(async () => {
      const s = await status();
      input = s.state === 'waiting_input' && s.input && s.input.step_id !== after ? s.input : null;
      return input !== null;
    });
    return input!;
  };
  const iterationParams = async (runId: number, i: number) => (await lab.runtime.store.phases.list(runId)).find((ph) => ph.phase === 'main' && ph.iteration === i)!.params as Record<string, unknown>;

  it('counts a point measured by hand mid-run among its observations, and never suggests the pending one', async () => {
    const started = await lab.admin
      .post('/app/executions/campaign')
      .set('Accept', J)
      .send({ workflow: 'react-read', optimizer_type: 'random', seed: 11, repeat: 2, batch_size: 1, parameters: 'temperature: 20..120, time: 1..30', objectives: 'yield:max' })
      .expect(200);
    const taskId = started.body.task_id as number;

    // iteration 1 waits for its yield: its parameters were suggested already
    const first = await waitingInput(null);
    expect(first.task_id).toBe(taskId);
    const runId = first.run_id;
    const id = (await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body.campaign.campaign_id as number;
    const one = await iterationParams(runId, 0);

    // meanwhile a person measured a point of their own by hand
    const hand = { temperature: 100, time: 25 };
    await lab.admin
      .post(`/app/executions/campaigns/${id}/points`)
      .set('Accept', J)
      .send({ parameters: hand, results: { yield: 0.8 } })
      .expect(201);

    // what the campaign's optimizer, told iteration 1 and the hand-measured point but nothing pending, suggests next
    const record = (await lab.runtime.store.campaigns.get(id))!;
    const p = record.payload as { space: never; objectives: never; config: never; seed: number; constraints: never; outcome_constraints: never };
    const untold = lab.runtime.campaigns
      .optimizer('random')
      .create({ space: p.space, objectives: p.objectives, config: p.config, seed: p.seed, constraints: p.constraints, outcomeConstraints: p.outcome_constraints });
    await untold.observe([
      { params: { temperature: one.temperature, time: one.time } as ParamValues, values: { yield: 0.3 } },
      { params: hand, values: { yield: 0.8 } },
    ]);
    const [next] = await untold.suggest(1);
    // a person takes exactly that point to measure: it is pending
    const pending = (
      await lab.admin
        .post(`/app/executions/campaigns/${id}/points`)
        .set('Accept', J)
        .send({ parameters: { temperature: next!.temperature, time: next!.time } })
        .expect(201)
    ).body;
    expect(pending).toMatchObject({ n: 2, state: 'pending', suggested_by: 'person:ada' });

    // iteration 1's yield is given: iteration 2 is suggested, and waits for its own
    await lab.admin.post('/app/executions/input').set('Accept', J).send({ task_id: taskId, value: 0.3 }).expect(200);
    const second = await waitingInput(first.step_id);
    const two = await iterationParams(runId, 1);
    expect(key(two)).not.toBe(key(pending.parameters)); // never the pending point
    expect(key(two)).not.toBe(key(hand));
    expect(key(two)).not.toBe(key(one));
    // the optimizer that suggested it counts the robot's iteration and the point measured by hand, and knows the pending one
    const model = (await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body.model as { observations: number; pending: number };
    expect(model.observations).toBe(2);
    expect(model.pending).toBe(2); // the person's pending point and iteration 2 itself

    await lab.admin.post('/app/executions/input').set('Accept', J).send({ task_id: second.task_id, value: 0.5 }).expect(200);
    await until(async () => (await lab.admin.get(`/app/executions/queue/task/${taskId}`).set('Accept', J)).body.status === 'done');
    const done = (await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body;
    expect(done.model.observations).toBe(3); // iterations 1 and 2, and the point measured by hand
    expect(done.points.map((x: { params: Record<string, unknown> }) => key(x.params))).not.toContain(key(pending.parameters));
    expect(done.points.map((x: { suggested_by: string; measured_by: string }) => [x.suggested_by, x.measured_by])).toEqual([
      ['optimizer:random', `run:${runId}`],
      ['optimizer:random', `run:${runId}`],
      ['person:ada', 'person:ada'],
    ]);
    // the pending point is still the person's to enter
    const c = (await lab.admin.get(`/app/executions/campaigns/${id}`).set('Accept', J).expect(200)).body;
    expect(c.counts).toEqual({ pending: 1, measured: 1, discarded: 0 });
  }, 60_000);
});
