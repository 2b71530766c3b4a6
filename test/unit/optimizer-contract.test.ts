import {
  ContractError,
  checkBatchSize,
  checkObjectives,
  checkSpace,
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
    expect(() => defineOptimizer({ ...base, capabilities: { ...base.capabilities, parameterTypes: ['range', 'float' as never] } })).toThrow(
      /unknown type "float"/,
    );
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
      capabilities: { parameterTypes: ['range', 'int'], multiObjective: false, batch: false, constraints: false },
    });
    expect(s.config).toMatchObject({ type: 'object', properties: { step: { type: 'number', minimum: 0, default: 0.5, description: 'Step size' } } });
    JSON.parse(JSON.stringify(s)); // serialisable as the route returns it
  });

  it('covers the first-party optimizers', () => {
    const schemas = [randomOptimizer, sobolOptimizer, gpOptimizer].map(optimizerSchema);
    expect(schemas.map((s) => s.name)).toEqual(['random', 'sobol', 'gp']);
    for (const s of schemas) expect(s.capabilities).toEqual({ parameterTypes: ['range', 'int', 'choice'], multiObjective: true, batch: true, constraints: false });
    const gp = schemas[2]!.config as { properties: Record<string, { default?: unknown; enum?: unknown }> };
    expect(gp.properties.batch_strategy).toMatchObject({ default: 'constant_liar', enum: ['constant_liar', 'kriging_believer'] });
    expect(gp.properties.candidates).toMatchObject({ default: 1024 });
    expect(Object.keys(gp.properties)).toEqual(['initial_points', 'candidates', 'local_starts', 'batch_strategy', 'fit_restarts']);
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
        { name: 'f', type: 'range', bounds: [0, 1], step: 2 },
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
      { field: 'parameters[5].type', message: 'must be one of range, int, choice' },
      { field: 'parameters[6].step', message: expect.stringMatching(/unknown key/) },
      { field: 'parameters[7]', message: expect.stringMatching(/must be an object/) },
    ]);
    expect(labError(() => checkSpace([])).details).toEqual([{ field: 'parameters', message: expect.any(String) }]);
    expect(labError(() => checkSpace([{ name: 'c', type: 'choice', choices: ['a'], bounds: [0, 1] }])).details?.[0]?.field).toBe('parameters[0].bounds');
  });

  it('checks objectives and batch sizes against the optimizer', () => {
    const e = labError(() =>
      checkObjectives([{ name: 'yield', minimize: 'yes' }, { name: 'yield', minimize: true }, { name: 'temperature', minimize: true }], undefined, [
        { name: 'temperature', type: 'range', bounds: [0, 1] },
      ]),
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
