import {
  ContractError,
  checkBatchSize,
  checkConstraints,
  checkObjectives,
  checkOutcomeConstraints,
  checkSpace,
  constraintViolation,
  defineOptimizer,
  isOptimizer,
  optimizerSchema,
  z,
  type OptimizerDefinition,
} from '../../core/contracts/index.js';
import { gpOptimizer } from '../../plugins/optimizer-gp.js';
import { randomOptimizer } from '../../plugins/optimizer-random.js';
import { sobolOptimizer } from '../../plugins/optimizer-sobol.js';
import { labError } from '../helpers/errors.js';

const config = z.object({ step: z.number().min(0).default(0.5).describe('Step size') });
const base: OptimizerDefinition<typeof config> = {
  name: 'stepper',
  description: 'Test optimizer',
  config,
  capabilities: { parameterTypes: ['range', 'int'], multiObjective: false, batch: false, constraints: false },
  create: ({ space, config: c }) => ({
    suggest: (n) => Array.from({ length: n }, () => Object.fromEntries(space.map((p) => [p.name, c.step]))),
    observe: () => undefined,
    snapshot: () => ({ step: c.step }),
  }),
};

describe('defineOptimizer', () => {
  it('tags a valid optimizer with the symbol the plugin host looks for', () => {
    const o = defineOptimizer(base);
    expect(isOptimizer(o)).toBe(true);
    expect((o as unknown as Record<symbol, unknown>)[Symbol.for('labdeck.optimizer')]).toBe(true);
    expect(o.name).toBe('stepper');
    expect(o.contract).toBe(1);
    expect(isOptimizer({ name: 'x' })).toBe(false);
    // defining again (a loader re-checking an export) keeps it working
    const again = defineOptimizer({ ...o } as unknown as OptimizerDefinition<typeof config>);
    expect(again.create({ space: [{ name: 'x', type: 'range', bounds: [0, 1] }], objectives: [{ name: 'y', minimize: true }] }).suggest(1)).toEqual([{ x: 0.5 }]);
  });

  it('names the offending part of a bad definition', () => {
    expect(() => defineOptimizer({ ...base, name: 'bad name' })).toThrow(ContractError);
    expect(() => defineOptimizer({ ...base, description: '' })).toThrow(/description is required/);
    expect(() => defineOptimizer({ ...base, contract: 7 })).toThrow(/written for contract 7/);
    expect(() => defineOptimizer({ ...base, config: {} as never })).toThrow(/config must be a zod object/);
    expect(() => defineOptimizer({ ...base, config: z.object({ need: z.number() }) as never })).toThrow(/config must accept \{\}/);
    expect(() => defineOptimizer({ ...base, capabilities: { ...base.capabilities, parameterTypes: [] } })).toThrow(/parameterTypes must list/);
    expect(() => defineOptimizer({ ...base, capabilities: { ...base.capabilities, parameterTypes: ['range', 'float' as never] } })).toThrow(/unknown type "float"/);
    expect(() => defineOptimizer({ ...base, capabilities: { ...base.capabilities, batch: 'yes' as never } })).toThrow(/capabilities.batch must be true or false/);
    expect(() => defineOptimizer({ ...base, create: undefined as never })).toThrow(/create\(/);
  });

  it('checks what create() is given and what it returns', () => {
    const o = defineOptimizer(base);
    const objectives = [{ name: 'y', minimize: true }];
    const space = [{ name: 'x', type: 'range', bounds: [0, 1] }];
    let e = labError(() => o.create({ space: [{ name: 'c', type: 'choice', choices: ['a'] }], objectives }));
    expect(e.details).toEqual([{ field: 'parameters[0].type', message: expect.stringMatching(/does not handle choice/) }]);
    e = labError(() => o.create({ space, objectives: [...objectives, { name: 'z', minimize: false }] }));
    expect(e.details).toEqual([{ field: 'objectives', message: expect.stringMatching(/one objective only/) }]);
    e = labError(() => o.create({ space, objectives, config: { step: -1 } }));
    expect(e.details?.[0]?.field).toBe('config.step');
    e = labError(() => o.create({ space, objectives, seed: 1.5 }));
    expect(e.details).toEqual([{ field: 'seed', message: 'must be an integer' }]);
    expect(o.create({ space, objectives, config: { step: 0.25 } }).snapshot()).toEqual({ step: 0.25 });
    const broken = defineOptimizer({ ...base, create: () => ({}) as never });
    expect(() => broken.create({ space, objectives })).toThrow(/must return \{ suggest, observe, snapshot \}/);
  });
});

describe('optimizerSchema', () => {
  it('describes the configuration as JSON Schema, with the capabilities', () => {
    const s = optimizerSchema(defineOptimizer(base));
    expect(s).toMatchObject({
      name: 'stepper',
      description: 'Test optimizer',
      capabilities: { parameterTypes: ['range', 'int'], multiObjective: false, batch: false, constraints: false, outcomeConstraints: false, logScale: false, steps: false },
    });
    expect(s.config).toMatchObject({ type: 'object', properties: { step: { type: 'number', minimum: 0, default: 0.5, description: 'Step size' } } });
    JSON.parse(JSON.stringify(s)); // serialisable as the route returns it
  });

  it('covers the first-party optimizers', () => {
    const schemas = [randomOptimizer, sobolOptimizer, gpOptimizer].map(optimizerSchema);
    expect(schemas.map((s) => s.name)).toEqual(['random', 'sobol', 'gp']);
    for (const s of schemas) {
      expect(s.capabilities).toEqual({ parameterTypes: ['range', 'int', 'choice'], multiObjective: true, batch: true, constraints: true, outcomeConstraints: true, logScale: true, steps: true });
    }
    const gp = schemas[2]!.config as { properties: Record<string, { default?: unknown; enum?: unknown }> };
    expect(gp.properties.batch_strategy).toMatchObject({ default: 'constant_liar', enum: ['constant_liar', 'kriging_believer'] });
    expect(gp.properties.candidates).toMatchObject({ default: 1024 });
    expect(gp.properties.basin_restarts).toMatchObject({ default: true });
    expect(Object.keys(gp.properties)).toEqual(['initial_points', 'candidates', 'local_starts', 'batch_strategy', 'fit_restarts', 'basin_restarts']);
  });
});

describe('checkSpace and checkObjectives', () => {
  it('returns clean copies of good input', () => {
    const space = checkSpace([
      { name: 'temperature', type: 'range', bounds: [20, 120] },
      { name: 'n', type: 'int', bounds: [1, 5] },
      { name: 'solvent', type: 'choice', choices: ['water', 'ethanol'] },
    ]);
    expect(space).toEqual([
      { name: 'temperature', type: 'range', bounds: [20, 120] },
      { name: 'n', type: 'int', bounds: [1, 5] },
      { name: 'solvent', type: 'choice', choices: ['water', 'ethanol'] },
    ]);
    expect(checkObjectives([{ name: 'yield', minimize: false }], undefined, space)).toEqual([{ name: 'yield', minimize: false }]);
  });

  it('lists every problem with the field that has it', () => {
    const e = labError(() =>
      checkSpace([
        { name: 'x', type: 'range', bounds: [0, 1] },
        { name: 'y', type: 'range', bounds: [1, 0] },
        { name: 'x', type: 'int', bounds: [0, 2.5] },
        { name: 'c', type: 'choice', choices: ['a', 'a'] },
        { name: 'd', type: 'range' },
        { name: 'e', type: 'float', bounds: [0, 1] },
        { name: 'f', type: 'range', bounds: [0, 1], steps: 2 },
        'x: 0..1',
      ]),
    );
    expect(e.code).toBe('invalid_input');
    expect(e.details).toEqual([
      { field: 'parameters[1].bounds', message: 'low (1) must be below high (0)' },
      { field: 'parameters[2].name', message: '"x" is used twice' },
      { field: 'parameters[2].bounds', message: 'an int parameter needs integer bounds' },
      { field: 'parameters[3].choices', message: 'a choice is listed twice' },
      { field: 'parameters[4].bounds', message: 'must be [low, high], two finite numbers' },
      { field: 'parameters[5].type', message: 'must be one of range, int, choice, fixed' },
      { field: 'parameters[6].steps', message: expect.stringMatching(/unknown key/) },
      { field: 'parameters[7]', message: expect.stringMatching(/must be an object/) },
    ]);
    expect(labError(() => checkSpace([])).details).toEqual([{ field: 'parameters', message: expect.any(String) }]);
    expect(labError(() => checkSpace([{ name: 'c', type: 'choice', choices: ['a'], bounds: [0, 1] }])).details?.[0]?.field).toBe('parameters[0].bounds');
  });

  it('checks objectives and batch sizes against the optimizer', () => {
    const e = labError(() =>
      checkObjectives(
        [
          { name: 'yield', minimize: 'yes' },
          { name: 'yield', minimize: true },
          { name: 'temperature', minimize: true },
        ],
        undefined,
        [{ name: 'temperature', type: 'range', bounds: [0, 1] }],
      ),
    );
    expect(e.details).toEqual([
      { field: 'objectives[0].minimize', message: 'must be true or false' },
      { field: 'objectives[1].name', message: '"yield" is used twice' },
      { field: 'objectives[2].name', message: '"temperature" is also a parameter' },
    ]);
    expect(labError(() => checkObjectives(undefined)).details?.[0]?.field).toBe('objectives');
    const single = defineOptimizer(base);
    expect(checkBatchSize(1, single)).toBe(1);
    expect(labError(() => checkBatchSize(3, single)).details?.[0]).toEqual({ field: 'batch_size', message: expect.stringMatching(/does not support batches/) });
    expect(checkBatchSize(3, gpOptimizer)).toBe(3);
    expect(labError(() => checkBatchSize(0, gpOptimizer)).details?.[0]?.field).toBe('batch_size');
  });
});

describe('parameter kinds', () => {
  const kinds = defineOptimizer({ ...base, capabilities: { ...base.capabilities, logScale: true, steps: true } });

  it('takes fixed, log-scale and stepped parameters, and the host adds fixed values to every suggestion', async () => {
    const space = [
      { name: 'x', type: 'range', bounds: [0, 100], step: 5 },
      { name: 'c', type: 'range', bounds: [0.01, 10], log_scale: true },
      { name: 'ph', type: 'fixed', value: 7, bounds: [0, 14] },
    ];
    expect(checkSpace(space, kinds)).toEqual([
      { name: 'x', type: 'range', bounds: [0, 100], step: 5 },
      { name: 'c', type: 'range', bounds: [0.01, 10], log_scale: true },
      { name: 'ph', type: 'fixed', value: 7, bounds: [0, 14] },
    ]);
    const seen: unknown[] = [];
    const o = defineOptimizer({ ...base, capabilities: kinds.capabilities, create: (a) => (seen.push(a.space), base.create(a)) });
    expect(await o.create({ space, objectives: [{ name: 'y', minimize: true }] }).suggest(1)).toEqual([{ x: 0.5, c: 0.5, ph: 7 }]);
    expect(seen[0]).toEqual(space.slice(0, 2)); // the optimizer never sees the fixed parameter
  });

  it('names the parameter of a bad fixed value, log range or step, and what an optimizer cannot honour', () => {
    const e = labError(() =>
      checkSpace(
        [
          { name: 'ph', type: 'fixed', value: 15, bounds: [0, 14] },
          { name: 'conc', type: 'range', bounds: [0, 10], log_scale: true },
          { name: 'vol', type: 'range', bounds: [0, 100], step: 7 },
          { name: 'n', type: 'int', bounds: [0, 10], step: 2.5 },
          { name: 'k', type: 'fixed' },
        ],
        kinds,
      ),
    );
    expect(e.details).toEqual([
      { field: 'parameters[0].value', message: '"ph" is fixed at 15, outside its bounds 0..14' },
      { field: 'parameters[1].bounds', message: '"conc" is searched on a log scale: its bounds must be above 0, and low is 0' },
      { field: 'parameters[2].step', message: '"vol": the step 7 does not divide the range 0..100 (100)' },
      { field: 'parameters[3].step', message: '"n" is an int parameter: its step must be a whole number' },
      { field: 'parameters[4].value', message: '"k" is fixed: give its value (a number or a string)' },
    ]);
    const plain = defineOptimizer(base);
    expect(labError(() => checkSpace([{ name: 'c', type: 'range', bounds: [1, 10], log_scale: true }], plain)).details).toEqual([
      { field: 'parameters[0].log_scale', message: 'the optimizer "stepper" cannot search on a log scale' },
    ]);
    expect(labError(() => checkSpace([{ name: 'c', type: 'range', bounds: [0, 10], step: 2 }], plain)).details?.[0]?.message).toBe('the optimizer "stepper" cannot keep to a step grid');
    expect(labError(() => checkSpace([{ name: 'ph', type: 'fixed', value: 7 }])).details).toEqual([{ field: 'parameters', message: 'every parameter is fixed: search at least one' }]);
  });

  it('takes weights on every objective or none', () => {
    expect(
      checkObjectives([
        { name: 'a', minimize: true, weight: 2 },
        { name: 'b', minimize: false, weight: 1 },
      ]),
    ).toEqual([
      { name: 'a', minimize: true, weight: 2 },
      { name: 'b', minimize: false, weight: 1 },
    ]);
    expect(labError(() => checkObjectives([{ name: 'a', minimize: true, weight: 0 }])).details).toEqual([{ field: 'objectives[0].weight', message: 'must be a number above 0' }]);
    expect(
      labError(() =>
        checkObjectives([
          { name: 'a', minimize: true, weight: 1 },
          { name: 'b', minimize: true },
        ]),
      ).details?.[0]?.message,
    ).toBe('give every objective a weight, or none');
  });

  it('refuses an option the optimizer does not have, by name', () => {
    const e = labError(() =>
      defineOptimizer(base).create({ space: [{ name: 'x', type: 'range', bounds: [0, 1] }], objectives: [{ name: 'y', minimize: true }], config: { parameter_constraints: ['x <= 1'] } }),
    );
    expect(e.details).toEqual([{ field: 'config.parameter_constraints', message: 'is not an option of the optimizer "stepper" (its options: step)' }]);
  });
});

describe('checkConstraints', () => {
  const space = checkSpace([
    { name: 'x1', type: 'range', bounds: [-5, 10] },
    { name: 'x2', type: 'range', bounds: [0, 15] },
    { name: 'water', type: 'range', bounds: [0, 1] },
    { name: 'ethanol', type: 'range', bounds: [0, 1] },
    { name: 'n', type: 'int', bounds: [1, 4] },
    { name: 'v', type: 'fixed', value: 2 },
  ]);

  it('reads linear inequalities and equalities as Ax and ivoryOS write them, fixed values moved to the right', () => {
    expect(checkConstraints(['x1 + 2*x2 <= 10', '3 >= x1 - x2/2', 'water + ethanol == 1', '2x1 + v >= 4 + x2', 'x1-x2 <= 1'], space)).toEqual([
      { text: 'x1 + 2*x2 <= 10', coefficients: { x1: 1, x2: 2 }, op: '<=', rhs: 10 },
      { text: '3 >= x1 - x2/2', coefficients: { x1: 1, x2: -0.5 }, op: '<=', rhs: 3 },
      { text: 'water + ethanol == 1', coefficients: { water: 1, ethanol: 1 }, op: '==', rhs: 1 },
      { text: '2x1 + v >= 4 + x2', coefficients: { x1: -2, x2: 1 }, op: '<=', rhs: -2 },
      { text: 'x1-x2 <= 1', coefficients: { x1: 1, x2: -1 }, op: '<=', rhs: 1 },
    ]);
    expect(checkConstraints('x1 <= 3\nx2 >= 1', space).map((c) => c.text)).toEqual(['x1 <= 3', 'x2 >= 1']);
    expect(checkConstraints(undefined, space)).toEqual([]);
  });

  it('quotes an unparseable constraint and where it fails, and names what does not fit', () => {
    const e = labError(() => checkConstraints(['x1 + * x2 <= 10', 'x1 * x2 <= 3', 'x1 + x3 <= 1', 'n + x1 <= 3', 'x1 < 3', 'x1 + x2', 'x1 + x2 >= 40', '(x1 + x2) <= 3'], space));
    expect(e.details).toEqual([
      { field: 'parameter_constraints[0]', message: 'cannot read "x1 + * x2 <= 10" at column 6: expected a number or a name, found "*"' },
      { field: 'parameter_constraints[1]', message: 'cannot read "x1 * x2 <= 3" at column 6: "x1" times "x2" is not linear' },
      { field: 'parameter_constraints[2]', message: '"x3" in "x1 + x3 <= 1" is not a searched parameter (the parameters: x1, x2, water, ethanol, n)' },
      { field: 'parameter_constraints[3]', message: '"n" in "n + x1 <= 3" is an int parameter: constraints apply to continuous range parameters' },
      { field: 'parameter_constraints[4]', message: 'cannot read "x1 < 3" at column 4: write <= (a constraint includes its boundary)' },
      { field: 'parameter_constraints[5]', message: 'cannot read "x1 + x2" at column 8: expected <=, >= or ==, found the end' },
      { field: 'parameter_constraints[6]', message: 'no values within the bounds satisfy "x1 + x2 >= 40": x1 + x2 ranges over -5..25 there' },
      { field: 'parameter_constraints[7]', message: expect.stringMatching(/at column 1: parentheses are not supported/) },
    ]);
  });

  it('refuses constraints an optimizer cannot honour, saying which', () => {
    const e = labError(() => defineOptimizer(base).create({ space: [{ name: 'x', type: 'range', bounds: [0, 1] }], objectives: [{ name: 'y', minimize: true }], constraints: ['x <= 0.5'] }));
    expect(e.details).toEqual([{ field: 'parameter_constraints', message: expect.stringMatching(/^the optimizer "stepper" cannot honour parameter constraints/) }]);
    const o = labError(() =>
      defineOptimizer(base).create({ space: [{ name: 'x', type: 'range', bounds: [0, 1] }], objectives: [{ name: 'y', minimize: true }], outcomeConstraints: ['purity >= 0.9'] }),
    );
    expect(o.details?.[0]).toEqual({ field: 'outcome_constraints', message: expect.stringMatching(/^the optimizer "stepper" cannot honour outcome constraints/) });
  });

  it('reads outcome constraints as one output against a number', () => {
    expect(checkOutcomeConstraints(['purity >= 0.9', '10 >= run.cost', '-2*loss >= -1'], 'outcome_constraints')).toEqual([
      { text: 'purity >= 0.9', name: 'purity', op: '>=', bound: 0.9 },
      { text: '10 >= run.cost', name: 'run.cost', op: '<=', bound: 10 },
      { text: '-2*loss >= -1', name: 'loss', op: '<=', bound: 0.5 },
    ]);
    expect(labError(() => checkOutcomeConstraints(['a + b >= 1'], 'stop_when')).details?.[0]?.field).toBe('stop_when[0]');
    expect(labError(() => checkOutcomeConstraints(['a >= 1e400'], 'stop_when')).details?.[0]?.message).toBe('cannot read "a >= 1e400" at column 6: 1e400 is too large a number');
    expect(labError(() => checkOutcomeConstraints(['a/0 >= 1'], 'stop_when')).details?.[0]?.message).toBe('cannot read "a/0 >= 1" at column 3: division by 0');
  });

  it('measures a violation relative to the spread of the left side over the box', () => {
    const [c] = checkConstraints(['x1 + x2 <= 8'], space);
    expect(constraintViolation(c!, { x1: 4, x2: 4 }, space)).toBe(0);
    expect(constraintViolation(c!, { x1: 6, x2: 5 }, space)).toBeCloseTo(3 / 30, 12);
  });
});
