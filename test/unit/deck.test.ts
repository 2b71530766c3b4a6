import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { defineInstrument, z } from '../../core/contracts/index.js';
import { Deck, NO_RECORDS, coerceFormArgs, memoryRecords } from '../../core/deck/index.js';
import { LabError } from '../../core/errors.js';
import { labError } from '../helpers/errors.js';
import { until } from '../helpers/runner-lab.js';

const FIXTURES = resolve('test/fixtures/plugins');

/** A test pump that tracks how many calls run at once, per instance and over all instances. */
let globalActive = 0;
let globalMax = 0;
const testPump = defineInstrument({
  name: 'test-pump',
  version: '1.0.0',
  options: z.object({ delay_ms: z.number().min(0).default(0), label: z.string().default('p') }),
  create: (o) => ({ ...o, active: 0, maxActive: 0, order: [] as number[], disposed: false }),
  dispose: (p) => {
    p.disposed = true;
  },
  methods: {
    dose: {
      params: z.object({ volume_ml: z.number().gt(0).max(50), tag: z.number().optional() }),
      safety: 'hazardous',
      async run(p, { volume_ml, tag }) {
        p.active++;
        globalActive++;
        p.maxActive = Math.max(p.maxActive, p.active);
        globalMax = Math.max(globalMax, globalActive);
        await new Promise((r) => setTimeout(r, p.delay_ms)); // (the instrument takes its time)
        p.active--;
        globalActive--;
        if (tag !== undefined) p.order.push(tag);
        return volume_ml;
      },
    },
    fail: {
      params: z.object({}),
      run: () => {
        throw new Error('pump jammed');
      },
    },
    // hangs until the test lets it go (held), then ends as told
    hold: { params: z.object({ ml: z.number() }), run: () => new Promise((res, rej) => held.push({ res, rej })) },
    refuse: {
      params: z.object({}),
      run: () => {
        throw new LabError('invalid_input', 'the PC that drives it refused the arguments');
      },
    },
    nothing: { params: z.object({}), run: () => undefined },
    stats: { params: z.object({}), run: (p) => ({ maxActive: p.maxActive, order: p.order, disposed: p.disposed, label: p.label }) },
  },
});

/** The calls to `hold` hanging now: settle one to end it. */
const held: { res: (v: unknown) => void; rej: (e: unknown) => void }[] = [];

async function deckWith(names: string[], opts: { delay_ms?: number; busyTimeoutMs?: number } = {}) {
  const rec = memoryRecords();
  const deck = new Deck({ records: rec, busyTimeoutMs: opts.busyTimeoutMs });
  deck.setFileDrivers('/virtual/test-pump.ts', 'imported', [testPump]);
  for (const n of names) await deck.connect('test-pump', n, { delay_ms: opts.delay_ms ?? 0 });
  return { deck, rows: rec.rows };
}

describe('Deck.call', () => {
  it('runs the method, records one step (begun before the driver, completed after) and returns its id', async () => {
    const { deck, rows } = await deckWith(['pump']);
    const before = Date.now();
    const r = await deck.call('pump', 'dose', { volume_ml: 2.5 }, { userId: 7, runId: 3, phase: 'main', iteration: 1, stepIndex: 0 });
    expect(r).toEqual({ taskId: 1, output: 2.5 });
    expect(rows).toHaveLength(1);
    const s = rows[0];
    expect(s).toMatchObject({ instrument: 'pump', method: 'dose', args: { volume_ml: 2.5 }, output: 2.5, status: 'ok', error: null, userId: 7, runId: 3, phase: 'main', iteration: 1, stepIndex: 0 });
    expect(s.startedAt.getTime()).toBeGreaterThanOrEqual(before - 1);
    expect(s.endedAt!.getTime()).toBeGreaterThanOrEqual(s.startedAt.getTime());
    await deck.close();
  });

  it('has the record of a call to a driver that hangs while it hangs (running, its args, no end), completed in place', async () => {
    const { deck, rows } = await deckWith(['pump']);
    let begun: number | null = null;
    const call = deck.call('pump', 'hold', { ml: 3 }, { userId: 4, onBegin: (id) => (begun = id) });
    await until(() => held.length === 1, 'the driver to be called');
    expect(begun).toBe(1);
    expect(rows).toEqual([expect.objectContaining({ id: 1, instrument: 'pump', method: 'hold', args: { ml: 3 }, status: 'running', output: null, endedAt: null, userId: 4, runId: null })]);
    held.shift()!.res(42);
    expect(await call).toEqual({ taskId: 1, output: 42 });
    expect(rows).toEqual([expect.objectContaining({ id: 1, args: { ml: 3 }, status: 'ok', output: 42, endedAt: expect.any(Date) })]);

    // one that hangs, then fails: the same record, in place, says so
    const failing = deck.call('pump', 'hold', { ml: 1 }, { userId: null });
    await until(() => held.length === 1, 'the driver to be called');
    expect(rows[1]).toMatchObject({ id: 2, status: 'running', endedAt: null });
    held.shift()!.rej(new Error('the pump jammed'));
    await expect(failing).rejects.toMatchObject({ code: 'instrument_error', data: { task_id: 2 } });
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatchObject({ id: 2, status: 'error', error: 'the pump jammed', endedAt: expect.any(Date) });
    await deck.close();
  });

  it("does not touch the driver when the call's record cannot be begun (a full disk), and says so", async () => {
    const records = { ...memoryRecords(), insert: async () => Promise.reject(new LabError('insufficient_storage', 'The record could not be stored: the disk is full.')) };
    const deck = new Deck({ records });
    deck.setFileDrivers('/virtual/test-pump.ts', 'imported', [testPump]);
    await deck.connect('test-pump', 'pump', {});
    await expect(deck.call('pump', 'hold', { ml: 1 }, { userId: null })).rejects.toMatchObject({
      code: 'insufficient_storage',
      message: expect.stringMatching(/^pump\.hold was not called: its record could not be written\. The record could not be stored/),
    });
    expect(held).toEqual([]);
    await deck.close();
  });

  it('keeps no record of a call refused before anything acted on it (the PC that drives it refused the arguments)', async () => {
    const { deck, rows } = await deckWith(['pump']);
    await expect(deck.call('pump', 'refuse', {}, { userId: null })).rejects.toMatchObject({ code: 'invalid_input' });
    expect(rows).toEqual([]);
    await deck.close();
  });

  it('turns undefined output into null', async () => {
    const { deck, rows } = await deckWith(['pump']);
    expect((await deck.call('pump', 'nothing', {}, { userId: null })).output).toBeNull();
    expect(rows[0].output).toBeNull();
    await deck.close();
  });

  it('rejects invalid arguments naming the field, and records nothing', async () => {
    const { deck, rows } = await deckWith(['pump']);
    let e = await labError(deck.call('pump', 'dose', { volume_ml: 0 }, { userId: null }));
    expect(e.code).toBe('invalid_input');
    expect(e.details).toEqual([{ field: 'volume_ml', message: 'must be greater than 0' }]);
    expect(e.message).toMatch(/volume_ml must be greater than 0/);
    e = await labError(deck.call('pump', 'dose', { volume_ml: 80 }, { userId: null }));
    expect(e.details).toEqual([{ field: 'volume_ml', message: 'must be at most 50' }]);
    e = await labError(deck.call('pump', 'dose', {}, { userId: null }));
    expect(e.details).toEqual([{ field: 'volume_ml', message: 'is required' }]);
    e = await labError(deck.call('pump', 'dose', { volume_ml: 'a lot' }, { userId: null }));
    expect(e.details).toEqual([{ field: 'volume_ml', message: 'must be a number' }]);
    e = await labError(deck.call('pump', 'dose', { volume: 1, volume_ml: 1 }, { userId: null }));
    expect(e.details?.[0].field).toBe('volume');
    expect(e.details?.[0].message).toMatch(/not a parameter/);
    e = await labError(deck.call('pump', 'dose', [1], { userId: null }));
    expect(e.code).toBe('invalid_input');
    expect(rows).toHaveLength(0);
    await deck.close();
  });

  it('answers not_found for an unknown instrument or method, saying what exists', async () => {
    const { deck } = await deckWith(['pump']);
    let e = await labError(deck.call('pmup', 'dose', {}, { userId: null }));
    expect(e.code).toBe('not_found');
    expect(e.message).toMatch(/"pmup"/);
    expect(e.message).toMatch(/pump/);
    e = await labError(deck.call('pump', 'dsoe', {}, { userId: null }));
    expect(e.code).toBe('not_found');
    expect(e.message).toMatch(/"dsoe".*dose, fail/);
    expect(() => deck.schema('nope')).toThrow(/No instrument "nope"/);
    expect(deck.has('pump')).toBe(true);
    expect(deck.has('nope')).toBe(false);
    await deck.close();
  });

  it('serialises calls to one instrument in arrival order, and runs different instruments concurrently', async () => {
    const { deck } = await deckWith(['p1', 'p2'], { delay_ms: 25 });
    await Promise.all([1, 2, 3].map((tag) => deck.call('p1', 'dose', { volume_ml: 1, tag }, { userId: null })));
    const s1 = (await deck.call('p1', 'stats', {}, { userId: null })).output as { maxActive: number; order: number[] };
    expect(s1.maxActive).toBe(1);
    expect(s1.order).toEqual([1, 2, 3]);

    globalMax = 0;
    await Promise.all([deck.call('p1', 'dose', { volume_ml: 1 }, { userId: null }), deck.call('p2', 'dose', { volume_ml: 1 }, { userId: null })]);
    expect(globalMax).toBe(2); // both were inside dose at the same time
    await deck.close();
  });

  it('gives up with busy when an instrument stays busy past the timeout', async () => {
    const { deck } = await deckWith(['slow'], { delay_ms: 150, busyTimeoutMs: 30 });
    const first = deck.call('slow', 'dose', { volume_ml: 1 }, { userId: null });
    const e = await labError(deck.call('slow', 'dose', { volume_ml: 1 }, { userId: null }));
    expect(e.code).toBe('busy');
    expect(e.message).toMatch(/slow is busy/);
    await expect(first).resolves.toMatchObject({ output: 1 });
    await deck.close();
  });

  it('refuses at once an instrument locked by another task; the owner and other instruments go on', async () => {
    const { deck } = await deckWith(['pump', 'other']);
    deck.lock(['pump'], '12');
    const e = await labError(deck.call('pump', 'dose', { volume_ml: 1 }, { userId: null }));
    expect(e.code).toBe('busy');
    expect(e.message).toBe('pump is in use by task 12.');
    await expect(deck.call('pump', 'dose', { volume_ml: 1 }, { userId: null, owner: '12' })).resolves.toMatchObject({ output: 1 });
    await expect(deck.call('other', 'dose', { volume_ml: 1 }, { userId: null })).resolves.toMatchObject({ output: 1 });
    expect(() => deck.lock(['other', 'pump'], 'task:13')).toThrow(/pump is in use by task 12/);
    expect(deck.lockedBy('other')).toBeUndefined(); // all-or-nothing
    deck.unlock('12');
    await expect(deck.call('pump', 'dose', { volume_ml: 1 }, { userId: null })).resolves.toMatchObject({ output: 1 });
    await deck.close();
  });

  it('records a failing call as an error step and throws instrument_error with its task id', async () => {
    const { deck, rows } = await deckWith(['pump']);
    const e = await labError(deck.call('pump', 'fail', {}, { userId: 4 }));
    expect(e.code).toBe('instrument_error');
    expect(e.message).toBe('pump jammed');
    expect(e.data?.task_id).toBe(1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ instrument: 'pump', method: 'fail', status: 'error', error: 'pump jammed', output: null, userId: 4 });
    // the instrument is free again
    await expect(deck.call('pump', 'dose', { volume_ml: 1 }, { userId: null })).resolves.toMatchObject({ taskId: 2 });
    await deck.close();
  });
});

describe('coerceFormArgs', () => {
  const schema = z.toJSONSchema(
    z.object({
      volume: z.number().default(1),
      count: z.number().int(),
      fast: z.boolean().optional(),
      mode: z.enum(['a', 'b']),
      level: z.union([z.literal(1), z.literal(2)]),
      name: z.string(),
      points: z.array(z.number()),
      extra: z.unknown(),
      maybe: z.number().nullable(),
    }),
    { io: 'input' },
  ) as Record<string, unknown>;

  it('types string fields by the JSON Schema', () => {
    const out = coerceFormArgs(schema, {
      volume: '',
      count: ' 3 ',
      fast: ['false', 'on'],
      mode: 'b',
      level: '2',
      name: '  x ',
      points: '[1, 2.5]',
      extra: '{"a": [1, null]}',
      maybe: '4',
      method: 'dose',
      _csrf: 'zzz',
    });
    expect(out).toEqual({ count: 3, fast: true, mode: 'b', level: 2, name: '  x ', points: [1, 2.5], extra: { a: [1, null] }, maybe: 4 });
  });

  it('reads boolean words and repeated array fields', () => {
    expect(coerceFormArgs(schema, { fast: '0' })).toEqual({ fast: false });
    expect(coerceFormArgs(schema, { fast: 'true' })).toEqual({ fast: true });
    expect(coerceFormArgs(schema, { points: ['1', '2'] })).toEqual({ points: [1, 2] });
  });

  it('names every bad field', () => {
    try {
      coerceFormArgs(schema, { count: 'three', extra: '{oops', fast: 'maybe' });
      throw new Error('expected an error');
    } catch (e) {
      expect(e).toBeInstanceOf(LabError);
      const err = e as LabError;
      expect(err.code).toBe('invalid_input');
      expect(err.details?.map((d) => d.field).sort()).toEqual(['count', 'extra', 'fast']);
      expect(err.message).toMatch(/extra: must be valid JSON/);
    }
  });
});

describe('drivers, connect and module loading', () => {
  it('connects temporary devices, checking names and options', async () => {
    const { deck } = await deckWith([]);
    const changes: number[] = [];
    deck.on('change', () => changes.push(1));
    expect(deck.drivers()).toEqual([expect.objectContaining({ name: 'test-pump', origin: 'imported', file: '/virtual/test-pump.ts', inferred: false, inferredFields: [] })]);
    expect((deck.drivers()[0].options as { properties: object }).properties).toHaveProperty('delay_ms');
    const s = await deck.connect('test-pump', 'pump_2', { label: 'second' });
    expect(s).toMatchObject({ name: 'pump_2', driver: 'test-pump', source: 'temporary' });
    expect(s.methods.map((m) => m.name)).toEqual(['dose', 'fail', 'hold', 'refuse', 'nothing', 'stats']);
    expect(s.methods[0]).toMatchObject({ safety: 'hazardous', order: 0, inferred: false });
    expect(changes).toHaveLength(1);
    expect((await deck.call('pump_2', 'stats', {}, { userId: null })).output).toMatchObject({ label: 'second' });

    expect((await labError(deck.connect('test-pump', 'pump_2', {}))).code).toBe('conflict');
    const bad = await labError(deck.connect('test-pump', 'pump_3', { delay_ms: -1 }));
    expect(bad.code).toBe('invalid_input');
    expect(bad.details).toEqual([{ field: 'delay_ms', message: 'must be at least 0' }]);
    expect((await labError(deck.connect('nope', 'x', {}))).code).toBe('not_found');
    expect((await labError(deck.connect('test-pump', 'bad name', {}))).details?.[0].field).toBe('device_name');
    await deck.close();
  });

  it('disposes every instance on close', async () => {
    const { deck } = await deckWith(['a']);
    let disposed = 0;
    const d = defineInstrument({ ...testPump, name: 'counted', dispose: () => void disposed++ });
    deck.setFileDrivers('/virtual/counted.ts', 'imported', [d]);
    await deck.connect('counted', 'c1', {});
    await deck.connect('counted', 'c2', {});
    await deck.close();
    expect(disposed).toBe(2);
    expect(deck.list()).toEqual([]);
  });

  it('imports an API module: defineInstrument drivers and plain classes become connectable', async () => {
    const { deck } = await deckWith([]);
    expect(await deck.importModule(join(FIXTURES, 'thermo-driver.ts'))).toEqual(['fx-thermo']);
    expect(await deck.importModule(join(FIXTURES, 'shaker-class.ts'))).toEqual(['Shaker']); // Helper has no methods
    const shaker = deck.drivers().find((d) => d.name === 'Shaker')!;
    expect(shaker).toMatchObject({ origin: 'imported', inferred: true, description: 'An orbital shaker driven over a serial port.' });
    expect(shaker.options).toMatchObject({ properties: { port: { type: 'string', default: 'COM3' }, baud: { type: 'number', default: 9600 } } });
    await deck.connect('Shaker', 'sh', { port: 'COM9' });
    expect((await deck.call('sh', 'spin', { rpm: 300 }, { userId: null })).output).toEqual({ rpm: 300, ramp: false, port: 'COM9' });
    await deck.connect('fx-thermo', 'th', { unit: 'K' });
    expect((await deck.call('th', 'read', {}, { userId: null })).output).toBeCloseTo(294.65);
    // re-importing the same file replaces its drivers; no drivers at all is an error naming the file
    expect(await deck.importModule(join(FIXTURES, 'thermo-driver.ts'))).toEqual(['fx-thermo']);
    const e = await labError(deck.importModule(join(FIXTURES, 'no-instruments.ts')));
    expect(e.code).toBe('invalid_input');
    expect(e.message).toMatch(/No instrument drivers found in .*no-instruments\.ts/);
    await deck.close();
  });

  it('loads deck modules: driver devices, plain objects and instances, named or as a default object', async () => {
    const { deck } = await deckWith([]);
    expect(await deck.loadDeck(join(FIXTURES, 'deck-module.ts'))).toEqual(['t1', 'valve', 'counter']);
    expect(deck.schema('t1')).toMatchObject({ driver: 'fx-thermo', source: 'deck' });
    expect((await deck.call('t1', 'read', {}, { userId: null })).output).toBe(22.5);
    expect((await deck.call('valve', 'open', {}, { userId: null })).output).toBe('open');
    const counter = deck.schema('counter');
    expect(counter.methods[0]).toMatchObject({ name: 'add', inferred: true, description: 'Add to the counter.' });
    expect(counter.methods[0].params).toMatchObject({ properties: { by: { type: 'number', default: 1, description: 'How much' } } });
    expect((await deck.call('counter', 'add', { by: 5 }, { userId: null })).output).toBe(5);

    expect(await deck.importDeck(join(FIXTURES, 'deck-default.ts'))).toEqual(['inner_t', 'light']);
    expect(deck.schema('light').source).toBe('temporary');
    expect((await deck.call('inner_t', 'read', {}, { userId: null })).output).toBeCloseTo(294.65);
    // the same names again: conflict, nothing half-loaded
    const e = await labError(deck.importDeck(join(FIXTURES, 'deck-module.ts')));
    expect(e.code).toBe('conflict');
    expect(e.message).toMatch(/t1, valve, counter/);
    await deck.close();
  });

  it('reports loader errors with the file and the loader message', async () => {
    const { deck } = await deckWith([]);
    const dir = mkdtempSync(join(tmpdir(), 'labdeck-deck-'));
    const broken = join(dir, 'broken.ts');
    writeFileSync(broken, 'export const pump = {\n  dose( {\n};\n');
    const cases: [string, RegExp][] = [
      [join(dir, 'missing.ts'), /missing\.ts: no such file/],
      [dir, /not a file/],
      [broken, /broken\.ts.*(Unexpected|Syntax|ParseError)/i],
      [join(FIXTURES, 'throws-on-load.ts'), /throws-on-load\.ts: boom: the serial port is missing/],
      [join(FIXTURES, 'no-instruments.ts'), /No instruments found in .*no-instruments\.ts/],
    ];
    for (const [file, re] of cases) {
      const e = await labError(deck.loadDeck(file));
      expect(e.code).toBe('invalid_input');
      expect(e.message).toMatch(re);
      expect(e.details?.[0].field).toBe('filepath');
    }
    expect(deck.list()).toEqual([]);
    await deck.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads the demo deck, including a zero-config stirrer with an inferred schema', async () => {
    const { deck } = await deckWith([]);
    expect(await deck.loadDeck(resolve('examples/demo-deck.ts'))).toEqual(['pump', 'balance', 'hotplate', 'reactor', 'noop', 'stirrer']);
    const stirrer = deck.schema('stirrer');
    expect(stirrer.methods.map((m) => m.name)).toEqual(['set_speed', 'stop', 'speed', 'program']);
    expect(stirrer.methods[0]).toMatchObject({ inferred: true, params: { properties: { rpm: { type: 'number', default: 300 } } } });
    expect(stirrer.methods[3].inferredFields).toEqual(['steps']);
    expect((await deck.call('stirrer', 'set_speed', {}, { userId: null })).output).toBe(300);
    expect((await deck.call('noop', 'ping', {}, { userId: null })).output).toBe('pong');
    await deck.close();
  });
});

describe('reserved device names', () => {
  it('refuses a reserved name on connect, and reports a device that already has one', async () => {
    const deck = new Deck({ records: NO_RECORDS });
    const thing = defineInstrument({ name: 'thing', version: '1', options: z.object({}), create: () => ({}), methods: { ping: { params: z.object({}), run: () => 'pong' } } });
    deck.setFileDrivers('/virtual/thing.ts', 'imported', [thing]);
    try {
      await deck.connect('thing', 'ok1', {});
      deck.reserve(['task']);
      await expect(deck.connect('thing', 'task', {})).rejects.toMatchObject({ code: 'invalid_input', details: [{ field: 'device_name', message: 'reserved name' }] });
      expect(() => deck.reserve(['ok1'])).toThrow(/"ok1"/);
    } finally {
      await deck.close();
    }
  });
});
