/**
 * ivoryOS Classic's own compiled scripts import unchanged (issue 29 item 0). The fixtures in
 * test/fixtures/ivoryos-classic were written by ivoryOS 1.6.11's script compiler itself
 * (scripts/ivoryos-classic-fixtures.py): `deck = None`, the `pause()` helper and its calls,
 * `deck.pump.dose(**{'volume_ml': volume})`, the return dict, prep/cleanup, `time.sleep`, if/else and repeat.
 * Each imports through POST /app/workflows/import/python and /ivoryos/draft/submit_python (as ivoryos-client
 * sends it: one function per part, or the whole file as the script), and one runs; the forms labdeck has no
 * step for answer 400 naming the line and saying what to write instead.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { PASSWORD, startLab, type TestLab } from './helpers.js';
import { waitForValue } from '../helpers/wait.js';

const J = 'application/json';
const fixture = (name: string) => readFileSync(fileURLToPath(new URL(`../fixtures/ivoryos-classic/${name}.py`, import.meta.url)), 'utf8');

let lab: TestLab;
beforeAll(async () => {
  lab = await startLab();
});
afterAll(() => lab.close());

const call = (instrument: string, method: string, args?: Record<string, unknown>, save_as?: string) => ({
  kind: 'call',
  instrument,
  method,
  ...(args ? { args } : {}),
  ...(save_as ? { save_as } : {}),
});
const temperature = (celsius: number) => call('hotplate', 'set_temperature', { celsius: { value: celsius } });

/** What each compiled script is as a labdeck workflow. */
const EXPECTED: Record<string, Record<string, unknown>> = {
  dose_weigh: {
    parameters: [{ name: 'volume', type: 'number' }],
    outputs: ['mass'],
    prep: [temperature(25)],
    main: [call('pump', 'dose', { volume_ml: { param: 'volume' } }), call('balance', 'weigh', undefined, 'mass')],
    cleanup: [temperature(20)],
  },
  react: {
    parameters: [{ name: 'temperature', type: 'number' }],
    outputs: expect.arrayContaining(['mass', 'run']),
    main: [call('reactor', 'run', { temperature: { param: 'temperature' }, time: { value: 10 } }, 'run'), call('balance', 'weigh', undefined, 'mass'), call('noop', 'ping')],
  },
  pause_sleep: {
    parameters: [],
    outputs: ['mass'],
    main: [
      call('pump', 'dose', { volume_ml: { value: 1.5 } }),
      { kind: 'pause', message: 'Check the vial, then press Enter' },
      { kind: 'wait', seconds: 2 },
      call('balance', 'weigh', undefined, 'mass'),
    ],
  },
  if_repeat: {
    parameters: [{ name: 'volume', type: 'number' }],
    outputs: ['mass'],
    main: [
      call('balance', 'weigh', undefined, 'mass'),
      {
        kind: 'if',
        condition: { left: { var: 'mass' }, op: '<', right: { value: 100 } },
        then: [call('pump', 'dose', { volume_ml: { param: 'volume' } })],
        else: [{ kind: 'pause', message: 'Too heavy' }],
      },
      { kind: 'repeat', times: 3, steps: [call('noop', 'ping')] },
    ],
  },
  named_deck: {
    parameters: [{ name: 'volume', type: 'number' }],
    outputs: [],
    main: [call('pump', 'dose', { volume_ml: { param: 'volume' } }), call('noop', 'ping')],
  },
};

/** The functions of a compiled file, as ivoryos-client's submit_workflow_script sends them (the pause helper is not one). */
function parts(source: string, name: string): { prep: string; script: string; cleanup: string } {
  const fns = source.split(/\n(?=(?:async )?def )/).filter((chunk) => /^(async )?def /.test(chunk));
  const of = (fn: string) => fns.find((chunk) => chunk.startsWith(`def ${fn}(`) || chunk.startsWith(`async def ${fn}(`))?.trim() ?? '';
  return { prep: of(`${name}_prep`), script: of(name), cleanup: of(`${name}_cleanup`) };
}

async function ivoryos() {
  const agent = request.agent(lab.app);
  await agent.post('/ivoryos/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).expect(302);
  return agent;
}

describe("ivoryOS Classic's compiled scripts, unchanged", () => {
  it.each(Object.keys(EXPECTED))('%s.py imports through POST /app/workflows/import/python', async (name) => {
    const source = fixture(name);
    expect(source).toMatch(/\*\*\{'|deck = None|import lab_deck as deck/); // it is the compiler's own output
    const res = await lab.admin.post('/app/workflows/import/python').set('Accept', J).type('text/plain').send(source).expect(201);
    expect(res.body.workflow).toMatchObject({ name, prep: [], cleanup: [], ...EXPECTED[name] });
  });

  it.each(Object.keys(EXPECTED))('%s.py through /ivoryos/draft/submit_python: one function per part, and the whole file as the script', async (name) => {
    const agent = await ivoryos();
    const source = fixture(name);
    const each = await agent
      .post('/ivoryos/draft/submit_python')
      .set('Accept', '*/*')
      .send({ workflow_name: `${name}_parts`, ...parts(source, name) })
      .expect(200);
    expect(each.body).toMatchObject({ success: true, workflow_name: `${name}_parts` });
    const whole = await agent
      .post('/ivoryos/draft/submit_python')
      .set('Accept', '*/*')
      .send({ workflow_name: `${name}_file`, script: source, prep: '', cleanup: '' })
      .expect(200);
    expect(whole.body.success).toBe(true);
    for (const saved of [`${name}_parts`, `${name}_file`]) {
      expect((await lab.runtime.store.workflows.get(saved))?.definition).toMatchObject({ prep: [], cleanup: [], ...EXPECTED[name] });
    }
  });

  it('an imported Classic workflow runs: its calls, parameter and returned output as written', async () => {
    const res = await lab.admin
      .post('/app/executions/config')
      .set('Accept', J)
      .send({ workflow: 'dose_weigh', config: [{ volume: 0.5 }] })
      .expect(200);
    const id = res.body.task_id as number;
    const task = async () => (await lab.admin.get(`/app/executions/queue/task/${id}`).set('Accept', J).expect(200)).body;
    const done = await waitForValue(task, (t) => !['pending', 'running'].includes(t.status), 'the task to end');
    expect(done.status).toBe('done');
    const steps = await lab.runtime.store.runSteps.list(done.run_id);
    expect(steps.map((s) => `${s.instrument}.${s.method}`)).toEqual(['hotplate.set_temperature', 'pump.dose', 'balance.weigh', 'hotplate.set_temperature']);
    expect(steps[1]).toMatchObject({ args: { volume_ml: 0.5 } });
    const phases = await lab.runtime.store.phases.list(done.run_id);
    expect(phases.find((p) => p.phase === 'main')?.outputs).toHaveProperty('mass');
  });

  it('the forms labdeck has no step for answer 400 naming the line and saying what to write instead', async () => {
    const loop = await lab.admin.post('/app/workflows/import/python?save=false').set('Accept', J).type('text/plain').send(fixture('refused_while_loop')).expect(400);
    expect(loop.body.error.message).toMatch(/line 9: a while loop is outside the workflow subset: .*`for _ in range\(3\):`/);
    const variable = await lab.admin.post('/app/workflows/import/python?save=false').set('Accept', J).type('text/plain').send(fixture('refused_variable')).expect(400);
    expect(variable.body.error.message).toMatch(/line 8: an assignment of float\(2\.5\) .*make the value a parameter of the main function/);
    const agent = await ivoryos();
    const submitted = await agent
      .post('/ivoryos/draft/submit_python')
      .set('Accept', '*/*')
      .send({ workflow_name: 'loop', ...parts(fixture('refused_while_loop'), 'refused_while_loop') })
      .expect(400);
    expect(submitted.body).toMatchObject({ success: false, error: expect.stringMatching(/script line 3: a while loop/), details: [{ field: 'script' }] });
    const bad = await lab.admin
      .post('/app/workflows/import/python?save=false')
      .set('Accept', J)
      .type('text/plain')
      .send("def w():\n\tdeck.pump.dose(**{'volume_ml': 1, **extra})\n\tpause(str(x))\n")
      .expect(400);
    expect(bad.body.error.message).toMatch(/line 2: \*\*\{.*name every argument: name=value, or \*\*\{'name': value, …\} with the names written out/);
  });

  it('older and other Classic forms: global lines, async calls, Enum values, Optional and Literal annotations', async () => {
    const source = [
      'import time',
      'from typing import Optional, Literal',
      'from drivers import Solvent',
      '',
      'def older_script(volume: Optional[float], mode: Literal["fast", "slow"]):',
      '\tglobal older_script',
      "\tawait deck.pump.dose(**{'volume_ml': volume, 'solvent': Solvent('water')})",
      '\tx = await deck.balance.weigh()',
      "\treturn {'x':x,}",
    ].join('\n');
    const res = await lab.admin.post('/app/workflows/import/python?save=false').set('Accept', J).type('text/plain').send(source);
    // labdeck's demo pump has no `solvent` argument: the parse is right, the deck says so naming the step
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['main[0].args.solvent']);
    const ok = await lab.admin.post('/app/workflows/import/python?save=false').set('Accept', J).type('text/plain').send(source.replace(", 'solvent': Solvent('water')", '')).expect(200);
    expect(ok.body).toMatchObject({
      name: 'older_script',
      parameters: [
        { name: 'volume', type: 'number' },
        { name: 'mode', type: 'string' },
      ],
      main: [call('pump', 'dose', { volume_ml: { param: 'volume' } }), call('balance', 'weigh', undefined, 'x')],
      outputs: ['x'],
    });
  });
});
