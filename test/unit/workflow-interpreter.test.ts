import { LabError } from '../../core/errors.js';
import { compare, outputsOf, runSteps, type RunControl, type Scope, type StepAt } from '../../core/workflow/interpreter.js';
import { Workflow, type Condition, type Step } from '../../core/workflow/model.js';
import { waitFor } from '../helpers/wait.js';

type Call = (instrument: string, method: string, args: Record<string, unknown>, at: StepAt) => unknown;

/** A control that records everything, with hooks for the behaviour under test. */
function recording(opts: { call?: Call; onError?: RunControl['onError']; beforeStep?: RunControl['beforeStep'] } = {}) {
  const log: string[] = [];
  const ats: StepAt[] = [];
  const control: RunControl = {
    async beforeStep(at) {
      log.push(`before ${at.index} ${at.path}`);
      ats.push(at);
      await opts.beforeStep?.(at);
    },
    async call(at, instrument, method, args) {
      log.push(`call ${instrument}.${method} ${JSON.stringify(args)}`);
      return opts.call ? opts.call(instrument, method, args, at) : null;
    },
    async wait(_at, seconds) {
      log.push(`wait ${seconds}`);
    },
    async pauseStep(_at, message) {
      log.push(`pause ${message}`);
    },
    async onError(at, error) {
      log.push(`error ${at.index} ${at.path}: ${(error as Error).message}`);
      return opts.onError ? opts.onError(at, error) : 'skip';
    },
    afterStep(at, result) {
      log.push(`after ${at.index} ${JSON.stringify(result)}`);
    },
  };
  return { log, ats, control };
}

const scope = (params: Record<string, unknown> = {}, vars: Record<string, unknown> = {}): Scope => ({ params, vars });
const main = { phase: 'main' as const, iteration: 0 };
const call = (instrument: string, method: string, args: Record<string, unknown> = {}, save_as?: string): Step => ({ kind: 'call', instrument, method, args, ...(save_as ? { save_as } : {}) }) as Step;

describe('runSteps', () => {
  test('runs steps in order, resolving {value}, {param} and {var}, and saves outputs', async () => {
    const { log, control } = recording({ call: (i, m, a) => (m === 'weigh' ? 1.25 : a) });
    const s = scope({ volume: 2 }, { prior: 'p' });
    await runSteps(
      [
        call('pump', 'dose', { volume_ml: { param: 'volume' }, tag: { value: { a: [1] } }, from: { var: 'prior' } }),
        { kind: 'wait', seconds: 3 },
        call('balance', 'weigh', {}, 'mass'),
        call('log', 'write', { m: { var: 'mass' } }),
        { kind: 'pause', message: 'look' },
        { kind: 'pause' },
      ],
      s,
      control,
      main,
    );
    expect(log).toEqual([
      'before 0 main[0]',
      'call pump.dose {"volume_ml":2,"tag":{"a":[1]},"from":"p"}',
      'after 0 {"volume_ml":2,"tag":{"a":[1]},"from":"p"}',
      'before 1 main[1]',
      'wait 3',
      'after 1 undefined',
      'before 2 main[2]',
      'call balance.weigh {}',
      'after 2 1.25',
      'before 3 main[3]',
      'call log.write {"m":1.25}',
      'after 3 {"m":1.25}',
      'before 4 main[4]',
      'pause look',
      'after 4 undefined',
      'before 5 main[5]',
      'pause Paused by the workflow: continue when ready.',
      'after 5 undefined',
    ]);
    expect(s.vars).toEqual({ prior: 'p', mass: 1.25 });
  });

  test('StepAt carries phase, iteration, path, index and the step', async () => {
    const { ats, control } = recording();
    const steps: Step[] = [{ kind: 'wait', seconds: 0 }];
    await runSteps(steps, scope(), control, { phase: 'cleanup', iteration: null });
    expect(ats).toEqual([{ phase: 'cleanup', iteration: null, path: 'cleanup[0]', index: 0, step: steps[0] }]);
  });

  test('repeat runs its body `times` times; paths repeat, the index counts on', async () => {
    const { log, ats, control } = recording();
    await runSteps(
      [
        { kind: 'wait', seconds: 1 },
        {
          kind: 'repeat',
          times: 2,
          steps: [
            { kind: 'wait', seconds: 2 },
            { kind: 'repeat', times: 2, steps: [{ kind: 'wait', seconds: 3 }] },
          ],
        },
        { kind: 'repeat', times: 0, steps: [{ kind: 'wait', seconds: 99 }] },
        { kind: 'wait', seconds: 4 },
      ],
      scope(),
      control,
      main,
    );
    expect(log.filter((l) => l.startsWith('wait'))).toEqual(['wait 1', 'wait 2', 'wait 3', 'wait 3', 'wait 2', 'wait 3', 'wait 3', 'wait 4']);
    expect(ats.map((a) => `${a.index} ${a.path}`)).toEqual([
      '0 main[0]',
      '1 main[1].steps[0]',
      '2 main[1].steps[1].steps[0]',
      '3 main[1].steps[1].steps[0]',
      '4 main[1].steps[0]',
      '5 main[1].steps[1].steps[0]',
      '6 main[1].steps[1].steps[0]',
      '7 main[3]',
    ]);
  });

  test('if runs then or else; the if is a step whose result is the condition', async () => {
    const cond = (op: Condition['op']): Step => ({
      kind: 'if',
      condition: { left: { param: 'x' }, op, right: { value: 5 } },
      then: [{ kind: 'wait', seconds: 1 }],
      else: [{ kind: 'wait', seconds: 2 }],
    });
    const { log, control } = recording();
    await runSteps([cond('<'), cond('>=')], scope({ x: 3 }), control, main);
    expect(log).toEqual([
      'before 0 main[0]',
      'after 0 true',
      'before 1 main[0].then[0]',
      'wait 1',
      'after 1 undefined',
      'before 2 main[1]',
      'after 2 false',
      'before 3 main[1].else[0]',
      'wait 2',
      'after 3 undefined',
    ]);
    // no else: nothing runs
    const r = recording();
    await runSteps([{ kind: 'if', condition: { left: { value: 1 }, op: '==', right: { value: 2 } }, then: [{ kind: 'wait', seconds: 1 }] }], scope(), r.control, main);
    expect(r.log).toEqual(['before 0 main[0]', 'after 0 false']);
  });

  test('retry runs the same step again (arguments resolved again), then goes on', async () => {
    let attempts = 0;
    const s = scope({ v: 1 });
    const { log, control } = recording({
      call: (i, m, args) => {
        if (m === 'dose' && ++attempts < 3) {
          s.params.v = (s.params.v as number) + 1; // the operator fixed something between attempts
          throw new Error('pump jammed');
        }
        return args.volume_ml;
      },
      onError: async () => 'retry',
    });
    await runSteps([call('pump', 'dose', { volume_ml: { param: 'v' } }, 'dosed'), { kind: 'wait', seconds: 0 }], s, control, main);
    expect(log).toEqual([
      'before 0 main[0]',
      'call pump.dose {"volume_ml":1}',
      'error 0 main[0]: pump jammed',
      'before 0 main[0]',
      'call pump.dose {"volume_ml":2}',
      'error 0 main[0]: pump jammed',
      'before 0 main[0]',
      'call pump.dose {"volume_ml":3}',
      'after 0 3',
      'before 1 main[1]',
      'wait 0',
      'after 1 undefined',
    ]);
    expect(s.vars.dosed).toBe(3);
  });

  test('skip goes on with the next step and saves nothing', async () => {
    const s = scope();
    const { log, control } = recording({
      call: (_i, m) => {
        if (m === 'weigh') throw new Error('no signal');
        return 'ok';
      },
      onError: async () => 'skip',
    });
    await runSteps([call('balance', 'weigh', {}, 'mass'), call('pump', 'prime')], s, control, main);
    expect(log).toEqual(['before 0 main[0]', 'call balance.weigh {}', 'error 0 main[0]: no signal', 'before 1 main[1]', 'call pump.prime {}', 'after 1 "ok"']);
    expect(s.vars).toEqual({});
  });

  test('an undefined variable or parameter at run time is an error of its step', async () => {
    const errors: unknown[] = [];
    const { log, control } = recording({ onError: async (_at, e) => (errors.push(e), 'skip') });
    await runSteps([call('pump', 'dose', { volume_ml: { var: 'missing' } }), call('pump', 'dose', { volume_ml: { param: 'nope' } }), call('pump', 'prime')], scope(), control, main);
    expect(log.filter((l) => l.startsWith('call'))).toEqual(['call pump.prime {}']);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toBeInstanceOf(LabError);
    expect((errors[0] as LabError).details).toEqual([{ field: 'main[0].args.volume_ml', message: 'the variable "missing" is not set' }]);
    expect((errors[1] as LabError).message).toBe('The parameter "nope" has no value in this run.');
  });

  test('a condition that cannot be evaluated is an error of the if step; skip runs neither branch', async () => {
    const errors: unknown[] = [];
    const { log, control } = recording({ onError: async (_at, e) => (errors.push(e), 'skip') });
    await runSteps(
      [{ kind: 'if', condition: { left: { value: 'a' }, op: '<', right: { value: 1 } }, then: [{ kind: 'wait', seconds: 1 }], else: [{ kind: 'wait', seconds: 2 }] }],
      scope(),
      control,
      main,
    );
    expect(log).toEqual(['before 0 main[0]', 'error 0 main[0]: Cannot compare string "a" < number 1: both sides must be numbers, both strings or both booleans.']);
    expect((errors[0] as LabError).details?.[0].field).toBe('main[0].condition');
  });

  test('onError rejecting ends the phase with that error', async () => {
    const stop = new Error('aborted by the operator');
    const { log, control } = recording({
      call: () => {
        throw new Error('boom');
      },
      onError: async () => {
        throw stop;
      },
    });
    await expect(runSteps([call('pump', 'prime'), call('pump', 'prime')], scope(), control, main)).rejects.toBe(stop);
    expect(log).toEqual(['before 0 main[0]', 'call pump.prime {}', 'error 0 main[0]: boom']);
  });

  test('beforeStep blocks the next step until released', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { log, control } = recording({ beforeStep: (at) => (at.index === 1 ? gate : Promise.resolve()) });
    const done = runSteps([call('a', 'x'), call('b', 'y')], scope(), control, main);
    // it has asked to start step 1, and waits on the gate: b.y is not called
    await waitFor(() => log.length >= 4, 'the second beforeStep');
    expect(log).toEqual(['before 0 main[0]', 'call a.x {}', 'after 0 null', 'before 1 main[1]']);
    release();
    await done;
    expect(log.slice(4)).toEqual(['call b.y {}', 'after 1 null']);
  });

  test('beforeStep rejecting stops before the step runs, without onError', async () => {
    const stop = new Error('stop');
    const { log, control } = recording({
      beforeStep: async (at) => {
        if (at.index === 1) throw stop;
      },
    });
    await expect(runSteps([call('a', 'x'), call('b', 'y'), call('c', 'z')], scope(), control, main)).rejects.toBe(stop);
    expect(log).toEqual(['before 0 main[0]', 'call a.x {}', 'after 0 null', 'before 1 main[1]']);
  });

  test('a rejected wait or pause ends the phase (the runner aborted it)', async () => {
    const { control } = recording();
    control.wait = () => Promise.reject(new Error('aborted while waiting'));
    await expect(runSteps([{ kind: 'wait', seconds: 60 }], scope(), control, main)).rejects.toThrow('aborted while waiting');
  });

  test('10,000 sequential steps: no stack overflow', async () => {
    const steps: Step[] = Array.from({ length: 10_000 }, (_, i) => (i % 2 ? call('pump', 'dose', { volume_ml: { param: 'v' }, n: { value: i } }, 'last') : { kind: 'wait', seconds: 0 }));
    let calls = 0;
    const noop: RunControl = {
      beforeStep: () => Promise.resolve(),
      call: () => Promise.resolve(++calls),
      wait: () => Promise.resolve(),
      pauseStep: () => Promise.resolve(),
      onError: () => Promise.resolve('skip'),
    };
    const s = scope({ v: 1 });
    const t0 = performance.now();
    await runSteps(steps, s, noop, main);
    const ms = performance.now() - t0;
    if (process.env.WF_BENCH) console.log(`10,000 steps: ${ms.toFixed(1)} ms`);
    expect(calls).toBe(5_000);
    expect(s.vars.last).toBe(5_000);
    // and inside a repeat (the cost per step is a figure of `npm run bench orchestration`, not of a test)
    await runSteps([{ kind: 'repeat', times: 10_000, steps: [{ kind: 'wait', seconds: 0 }] }], s, noop, main);
    expect(s.vars.last).toBe(5_000);
  });
});

describe('compare', () => {
  test.each([
    [1, '==', 1, true],
    [1, '==', '1', false],
    [{ a: [1, 2] }, '==', { a: [1, 2] }, true],
    [{ a: [1, 2] }, '==', { a: [2, 1] }, false],
    [{ a: 1 }, '!=', { a: 1, b: 2 }, true],
    [null, '==', null, true],
    ['x', '!=', 'y', true],
    [2, '<', 3, true],
    [3, '<', 3, false],
    [3, '<=', 3, true],
    [4, '>', 3, true],
    [3, '>', 3, false],
    [3, '>=', 3, true],
    [2, '>=', 3, false],
    ['apple', '<', 'banana', true],
    [false, '<', true, true],
  ] as const)('%j %s %j → %s', (left, op, right, expected) => {
    expect(compare(left, op, right)).toBe(expected);
  });

  test('ordering needs two numbers, two strings or two booleans', () => {
    expect(() => compare(1, '<', '2')).toThrow(LabError);
    expect(() => compare(null, '>=', 0)).toThrow('both sides must be numbers');
    expect(() => compare(Number.NaN, '<', 1)).toThrow(LabError);
    expect(() => compare([1], '<', [2])).toThrow(LabError);
  });
});

describe('outputsOf', () => {
  test("each output's variable, null when it was not saved", () => {
    const w = Workflow.parse({ name: 'w', outputs: ['mass', 'yield'] });
    expect(outputsOf(w, scope({}, { mass: 1.5, other: 2 }))).toEqual({ mass: 1.5, yield: null });
  });
});

describe('outputs of a field', () => {
  it('picks a field of an object variable with a dotted output name, null when missing', () => {
    const scope = { params: {}, vars: { run: { yield: 0.8, extra: { purity: 0.9 } }, n: 3 } };
    expect(outputsOf({ outputs: ['run.yield', 'run.extra.purity', 'run.nope', 'n', 'n.x', 'gone'] }, scope)).toEqual({
      'run.yield': 0.8,
      'run.extra.purity': 0.9,
      'run.nope': null,
      n: 3,
      'n.x': null,
      gone: null,
    });
  });

  it('reports an output with a name of its own under that name: { name: "power", from: "cell.power_mw" }', () => {
    const scope = { params: {}, vars: { cell: { current_ma: 2, power_mw: 5 } } };
    const w = Workflow.parse({ name: 'w', outputs: [{ name: 'power', from: 'cell.power_mw' }, 'cell.current_ma'] });
    expect(outputsOf(w, scope)).toEqual({ power: 5, 'cell.current_ma': 2 });
  });
});
