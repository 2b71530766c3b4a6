/** The builder's pure model: document ↔ state, `#name` / `$name` parsing, step paths, parameters, error places. */
import {
  argFields,
  argText,
  declareMissingParams,
  describeSchema,
  insertStep,
  listAt,
  listLabel,
  moveStep,
  newBlock,
  newCall,
  normalise,
  blockWarning,
  outputChoices,
  outputWarning,
  paramTypeFor,
  paramUsage,
  parseArgText,
  parseDefault,
  parsePath,
  placeError,
  removeStep,
  renameParam,
  savedVars,
  setArg,
  setOutput,
  stepAt,
  summary,
  tickNewOutputs,
  toDocument,
  type MethodInfo,
  type Step,
  type Workflow,
} from '../../server/client/builder-model/index.js';
import { validateWorkflow } from '../../core/workflow/validate.js';

const VOLUME = { type: 'number', exclusiveMinimum: 0, maximum: 50, description: 'Volume, mL' };
const METHODS: Record<string, MethodInfo> = {
  'pump.dose': { name: 'dose', description: '', safety: 'hazardous', params: { type: 'object', properties: { volume_ml: VOLUME }, required: ['volume_ml'] } },
  'balance.weigh': { name: 'weigh', description: '', safety: 'readonly', params: { type: 'object', properties: {} } },
  'reactor.run': {
    name: 'run',
    description: '',
    safety: 'hazardous',
    params: { type: 'object', properties: {} },
    returns: { type: 'object', properties: { yield: { type: 'number' }, purity: { type: 'number' } }, required: ['yield'] },
  },
  'stage.position': {
    name: 'position',
    description: '',
    safety: 'readonly',
    params: { type: 'object', properties: {} },
    returns: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }] },
  },
  'stirrer.set_speed': {
    name: 'set_speed',
    description: '',
    safety: 'idempotent',
    params: { type: 'object', properties: { rpm: { type: 'integer', default: 300 }, mode: { enum: ['slow', 'fast'] }, on: { type: 'boolean' }, plan: {} }, required: ['rpm'] },
  },
};
const lookup = (i: string, m: string) => METHODS[`${i}.${m}`];

/** A deck of METHODS, as the server's validation sees one. */
const deckOf = () => ({
  schema: (name: string) => ({
    name,
    driver: name,
    description: '',
    source: 'deck' as const,
    methods: Object.entries(METHODS)
      .filter(([k]) => k.startsWith(`${name}.`))
      .map(([, m], order) => ({ ...m, safety: m.safety as 'readonly', hidden: false, order, inferred: false, inferredFields: [] })),
  }),
});

/** main: [repeat 2× [dose, weigh→mass], if mass > 1 then [dose] else []]; cleanup: [wait 1] */
function sample(): Workflow {
  const doc = normalise({ name: 'w' });
  insertStep(doc, 'main', 0, newBlock('repeat'));
  insertStep(doc, 'main[0].steps', 0, newCall('pump', 'dose'));
  insertStep(doc, 'main[0].steps', 1, { kind: 'call', instrument: 'balance', method: 'weigh', args: {}, save_as: 'mass' });
  insertStep(doc, 'main', 1, newBlock('if'));
  insertStep(doc, 'main[1].then', 0, newCall('pump', 'dose'));
  insertStep(doc, 'cleanup', 0, newBlock('wait'));
  return doc;
}

describe('arguments: field text ↔ { value | param | var }', () => {
  it('reads #name as a parameter and $name as a variable, and names a bad name', () => {
    expect(parseArgText('#volume', VOLUME)).toEqual({ arg: { param: 'volume' } });
    expect(parseArgText('  $mass ', VOLUME)).toEqual({ arg: { var: 'mass' } });
    expect(parseArgText('#2x', VOLUME).problem).toMatch(/parameter name must start with a letter/i);
    expect(parseArgText('$', VOLUME).problem).toMatch(/variable name/i);
  });

  it('types literals by the schema: numbers, booleans, strings, enums, JSON', () => {
    expect(parseArgText('2.5', VOLUME)).toEqual({ arg: { value: 2.5 } });
    expect(parseArgText('', VOLUME)).toEqual({ arg: undefined });
    expect(parseArgText('1e1', { type: 'integer' })).toEqual({ arg: { value: 10 } });
    expect(parseArgText('true', { type: 'boolean' })).toEqual({ arg: { value: true } });
    expect(parseArgText('42', { type: 'string' })).toEqual({ arg: { value: '42' } });
    expect(parseArgText(' padded ', { type: 'string' })).toEqual({ arg: { value: ' padded ' } });
    expect(parseArgText('fast', { enum: ['slow', 'fast'] })).toEqual({ arg: { value: 'fast' } });
    expect(parseArgText('[1, 2]', { type: 'array' })).toEqual({ arg: { value: [1, 2] } });
    expect(parseArgText('null', { type: ['number', 'null'] })).toEqual({ arg: { value: null } });
    // untyped (an inferred JSON field): JSON when it parses, the text otherwise
    expect(parseArgText('{"a": 1}', {})).toEqual({ arg: { value: { a: 1 } } });
    expect(parseArgText('7', null)).toEqual({ arg: { value: 7 } });
    expect(parseArgText('hello', null)).toEqual({ arg: { value: 'hello' } });
  });

  it('keeps text that does not fit, with a hint, so the server reports it at its path too', () => {
    expect(parseArgText('lots', VOLUME)).toEqual({ arg: { value: 'lots' }, problem: expect.stringMatching(/not a number/) });
    expect(parseArgText('99', VOLUME)).toEqual({ arg: { value: 99 }, problem: expect.stringMatching(/50/) });
    expect(parseArgText('maybe', { type: 'boolean' }).problem).toMatch(/true or false/);
    expect(parseArgText('[1,', { type: 'array' }).problem).toMatch(/JSON/);
    expect(parseArgText('1.5', { type: 'integer' }).problem).toBeTruthy();
  });

  it('lets a backslash keep # and $ as text', () => {
    expect(parseArgText('\\#1 vial', { type: 'string' })).toEqual({ arg: { value: '#1 vial' } });
    expect(parseArgText('\\$5', null)).toEqual({ arg: { value: '$5' } });
  });

  it('writes an argument back as the text that reads as it again', () => {
    const cases: [unknown, Record<string, unknown> | null][] = [
      [{ param: 'volume' }, VOLUME],
      [{ var: 'mass' }, VOLUME],
      [{ value: 2.5 }, VOLUME],
      [{ value: '#1 vial' }, { type: 'string' }],
      [{ value: '42' }, null], // untyped: "42" as text must not come back as a number
      [{ value: 'hello' }, null],
      [{ value: { a: [1, 2] } }, {}],
      [{ value: false }, { type: 'boolean' }],
      [{ value: null }, { type: ['string', 'null'] }],
    ];
    for (const [arg, schema] of cases) {
      const text = argText(arg as never, schema);
      expect({ arg, text, back: parseArgText(text, schema).arg }).toEqual({ arg, text, back: arg });
    }
    expect(argText({ param: 'volume' })).toBe('#volume');
    expect(argText({ var: 'mass' })).toBe('$mass');
    expect(argText({ value: '42' }, null)).toBe('"42"');
    expect(argText(undefined)).toBe('');
  });

  it("describes an argument for its label and lists a method's arguments in order", () => {
    expect(describeSchema(VOLUME)).toBe('number (0 < v ≤ 50)');
    expect(describeSchema({ type: 'integer', minimum: 1 })).toBe('integer (1 ≤ v)');
    expect(describeSchema({ enum: ['slow', 'fast'] })).toBe('one of "slow", "fast"');
    expect(describeSchema({})).toBe('JSON');
    expect(argFields(METHODS['stirrer.set_speed'].params).map((f) => [f.name, f.required])).toEqual([
      ['rpm', false], // required, but it has a default
      ['mode', false],
      ['on', false],
      ['plan', false],
    ]);
    expect(argFields(METHODS['pump.dose'].params)).toEqual([{ name: 'volume_ml', schema: VOLUME, required: true }]);
    expect(argFields(undefined)).toEqual([]);
  });
});

describe('paths and structure', () => {
  it('parses step paths as the server names them', () => {
    expect(parsePath('main[2].then[0].steps')).toEqual(['main', 2, 'then', 0, 'steps']);
    expect(parsePath('prep')).toEqual(['prep']);
    expect(() => parsePath('main[x]')).toThrow();
    expect(() => parsePath('')).toThrow();
  });

  it('finds lists and steps by path, and gives an if an else list when it needs one', () => {
    const doc = sample();
    expect(listAt(doc, 'main[0].steps')).toHaveLength(2);
    expect(stepAt(doc, 'main[0].steps[1]')).toMatchObject({ method: 'weigh' });
    const bare = normalise({ name: 'x', main: [{ kind: 'if', condition: { left: { value: 1 }, op: '==', right: { value: 1 } }, then: [] }] });
    expect(bare.main[0]).toMatchObject({ else: [] });
    expect(() => listAt(doc, 'main[5].steps')).toThrow();
    expect(() => listAt(doc, 'main[0]')).toThrow(/not a step list/);
  });

  it('inserts, removes and moves steps, also between nested lists', () => {
    const doc = sample();
    expect(removeStep(doc, 'main[0].steps[0]')).toMatchObject({ method: 'dose' });
    expect(listAt(doc, 'main[0].steps').map((s) => (s as { method: string }).method)).toEqual(['weigh']);
    // into the if's else, from the repeat
    expect(moveStep(doc, 'main[0].steps', 0, 'main[1].else', 0)).toBe(true);
    expect(stepAt(doc, 'main[1].else[0]')).toMatchObject({ method: 'weigh' });
    // a step out of a block to the top level, before the block
    expect(moveStep(doc, 'main[1].then', 0, 'main', 0)).toBe(true);
    expect(doc.main.map((s) => s.kind)).toEqual(['call', 'repeat', 'if']);
    // within one list: Sortable's newIndex is the position after removal
    expect(moveStep(doc, 'main', 0, 'main', 2)).toBe(true);
    expect(doc.main.map((s) => s.kind)).toEqual(['repeat', 'if', 'call']);
    // across phases
    expect(moveStep(doc, 'main', 2, 'prep', 0)).toBe(true);
    expect(doc.prep).toHaveLength(1);
  });

  it('moves a step from an earlier sibling into a later block (indices shift on removal)', () => {
    const doc = normalise({ name: 'x' });
    insertStep(doc, 'main', 0, newCall('balance', 'weigh'));
    insertStep(doc, 'main', 1, newBlock('repeat'));
    expect(moveStep(doc, 'main', 0, 'main[1].steps', 0)).toBe(true);
    expect(doc.main).toHaveLength(1);
    expect(doc.main[0]).toMatchObject({ kind: 'repeat', steps: [{ method: 'weigh' }] });
  });

  it('refuses to move a block into itself', () => {
    const doc = sample();
    const before = JSON.stringify(doc);
    expect(moveStep(doc, 'main', 0, 'main[0].steps', 0)).toBe(false);
    expect(moveStep(doc, 'main', 1, 'main[1].then', 1)).toBe(false);
    expect(JSON.stringify(doc)).toBe(before);
  });

  it('says where a list is in words', () => {
    const doc = sample();
    expect(listLabel(doc, 'main')).toBe('Main');
    expect(listLabel(doc, 'main[0].steps')).toBe('Main › repeat (step 1)');
    expect(listLabel(doc, 'main[1].else')).toBe('Main › if (step 2) › else');
  });

  it('summarises steps in one line', () => {
    const call: Step = { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } }, save_as: 'dosed' };
    expect(summary(call)).toBe('pump.dose(volume_ml: #volume) → dosed');
    expect(summary({ kind: 'if', condition: { left: { var: 'mass' }, op: '>', right: { value: 1 } }, then: [] })).toBe('if $mass > 1');
    expect(summary({ kind: 'wait', seconds: 3 })).toBe('wait 3 s');
  });
});

describe('parameters, variables and outputs', () => {
  it('declares the parameters #name refers to, typed by the argument, once', () => {
    const doc = sample();
    setArg(stepAt(doc, 'main[0].steps[0]'), 'volume_ml', { param: 'volume' });
    setArg(stepAt(doc, 'main[1].then[0]'), 'volume_ml', { param: 'volume' });
    insertStep(doc, 'main', 2, {
      kind: 'call',
      instrument: 'stirrer',
      method: 'set_speed',
      args: { rpm: { param: 'rpm' }, on: { param: 'stir' }, mode: { param: 'mode' }, plan: { param: 'bad name' } },
    });
    const ifStep = stepAt(doc, 'main[1]');
    if (ifStep.kind === 'if') ifStep.condition.right = { param: 'threshold' };
    expect(declareMissingParams(doc, lookup)).toEqual(['volume', 'threshold', 'rpm', 'stir', 'mode']);
    expect(doc.parameters).toEqual([
      { name: 'volume', type: 'number' },
      { name: 'threshold', type: 'number' },
      { name: 'rpm', type: 'integer' },
      { name: 'stir', type: 'boolean' },
      { name: 'mode', type: 'string' },
    ]);
    expect(declareMissingParams(doc, lookup)).toEqual([]);
    expect(paramUsage(doc).get('volume')).toBe(2);
  });

  it('infers parameter types from schemas', () => {
    expect(paramTypeFor({ type: 'number' })).toBe('number');
    expect(paramTypeFor({ type: ['integer', 'null'] })).toBe('integer');
    expect(paramTypeFor({ type: 'string' })).toBe('string');
    expect(paramTypeFor({ enum: [1, 2] })).toBe('integer');
    expect(paramTypeFor({ type: 'array' })).toBe('string');
    expect(paramTypeFor(null)).toBe('number');
  });

  it('renames a parameter with its references', () => {
    const doc = sample();
    doc.parameters.push({ name: 'v', type: 'number' });
    setArg(stepAt(doc, 'main[0].steps[0]'), 'volume_ml', { param: 'v' });
    renameParam(doc, 'v', 'volume');
    expect(doc.parameters[0].name).toBe('volume');
    expect(stepAt(doc, 'main[0].steps[0]')).toMatchObject({ args: { volume_ml: { param: 'volume' } } });
  });

  it('parses parameter defaults by type', () => {
    expect(parseDefault('1.5', 'number')).toEqual({ value: 1.5 });
    expect(parseDefault('', 'number')).toEqual({ value: undefined });
    expect(parseDefault('2.5', 'integer').problem).toMatch(/whole/);
    expect(parseDefault('x', 'number').problem).toMatch(/not a number/);
    expect(parseDefault('true', 'boolean')).toEqual({ value: true });
    expect(parseDefault(' a b ', 'string')).toEqual({ value: ' a b ' });
  });

  it('lists saved variables in document order and keeps outputs in that order', () => {
    const doc = sample();
    insertStep(doc, 'main', 0, { kind: 'call', instrument: 'pump', method: 'dose', args: {}, save_as: 'dosed' });
    insertStep(doc, 'prep', 0, { kind: 'call', instrument: 'balance', method: 'weigh', args: {}, save_as: 'tare' });
    expect(savedVars(doc)).toEqual(['tare', 'dosed', 'mass']);
    expect(savedVars(doc, 'main')).toEqual(['dosed', 'mass']);
    setOutput(doc, 'mass', true);
    setOutput(doc, 'dosed', true);
    expect(doc.outputs).toEqual(['dosed', 'mass']);
    setOutput(doc, 'dosed', false);
    expect(doc.outputs).toEqual(['mass']);
  });

  it('warns about a repeat or an if with nothing to run', () => {
    expect(blockWarning(newBlock('repeat'))).toBe('This repeat has no steps: drag steps into it, or delete it.');
    expect(blockWarning({ kind: 'repeat', times: 0, steps: [newCall('pump', 'dose')] })).toBe('This repeat runs its steps 0 times: they never run.');
    expect(blockWarning({ kind: 'repeat', times: 2, steps: [newCall('pump', 'dose')] })).toBeNull();
    expect(blockWarning(newBlock('if'))).toBe('This if has no steps in either branch: it does nothing.');
    const ifElse = newBlock('if');
    if (ifElse.kind === 'if') ifElse.else = [newCall('pump', 'dose')];
    expect(blockWarning(ifElse)).toBeNull();
    expect(blockWarning(newCall('pump', 'dose'))).toBeNull();
  });

  it("offers the fields of a method's declared return object or tuple as outputs, and the server accepts them", () => {
    const doc = sample();
    insertStep(doc, 'main', 0, { kind: 'call', instrument: 'reactor', method: 'run', args: {}, save_as: 'run' });
    insertStep(doc, 'main', 1, { kind: 'call', instrument: 'stage', method: 'position', args: {}, save_as: 'pos' });
    insertStep(doc, 'prep', 0, { kind: 'call', instrument: 'reactor', method: 'run', args: {}, save_as: 'warmup' });
    expect(outputChoices(doc, lookup)).toEqual(['run', 'run.yield', 'run.purity', 'pos', 'pos.0', 'pos.1', 'mass']);
    setOutput(doc, 'mass', true);
    setOutput(doc, 'run.yield', true);
    setOutput(doc, 'pos.1', true);
    expect(doc.outputs).toEqual(['run.yield', 'pos.1', 'mass']);
    for (const p of ['main[2].steps[0]', 'main[3].then[0]']) setArg(stepAt(doc, p), 'volume_ml', { value: 1 });
    expect(validateWorkflow(toDocument(doc), deckOf()).outputs).toEqual(['run.yield', 'pos.1', 'mass']);
  });

  it('warns about an output only when its variable is not saved in main: a field of an undeclared dict result is fine', () => {
    const doc = sample();
    // balance.weigh declares no result: a Python `-> dict` method, an ivoryOS driver's usual result
    insertStep(doc, 'main', 0, { kind: 'call', instrument: 'balance', method: 'weigh', args: {}, save_as: 'cell' });
    insertStep(doc, 'prep', 0, { kind: 'call', instrument: 'balance', method: 'weigh', args: {}, save_as: 'tare' });
    doc.outputs = ['cell.current_ma', 'cell', 'tare.mass', 'nothing.x'];
    expect(outputChoices(doc, lookup)).not.toContain('cell.current_ma'); // not declared, so not offered...
    expect(outputWarning(doc, 'cell.current_ma')).toBeNull(); // ...yet saved in main: no warning
    expect(outputWarning(doc, 'cell')).toBeNull();
    expect(outputWarning(doc, 'tare.mass')).toBe('saved only outside main');
    expect(outputWarning(doc, 'nothing.x')).toBe('not saved in main');
    // an output with a name of its own (an imported script's `return {"power": cell["power_mw"]}`) is judged by its source
    expect(outputWarning(doc, { name: 'power', from: 'cell.power_mw' })).toBeNull();
    doc.outputs = [{ name: 'power', from: 'cell.power_mw' }];
    setOutput(doc, 'cell', true);
    expect(doc.outputs).toEqual([{ name: 'power', from: 'cell.power_mw' }, 'cell']);
    setOutput(doc, 'power', false);
    expect(doc.outputs).toEqual(['cell']);
  });

  it('ticks the outputs of a newly saved variable: its return fields when it has them, else the variable', () => {
    const doc = sample();
    const before = outputChoices(doc, lookup); // ['mass'], saved before: not ticked again
    insertStep(doc, 'main', 0, { kind: 'call', instrument: 'reactor', method: 'run', args: {}, save_as: 'run' });
    insertStep(doc, 'main', 1, { kind: 'call', instrument: 'balance', method: 'weigh', args: {}, save_as: 'tare' });
    expect(tickNewOutputs(doc, lookup, before)).toEqual(['run.yield', 'run.purity', 'tare']);
    expect(doc.outputs).toEqual(['run.yield', 'run.purity', 'tare']);
    // unticked by hand, it stays unticked while the variable stays saved
    setOutput(doc, 'run.purity', false);
    expect(tickNewOutputs(doc, lookup, outputChoices(doc, lookup))).toEqual([]);
  });
});

describe('the document the builder saves', () => {
  it('drops empty optional parts, so a loaded document compares equal to itself saved', () => {
    const doc = sample();
    stepAt(doc, 'main[0].steps[0]').label = '  ';
    const out = toDocument(doc);
    expect(out.main[1]).not.toHaveProperty('else');
    expect(out.main[0]).not.toHaveProperty('label');
    expect(out.cleanup[0]).toEqual({ kind: 'wait', seconds: 1 });
    const pause = toDocument(normalise({ name: 'p', main: [newBlock('pause')] }));
    expect(pause.main[0]).toEqual({ kind: 'pause' });
    expect(JSON.stringify(toDocument(normalise(out)))).toBe(JSON.stringify(out));
  });

  it('builds the DESIGN.md example that the server accepts', () => {
    const doc = normalise({ name: 'dose-and-weigh' });
    insertStep(doc, 'main', 0, newCall('pump', 'dose'));
    insertStep(doc, 'main', 1, newCall('balance', 'weigh'));
    setArg(stepAt(doc, 'main[0]'), 'volume_ml', parseArgText('#volume', VOLUME).arg);
    (stepAt(doc, 'main[1]') as { save_as?: string }).save_as = 'mass';
    declareMissingParams(doc, lookup);
    setOutput(doc, 'mass', true);
    const deck = deckOf();
    const wf = validateWorkflow(toDocument(doc), deck);
    expect(wf).toMatchObject({ parameters: [{ name: 'volume', type: 'number' }], outputs: ['mass'], main: [{ args: { volume_ml: { param: 'volume' } } }, { save_as: 'mass' }] });
  });
});

describe('placing server errors', () => {
  it('finds the step, the parameter or the field a detail names', () => {
    expect(placeError('main[1].args.volume_ml')).toEqual({ where: 'step', step: 'main[1]', field: 'args.volume_ml' });
    expect(placeError('prep[0].then[2].steps[1].method')).toEqual({ where: 'step', step: 'prep[0].then[2].steps[1]', field: 'method' });
    expect(placeError('main[0].steps')).toEqual({ where: 'step', step: 'main[0]', field: 'steps' });
    expect(placeError('cleanup[3]')).toEqual({ where: 'step', step: 'cleanup[3]', field: '' });
    expect(placeError('parameters[1].default')).toEqual({ where: 'parameters', index: 1, field: 'default' });
    expect(placeError('outputs[0]')).toEqual({ where: 'outputs', index: 0 });
    expect(placeError('name')).toEqual({ where: 'name' });
    expect(placeError('main')).toEqual({ where: 'general' });
    expect(placeError(undefined)).toEqual({ where: 'general' });
  });
});
