/**
 * The safety file's format (validation names each problem by its path) and the evaluator (limits, trays,
 * declared choices, rules with every kind of operand). The guard on the deck's call path is tested in
 * test/api/safety.test.ts.
 */
import { Evaluator, Unknown, type CallInfo } from '../../core/safety/evaluate.js';
import { trayGrid, validate, type SafetyConfig } from '../../core/safety/format.js';

const FILE = {
  format: 'ivoryos-safety/1',
  enabled: true,
  trays: { vial_rack: { label: 'Vial rack', rows: 4, columns: 6, naming: 'A1', order: 'row', blocked: ['D6'] } },
  limits: [
    { target: 'reactor', method: 'set_temperature', param: 'setpoint_c', min: 0, max: 120 },
    { target: 'class:SyringePump', method: 'dispense', param: 'volume_ml', min: 0, max: 10 },
    { target: 'pump2', method: 'dispense', param: 'volume_ml', max: 2 },
    { target: 'reactor', method: 'load_vial', param: 'vial_id', tray: 'vial_rack' },
    { target: 'handler', method: 'place', param: 'cfg.station', allowed: ['rack', 'reactor'] },
  ],
  rules: [
    {
      id: 'hot',
      name: 'No dispensing into a hot vial',
      enabled: true,
      when: { target: 'class:SyringePump', method: 'dispense' },
      if: [{ left: { arg: 'volume_ml' }, op: '>', right: { value: 1 } }],
      require: [{ left: { read: 'reactor.read_temperature' }, op: '<=', right: { value: 60 } }],
      message: 'Cool the reactor below 60 C before dispensing.',
    },
    { id: 'door', when: { target: 'balance', method: 'tare' }, require: [{ left: { state: 'balance_door' }, op: '==', right: { value: 'closed' } }] },
    { id: 'after', when: { target: 'reactor', method: 'start' }, require: [{ left: { last: 'reactor.set_temperature.setpoint_c' }, op: '<', right: { value: 100 } }] },
  ],
  states: { balance_door: { label: 'Balance door', values: ['open', 'closed'], set_by: [{ target: 'balance', method: 'open_door', value: 'open' }] } },
};

function config(raw: unknown = FILE): SafetyConfig {
  const r = validate(raw);
  if (!r.config) throw new Error(JSON.stringify(r.problems));
  return r.config;
}

const call = (instrument: string, classes: string[], method: string, args: Record<string, unknown>, params?: CallInfo['params']): CallInfo => ({ instrument, classes, method, args, params });

const readings = (values: Record<string, unknown> = {}, states: Record<string, unknown> = {}, last: Record<string, unknown> = {}) => ({
  read: async (ref: string) => (ref in values ? values[ref] : new Unknown('no such reading')),
  last: (ref: string) => (ref in last ? last[ref] : new Unknown('never sent')),
  state: async (name: string) => (name in states ? states[name] : new Unknown('nothing has set it')),
});

describe('the safety file', () => {
  test('the format documentation example validates', () => {
    expect(validate(FILE).problems).toEqual([]);
  });

  test('every problem is named by its path', () => {
    const bad = {
      format: 'ivoryos-safety/2',
      trays: { rack: { rows: 0, columns: 6, naming: 'B2' } },
      limits: [{ target: 'r', method: 'm', param: 'p', min: 'x' }],
      rules: [{ when: { target: 'r' }, require: [], extra: 1 }],
    };
    const paths = validate(bad).problems.map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining(['format', 'trays.rack.rows', 'trays.rack.naming', 'limits[0].min', 'rules[0].require', 'rules[0]']));
    const unknown = validate(bad).problems.find((p) => p.path === 'rules[0]');
    expect(unknown?.message).toMatch(/unknown field "extra"/);
  });

  test('what the shape cannot say: min above max, undefined tray and state, duplicate limit, bad blocked position', () => {
    const r = validate({
      trays: { rack: { rows: 2, columns: 2, blocked: ['C1'] } },
      limits: [
        { target: 'r', method: 'm', param: 'p', min: 5, max: 1 },
        { target: 'r', method: 'm', param: 'q', tray: 'plate' },
        { target: 'r', method: 'm', param: 'p', max: 3 },
        { target: 'r', method: 'm', param: 'z' },
      ],
      rules: [
        {
          when: { target: 'r' },
          require: [
            { left: { state: 'lid' }, op: '==', right: { value: 'on' } },
            { left: { arg: 'x' }, op: '<', right: { value: 1 } },
          ],
        },
      ],
    });
    expect(r.config).toBeNull();
    const by = Object.fromEntries(r.problems.map((p) => [p.path, p.message]));
    expect(by['trays.rack.blocked[0]']).toMatch(/not a position/);
    expect(by['limits[0].min']).toMatch(/above the maximum/);
    expect(by['limits[1].tray']).toMatch(/not defined/);
    expect(by['limits[2]']).toMatch(/already has a limit \(limits\[0\]\)/);
    expect(by['limits[3]']).toMatch(/sets nothing/);
    expect(by['rules[0].require[0].left.state']).toMatch(/not defined/);
    expect(by['rules[0].require[1].left.arg']).toMatch(/must name one method/);
  });

  test('trays are named A1, A01, 1 or 0, along rows or columns', () => {
    expect(trayGrid({ rows: 2, columns: 3, naming: 'A1', order: 'row' })).toEqual([
      ['A1', 'A2', 'A3'],
      ['B1', 'B2', 'B3'],
    ]);
    expect(trayGrid({ rows: 1, columns: 2, naming: 'A01', order: 'row' })[0]).toEqual(['A01', 'A02']);
    expect(trayGrid({ rows: 2, columns: 2, naming: '1', order: 'column' })).toEqual([
      ['1', '3'],
      ['2', '4'],
    ]);
    expect(trayGrid({ rows: 2, columns: 2, naming: '0', order: 'row' })).toEqual([
      ['0', '1'],
      ['2', '3'],
    ]);
  });
});

describe('the evaluator', () => {
  const ev = new Evaluator(config());

  test('a number range: below, above, inside; an instrument limit wins over its class', () => {
    expect(ev.limits(call('reactor', ['Reactor'], 'set_temperature', { setpoint_c: 121 }))[0]).toMatchObject({ field: 'setpoint_c', value: 121, limit: { source: 'limits[0]', max: 120 } });
    expect(ev.limits(call('reactor', ['Reactor'], 'set_temperature', { setpoint_c: -1 }))[0].message).toMatch(/below the minimum of 0/);
    expect(ev.limits(call('reactor', ['Reactor'], 'set_temperature', { setpoint_c: 120 }))).toEqual([]);
    expect(ev.limits(call('pump1', ['SyringePump'], 'dispense', { volume_ml: 5 }))).toEqual([]);
    expect(ev.limits(call('pump2', ['SyringePump'], 'dispense', { volume_ml: 5 }))[0].limit).toMatchObject({ source: 'limits[2]', max: 2 });
    expect(ev.limits(call('reactor', ['Reactor'], 'set_temperature', { setpoint_c: 'hot' }))[0].message).toMatch(/not a number/);
  });

  test('an omitted argument is checked at the driver default', () => {
    const params = { type: 'object', properties: { setpoint_c: { type: 'number', default: 150 } } };
    expect(ev.limits(call('reactor', ['Reactor'], 'set_temperature', {}, params))[0]).toMatchObject({ value: 150 });
  });

  test('tray positions: off the tray, blocked, fine; a dotted param; allowed values', () => {
    expect(ev.limits(call('reactor', [], 'load_vial', { vial_id: 'A7' }))[0].message).toMatch(/not a position on Vial rack/);
    expect(ev.limits(call('reactor', [], 'load_vial', { vial_id: 'D6' }))[0].message).toMatch(/blocked position/);
    expect(ev.limits(call('reactor', [], 'load_vial', { vial_id: 'B3' }))).toEqual([]);
    expect(ev.limits(call('handler', [], 'place', { cfg: { station: 'floor' } }))[0]).toMatchObject({ field: 'cfg.station', value: 'floor' });
    expect(ev.limits(call('handler', [], 'place', { cfg: { station: 'rack' } }))).toEqual([]);
  });

  test('declared choices hold with nothing configured; a list is checked item by item', () => {
    const params = { type: 'object', properties: { mode: { enum: ['fast', 'slow'] }, wells: { type: 'array', items: { anyOf: [{ const: 'A1' }, { const: 'A2' }] } } } };
    const none = new Evaluator(config({}));
    expect(none.limits(call('x', [], 'm', { mode: 'warp' }, params))[0]).toMatchObject({ field: 'mode', limit: { source: 'declared' } });
    expect(none.limits(call('x', [], 'm', { mode: 'fast', wells: ['A1', 'B9'] }, params))).toMatchObject([{ field: 'wells', value: 'B9' }]);
    expect(none.limits(call('x', [], 'm', { mode: 'slow' }, params))).toEqual([]);
  });

  test('a rule with a live reading blocks and unblocks; its `if` decides whether it applies', async () => {
    const hot = await ev.check(call('p', ['SyringePump'], 'dispense', { volume_ml: 5 }), readings({ 'reactor.read_temperature': 80 }));
    expect(hot.allowed).toBe(false);
    expect(hot.problems[0]).toMatchObject({ rule: 'hot' });
    expect(hot.problems[0].message).toMatch(/Cool the reactor below 60 C before dispensing \(reactor.read_temperature is 80, must be at most 60\)/);
    expect((await ev.check(call('p', ['SyringePump'], 'dispense', { volume_ml: 5 }), readings({ 'reactor.read_temperature': 40 }))).allowed).toBe(true);
    expect((await ev.check(call('p', ['SyringePump'], 'dispense', { volume_ml: 0.5 }), readings({ 'reactor.read_temperature': 80 }))).allowed).toBe(true);
  });

  test('what cannot be determined blocks: a failed reading, an unknown state, a value never sent', async () => {
    const failed = await ev.check(call('p', ['SyringePump'], 'dispense', { volume_ml: 5 }), readings());
    expect(failed.problems[0].message).toMatch(/unknown: no such reading/);
    expect((await ev.check(call('balance', [], 'tare', {}), readings())).problems[0].message).toMatch(/the state balance_door is unknown/);
    expect((await ev.check(call('balance', [], 'tare', {}), readings({}, { balance_door: 'closed' }))).allowed).toBe(true);
    expect((await ev.check(call('balance', [], 'tare', {}), readings({}, { balance_door: 'open' }))).allowed).toBe(false);
    expect((await ev.check(call('reactor', [], 'start', {}), readings())).allowed).toBe(false);
    expect((await ev.check(call('reactor', [], 'start', {}), readings({}, {}, { 'reactor.set_temperature.setpoint_c': 90 }))).allowed).toBe(true);
  });

  test('a reading path picks a field; `in` compares against a list', async () => {
    const e = new Evaluator(
      config({
        rules: [{ id: 'r', when: { target: 'a', method: 'go' }, require: [{ left: { read: 'b.status', path: 'door' }, op: 'in', right: { value: ['closed', 'locked'] } }] }],
      }),
    );
    expect((await e.check(call('a', [], 'go', {}), readings({ 'b.status': { door: 'closed' } }))).allowed).toBe(true);
    expect((await e.check(call('a', [], 'go', {}), readings({ 'b.status': { door: 'open' } }))).allowed).toBe(false);
    expect((await e.check(call('a', [], 'go', {}), readings({ 'b.status': {} }))).problems[0].message).toMatch(/no field "door"/);
  });

  test('a disabled file checks nothing; a disabled rule is skipped', async () => {
    const off = new Evaluator(config({ ...FILE, enabled: false }));
    expect(off.limits(call('reactor', [], 'set_temperature', { setpoint_c: 500 }))).toEqual([]);
    const ruleOff = new Evaluator(config({ ...FILE, rules: [{ ...FILE.rules[0], enabled: false }] }));
    expect((await ruleOff.check(call('p', ['SyringePump'], 'dispense', { volume_ml: 5 }), readings())).allowed).toBe(true);
  });
});
