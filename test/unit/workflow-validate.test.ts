import { z, type InstrumentSchema, type JSONSchema, type MethodSchema } from '../../core/contracts/index.js';
import { LabError, type ErrorDetail } from '../../core/errors.js';
import { countSteps, instrumentsOf, stepPaths, validateWorkflow, type DeckSchemas } from '../../core/workflow/validate.js';
import { Workflow, type Step } from '../../core/workflow/model.js';
import { methodSchema } from '../helpers/schemas.js';

/* A fake deck whose method schemas come from real zod schemas, as the deck makes them. */
const method = (name: string, params: z.ZodObject<z.ZodRawShape>): MethodSchema => methodSchema(name, z.toJSONSchema(params, { io: 'input' }) as JSONSchema);
function instrument(name: string, methods: MethodSchema[]): InstrumentSchema {
  return { name, driver: `sim-${name}`, description: '', source: 'deck', methods };
}
const INSTRUMENTS: Record<string, InstrumentSchema> = {
  pump: instrument('pump', [method('dose', z.object({ volume_ml: z.number().gt(0).max(50).describe('Volume to dispense, mL') })), method('prime', z.object({}))]),
  balance: instrument('balance', [method('weigh', z.object({})), method('tare', z.object({}))]),
  mixer: instrument('mixer', [
    method(
      'set',
      z.object({
        rpm: z.int().min(0).max(1500),
        mode: z.enum(['gentle', 'fast']).default('gentle'),
        note: z.string().max(5).optional(),
        on: z.boolean().optional(),
        ratio: z.number().lt(1).optional(),
      }),
    ),
  ]),
  logger: instrument('logger', [method('log', z.looseObject({ message: z.string() }))]),
};
const deck: DeckSchemas = {
  schema(name) {
    const s = INSTRUMENTS[name];
    if (!s) throw new LabError('not_found', `No instrument "${name}"; the deck has ${Object.keys(INSTRUMENTS).join(', ')}.`);
    return s;
  },
  list: () => Object.values(INSTRUMENTS),
};

const dose = (volume: unknown): Step => ({ kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { value: volume } } });

/** The demo-like workflow every test starts from (valid). */
function demo(): Record<string, unknown> {
  return {
    name: 'dose-and-weigh',
    parameters: [
      { name: 'volume', type: 'number', default: 1 },
      { name: 'speed', type: 'integer', default: 300 },
      { name: 'solvent', type: 'string', default: 'water' },
    ],
    outputs: ['mass'],
    prep: [
      { kind: 'call', instrument: 'pump', method: 'prime' },
      { kind: 'call', instrument: 'balance', method: 'tare', save_as: 'zero' },
    ],
    main: [
      { kind: 'call', instrument: 'mixer', method: 'set', args: { rpm: { param: 'speed' } } },
      { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } } },
      { kind: 'wait', seconds: 1 },
      { kind: 'call', instrument: 'balance', method: 'weigh', save_as: 'mass' },
      {
        kind: 'if',
        condition: { left: { var: 'mass' }, op: '<', right: { value: 0.5 } },
        then: [{ kind: 'repeat', times: 2, steps: [dose(0.1)] }],
        else: [{ kind: 'pause', message: 'Check the vial' }],
      },
    ],
    cleanup: [{ kind: 'call', instrument: 'mixer', method: 'set', args: { rpm: { value: 0 } } }],
  };
}

function problems(doc: unknown, d: DeckSchemas | null = deck): ErrorDetail[] {
  try {
    validateWorkflow(doc, d);
  } catch (e) {
    expect(e).toBeInstanceOf(LabError);
    expect((e as LabError).code).toBe('invalid_input');
    return (e as LabError).details ?? [];
  }
  throw new Error('expected the workflow to be rejected');
}

/** The one problem of `doc`: its field and message. */
function only(doc: unknown): ErrorDetail {
  const p = problems(doc);
  expect(p).toHaveLength(1);
  return p[0];
}

const withMain = (...main: Step[]) => ({ ...demo(), outputs: [], main });

describe('validateWorkflow: a valid workflow', () => {
  test('passes and gets its defaults filled in', () => {
    const w = validateWorkflow(demo(), deck);
    expect(w.name).toBe('dose-and-weigh');
    expect(w.description).toBe('');
    expect(w.main).toHaveLength(5);
    const minimal = validateWorkflow({ name: 'empty' }, deck);
    expect(minimal).toMatchObject({ parameters: [], outputs: [], prep: [], main: [], cleanup: [] });
  });

  test('parameter type defaults to number', () => {
    const w = validateWorkflow({ name: 'x', parameters: [{ name: 'v', default: 2 }], main: [{ kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'v' } } }] }, deck);
    expect(w.parameters[0].type).toBe('number');
  });

  test('extra arguments are accepted when the method takes any (catchall)', () => {
    expect(() => validateWorkflow(withMain({ kind: 'call', instrument: 'logger', method: 'log', args: { message: { value: 'hi' }, extra: { value: 1 } } }), deck)).not.toThrow();
  });

  test('with no deck, only the document is checked', () => {
    expect(() => validateWorkflow(withMain({ kind: 'call', instrument: 'nope', method: 'x' }), null)).not.toThrow();
    expect(problems(withMain({ kind: 'call', instrument: 'nope', method: 'x', args: { a: { var: 'v' } } }), null)).toEqual([
      { field: 'main[0].args.a', message: expect.stringContaining('"v", which no step saves') },
    ]);
  });
});

describe('validateWorkflow: document problems (zod) name the path', () => {
  test('a bad field value', () => {
    expect(only(withMain({ kind: 'wait', seconds: -1 }))).toEqual({ field: 'main[0].seconds', message: 'must be at least 0' });
  });

  test('an unknown step kind lists the kinds', () => {
    expect(only(withMain({ kind: 'dose' } as unknown as Step))).toEqual({
      field: 'main[0].kind',
      message: '"dose" is not a step kind: must be one of call, wait, pause, repeat, if, input',
    });
  });

  test('an unknown field of a step lists the step fields', () => {
    const d = only(withMain({ kind: 'wait', seconds: 1, secs: 2 } as unknown as Step));
    expect(d.field).toBe('main[0].secs');
    expect(d.message).toBe('is not a field of a "wait" step (its fields are kind, seconds, label)');
  });

  test('a bare literal argument says how to write it', () => {
    const d = only(withMain({ kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: 5 } } as unknown as Step));
    expect(d.field).toBe('main[0].args.volume_ml');
    expect(d.message).toContain('write {"value": 5}');
  });

  test('the model itself says how to write an argument', () => {
    const r = Workflow.safeParse({ name: 'x', main: [{ kind: 'call', instrument: 'a', method: 'b', args: { v: 5 } }] });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0].message).toBe('must be {"value": …}, {"param": "name"} or {"var": "name"}');
  });

  test('a bad save_as name, and a missing workflow name', () => {
    const doc = { ...withMain({ kind: 'call', instrument: 'balance', method: 'weigh', save_as: '1mass' }), name: undefined };
    expect(problems(doc)).toEqual([
      { field: 'name', message: 'is required' },
      { field: 'main[0].save_as', message: 'must start with a letter or _ and use only letters, digits, _ or -' },
    ]);
    // a field of a result is an output, not a variable: the message says which is which
    expect(problems(withMain({ kind: 'call', instrument: 'balance', method: 'weigh', save_as: 'run.yield' }))).toEqual([
      { field: 'main[0].save_as', message: 'is a variable name, without a dot: save the whole result as "run", and report its field as the output "run.yield"' },
    ]);
  });

  test('a document that is not an object', () => {
    expect(problems([1, 2])).toEqual([{ field: '(workflow)', message: expect.stringContaining('JSON object') }]);
  });

  test('deck problems inside a part zod rejected are not reported twice', () => {
    // The step has an unknown field (zod) and an unknown instrument (deck): both are listed once.
    const p = problems(withMain({ kind: 'call', instrument: 'pmp', method: 'dose', bogus: 1 } as unknown as Step));
    expect(p.map((d) => d.field)).toEqual(['main[0].bogus', 'main[0].instrument']);
    // A broken argument is reported by zod only, not again as a type problem.
    const q = problems(withMain({ kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { value: 1, param: 'volume' } } } as unknown as Step));
    expect(q).toEqual([{ field: 'main[0].args.volume_ml', message: expect.stringContaining('exactly one of these keys') }]);
  });
});

describe('validateWorkflow: deck problems', () => {
  test('unknown instrument lists the known ones', () => {
    expect(only(withMain({ kind: 'call', instrument: 'pmp', method: 'dose' }))).toEqual({
      field: 'main[0].instrument',
      message: '"pmp" is not an instrument of the deck; the deck has pump, balance, mixer, logger',
    });
  });

  test('unknown instrument without deck.list uses the deck message', () => {
    const bare: DeckSchemas = { schema: deck.schema };
    expect(problems(withMain({ kind: 'call', instrument: 'pmp', method: 'dose' }), bare)[0].message).toContain('the deck has pump, balance');
  });

  test('unknown method lists the instrument methods, at a nested path', () => {
    const doc = {
      ...withMain(),
      prep: [
        {
          kind: 'if',
          condition: { left: { value: 1 }, op: '==', right: { value: 1 } },
          then: [
            { kind: 'wait', seconds: 0 },
            { kind: 'wait', seconds: 0 },
            { kind: 'call', instrument: 'balance', method: 'weight' },
          ],
        },
      ],
    };
    expect(only(doc)).toEqual({ field: 'prep[0].then[2].method', message: 'balance has no method "weight"; its methods are weigh, tare' });
  });

  test('missing required argument (an argument with a default is not required)', () => {
    expect(only(withMain({ kind: 'call', instrument: 'pump', method: 'dose' }))).toEqual({
      field: 'main[0].args.volume_ml',
      message: 'is required by pump.dose (Volume to dispense, mL): give a value, a parameter or a variable',
    });
    expect(() => validateWorkflow(withMain({ kind: 'call', instrument: 'mixer', method: 'set', args: { rpm: { value: 1 } } }), deck)).not.toThrow();
  });

  test('unknown argument lists the arguments', () => {
    expect(only(withMain({ kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { value: 1 }, volume: { value: 1 } } }))).toEqual({
      field: 'main[0].args.volume',
      message: 'pump.dose has no argument "volume"; its arguments are volume_ml',
    });
    expect(only(withMain({ kind: 'call', instrument: 'pump', method: 'prime', args: { x: { value: 1 } } })).message).toBe('pump.prime has no argument "x"; it takes no arguments');
  });

  test.each([
    ['volume_ml', 'pump', 'dose', 'abc', 'must be a number (got "abc")'],
    ['volume_ml', 'pump', 'dose', 0, 'must be greater than 0 (got 0)'],
    ['volume_ml', 'pump', 'dose', 80, 'must be at most 50 (got 80)'],
    ['rpm', 'mixer', 'set', 2.5, 'must be an integer (got 2.5)'],
    ['rpm', 'mixer', 'set', -1, 'must be at least 0 (got -1)'],
    ['mode', 'mixer', 'set', 'slow', 'must be one of "gentle", "fast" (got "slow")'],
    ['note', 'mixer', 'set', 3, 'must be a string (got 3)'],
    ['note', 'mixer', 'set', 'toolong', 'must be at most 5 characters long (got "toolong")'],
    ['on', 'mixer', 'set', 'yes', 'must be true or false (got "yes")'],
    ['ratio', 'mixer', 'set', 1, 'must be less than 1 (got 1)'],
  ])('literal %s of %s.%s = %j: %s', (arg, inst, m, value, message) => {
    const args: Record<string, { value: unknown }> = { [arg]: { value } };
    if (inst === 'mixer' && arg !== 'rpm') args.rpm = { value: 10 };
    expect(only(withMain({ kind: 'call', instrument: inst, method: m, args }))).toEqual({ field: `main[0].args.${arg}`, message });
  });

  test('literals that fit pass (boundary values included)', () => {
    expect(() =>
      validateWorkflow(
        withMain(dose(50), dose(0.001), {
          kind: 'call',
          instrument: 'mixer',
          method: 'set',
          args: { rpm: { value: 1500 }, mode: { value: 'fast' }, note: { value: 'abcde' }, on: { value: false }, ratio: { value: 0.99 } },
        }),
        deck,
      ),
    ).not.toThrow();
  });

  test('a parameter that is not declared', () => {
    expect(only(withMain({ kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'vol' } } }))).toEqual({
      field: 'main[0].args.volume_ml',
      message: 'uses the parameter "vol", which the workflow does not declare; its parameters are volume, speed, solvent (declare it under "parameters")',
    });
  });

  test('a parameter whose type cannot fit the argument', () => {
    expect(only(withMain({ kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'solvent' } } }))).toEqual({
      field: 'main[0].args.volume_ml',
      message: 'the parameter "solvent" is a string, but this argument of pump.dose must be a number',
    });
    // number and integer parameters fit number and integer arguments alike (the value is checked per run)
    const doc = { ...withMain({ kind: 'call', instrument: 'mixer', method: 'set', args: { rpm: { param: 'volume' } } }, dose(1)) };
    expect(() => validateWorkflow(doc, deck)).not.toThrow();
  });

  test("a parameter whose default does not fit the argument's bounds", () => {
    const doc = { ...withMain({ kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'big' } } }), parameters: [{ name: 'big', default: 80 }] };
    expect(only(doc)).toEqual({ field: 'main[0].args.volume_ml', message: 'the parameter "big" defaults to 80, which does not fit here: it must be at most 50' });
  });

  test('a variable used before any step saves it (document order)', () => {
    const used = { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { var: 'v' } } } as Step;
    const saves = { kind: 'call', instrument: 'balance', method: 'weigh', save_as: 'v' } as Step;
    expect(only(withMain(used, saves))).toEqual({
      field: 'main[0].args.volume_ml',
      message: 'uses the variable "v" before it is saved: it is first saved later, at main[1]; move that step earlier',
    });
    expect(only(withMain(used)).message).toBe('uses the variable "v", which no step saves; add "save_as": "v" to an earlier call step');
    // saved in prep → usable in main; saved inside a branch or a repeat → usable after it
    expect(() => validateWorkflow({ ...withMain(used), prep: [saves] }, deck)).not.toThrow();
    const inBranch: Step = { kind: 'if', condition: { left: { value: 1 }, op: '==', right: { value: 1 } }, then: [{ kind: 'repeat', times: 1, steps: [saves] }] };
    expect(() => validateWorkflow(withMain(inBranch, used), deck)).not.toThrow();
    // main before cleanup
    expect(() => validateWorkflow({ ...withMain(saves), cleanup: [used] }, deck)).not.toThrow();
    expect(problems({ ...withMain(used), cleanup: [saves] })[0].message).toContain('first saved later, at cleanup[0]');
  });

  test('an output with a name of its own: its source must be saved in main, its name listed once', () => {
    const doc = { ...demo(), outputs: ['mass', { name: 'heavy', from: 'mass.value' }, { name: 'mass', from: 'mass' }, { name: 'z', from: 'zero' }, { name: 'a b', from: 'mass' }] };
    expect(problems(doc)).toEqual([
      { field: 'outputs[4].name', message: 'must start with a letter or _ and use only letters, digits, _, - or . between fields' },
      { field: 'outputs[2].name', message: '"mass" is listed twice' },
      { field: 'outputs[3].from', message: '"zero" is saved only at prep[1], outside main: outputs are the variables a main step saves' },
    ]);
    expect(validateWorkflow({ ...demo(), outputs: [{ name: 'heavy', from: 'mass.value' }] }, null).outputs).toEqual([{ name: 'heavy', from: 'mass.value' }]);
  });

  test('outputs must be saved by a main step', () => {
    const doc = { ...demo(), outputs: ['mass', 'zero', 'yield', 'run.yield', 'mass.value'] };
    expect(problems(doc)).toEqual([
      { field: 'outputs[1]', message: '"zero" is saved only at prep[1], outside main: outputs are the variables a main step saves' },
      { field: 'outputs[2]', message: '"yield" is not saved by any main step; add "save_as": "yield" to a call step in main, or remove it from outputs' },
      { field: 'outputs[3]', message: '"run.yield" is the field "yield" of "run", which no main step saves; give the call step that returns it "save_as": "run", or remove it from outputs' },
    ]);
  });

  test('duplicate parameter names', () => {
    const doc = {
      ...demo(),
      parameters: [
        { name: 'volume', default: 1 },
        { name: 'volume', default: 2 },
        { name: 'speed', type: 'integer', default: 1 },
        { name: 'solvent', type: 'string' },
      ],
    };
    expect(only(doc)).toEqual({ field: 'parameters[1].name', message: '"volume" is declared twice (first at parameters[0]): give each parameter its own name' });
  });

  test("a parameter default that is not of the parameter's type", () => {
    const doc = {
      ...demo(),
      parameters: [
        { name: 'volume', default: 1 },
        { name: 'speed', type: 'integer', default: 2.5 },
        { name: 'solvent', type: 'string', default: 3 },
      ],
    };
    expect(problems(doc)).toEqual([
      { field: 'parameters[1].default', message: "2.5 is not an integer, the parameter's type: change the default or the type" },
      { field: 'parameters[2].default', message: "3 is not a string, the parameter's type: change the default or the type" },
    ]);
  });

  test('a parameter type named after an Object property (`__proto__`, `constructor`) is refused, not a crash', () => {
    // found by the OpenAPI fuzzer: `type: "__proto__"` reached Object.prototype and answered 500
    for (const type of ['__proto__', 'constructor', 'toString']) {
      const found = problems({ ...demo(), parameters: [{ name: 'volume', type, default: 1 }] });
      expect(found).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'parameters[0].type' })]));
    }
  });

  test('a condition referring to an undefined parameter or variable', () => {
    const doc = withMain({ kind: 'if', condition: { left: { param: 'temp' }, op: '>', right: { var: 'limit' } }, then: [] });
    expect(problems(doc)).toEqual([
      { field: 'main[0].condition.left', message: expect.stringContaining('uses the parameter "temp", which the workflow does not declare') },
      { field: 'main[0].condition.right', message: expect.stringContaining('uses the variable "limit", which no step saves') },
    ]);
  });

  test('every problem is listed at once, and the summary names them', () => {
    const doc = {
      ...demo(),
      outputs: ['nothing'],
      main: [{ kind: 'call', instrument: 'pmp', method: 'dose' }, dose(80), { kind: 'wait', seconds: -5 }, { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { var: 'x' } } }],
    };
    let err: LabError | undefined;
    try {
      validateWorkflow(doc, deck);
    } catch (e) {
      err = e as LabError;
    }
    expect(err?.details?.map((d) => d.field)).toEqual(['main[2].seconds', 'main[0].instrument', 'main[1].args.volume_ml', 'main[3].args.volume_ml', 'outputs[0]']);
    expect(err?.message).toMatch(/^Workflow "dose-and-weigh" has 5 problems: main\[2\]\.seconds must be at least 0; main\[0\]\.instrument "pmp"/);
  });
});

describe('workflow helpers', () => {
  test('instrumentsOf lists every instrument any step calls, once, sorted', () => {
    expect(instrumentsOf(validateWorkflow(demo(), deck))).toEqual(['balance', 'mixer', 'pump']);
    expect(instrumentsOf(validateWorkflow({ name: 'w', main: [{ kind: 'wait', seconds: 1 }] }, deck))).toEqual([]);
  });

  test('stepPaths walks prep → main → cleanup depth first', () => {
    const paths = stepPaths(validateWorkflow(demo(), deck)).map((s) => s.path);
    expect(paths).toEqual(['prep[0]', 'prep[1]', 'main[0]', 'main[1]', 'main[2]', 'main[3]', 'main[4]', 'main[4].then[0]', 'main[4].then[0].steps[0]', 'main[4].else[0]', 'cleanup[0]']);
  });

  test('countSteps counts executed steps: repeats multiply, an if counts itself and its longer branch', () => {
    const w = validateWorkflow(demo(), deck);
    expect(countSteps(w.main)).toBe(4 + 1 + 2);
    expect(
      countSteps([
        {
          kind: 'repeat',
          times: 3,
          steps: [
            { kind: 'wait', seconds: 0 },
            { kind: 'repeat', times: 2, steps: [{ kind: 'wait', seconds: 0 }] },
          ],
        },
      ]),
    ).toBe(9);
  });
});
