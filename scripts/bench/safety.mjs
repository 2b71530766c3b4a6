import { built, line, median, pct } from './common.mjs';
// The safety guard's added cost per call (issue 28): the full check of one call against a 50-limit, 10-rule
// file (limits for this method and others, rules that apply and rules that do not), p50 and p99.

export default async function run() {
  const { Evaluator, Unknown } = await built('core/safety/evaluate.js');
  const { validate } = await built('core/safety/format.js');
  const limits = [];
  for (let i = 0; i < 50; i++) {
    const instrument = i % 5 === 0 ? 'class:SyringePump' : `inst${i % 10}`;
    limits.push({ target: instrument, method: `m${i % 7}`, param: `p${i}`, min: 0, max: 100 + i });
  }
  limits[49] = { target: 'pump', method: 'dispense', param: 'vial', tray: 'rack' };
  limits[48] = { target: 'pump', method: 'dispense', param: 'volume_ml', min: 0, max: 10 };
  const rules = [];
  for (let i = 0; i < 10; i++) {
    rules.push({
      id: `r${i}`,
      when: { target: i < 4 ? 'class:SyringePump' : `inst${i}`, method: i < 4 ? 'dispense' : 'm1' },
      if: [{ left: { arg: 'volume_ml' }, op: '>', right: { value: 0.1 } }],
      require: [
        { left: { state: 'door' }, op: '==', right: { value: 'closed' } },
        { left: { last: 'pump.dispense.volume_ml' }, op: '<=', right: { value: 10 } },
      ],
      message: `rule ${i}`,
    });
  }
  const file = {
    format: 'ivoryos-safety/1',
    trays: { rack: { rows: 8, columns: 12, naming: 'A1', blocked: ['H12'] } },
    limits,
    rules,
    states: { door: { values: ['open', 'closed'], set_by: [{ target: 'door', method: 'close', value: 'closed' }] } },
  };
  const { config, problems } = validate(file);
  if (!config) throw new Error(JSON.stringify(problems));
  const ev = new Evaluator(config);
  const params = { type: 'object', properties: { volume_ml: { type: 'number', default: 1 }, vial: { type: 'string', default: 'A1' }, mode: { enum: ['fast', 'slow'] } } };
  const readings = {
    read: async () => new Unknown('none'),
    last: () => 2,
    state: async () => 'closed',
  };
  const call = { instrument: 'pump', classes: ['SyringePump'], method: 'dispense', args: { volume_ml: 2.5, vial: 'B3', mode: 'fast' }, params };
  for (let i = 0; i < 2000; i++) await ev.check(call, readings);
  const per = [];
  for (let batch = 0; batch < 200; batch++) {
    const t0 = performance.now();
    for (let i = 0; i < 100; i++) {
      const v = await ev.check(call, readings);
      if (!v.allowed) throw new Error(JSON.stringify(v.problems));
    }
    per.push((performance.now() - t0) / 100);
  }
  const p50 = median(per);
  line('safety guard per call p50 (50 limits, 10 rules)', `${(p50 * 1000).toFixed(1)} µs`, '≤ 50 µs', p50 <= 0.05);
  line('safety guard per call p99', `${(pct(per, 99) * 1000).toFixed(1)} µs`, '—');

  // how far a constrained space reaches (issue 28 item 3): twelve parameters under one budget, median of 20
  const { extents } = await built('core/safety/polytope.js');
  const { checkConstraints } = await built('core/contracts/index.js');
  const space = Array.from({ length: 12 }, (_, i) => ({ name: `x${i}`, type: 'range', bounds: [0, 100] }));
  const constraints = checkConstraints([space.map((s) => s.name).join(' + ') + ' <= 30', 'x0 - x1 <= 5'], space);
  const reach = [];
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    extents(space, constraints);
    reach.push(performance.now() - t0);
  }
  const ms = median(reach);
  line('reach of a 12-parameter constrained space (one budget)', `${ms.toFixed(1)} ms`, '≤ 1000 ms', ms <= 1000);
}
