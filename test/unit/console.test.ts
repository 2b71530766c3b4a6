import { runConsole, splitLastExpression, jsonSafe, type ConsoleDeck } from '../../core/console.js';
import type { InstrumentSchema, MethodSchema } from '../../core/contracts/index.js';
import { methodSchema } from '../helpers/schemas.js';

const method = (name: string, params: Record<string, unknown>, required: string[] = []): MethodSchema => methodSchema(name, { type: 'object', properties: params, required });

const schemas: InstrumentSchema[] = [
  {
    name: 'pump',
    driver: 'sim-pump',
    description: 'A syringe pump',
    source: 'deck',
    methods: [method('dose', { volume_ml: { type: 'number' }, rate: { type: 'number', default: 1 } }, ['volume_ml']), method('configure', { settings: { type: 'object' } }, ['settings'])],
  },
  { name: 'balance', driver: 'sim-balance', description: '', source: 'deck', methods: [method('weigh', {})] },
];

/** A fake deck that records calls and answers from a table. */
function fakeDeck(answer: (instrument: string, method: string, args: unknown) => unknown = () => null) {
  const calls: { instrument: string; method: string; args: unknown }[] = [];
  let taskId = 0;
  const deck: ConsoleDeck = {
    list: () => schemas,
    async call(instrument, method, args) {
      calls.push({ instrument, method, args });
      return { taskId: ++taskId, output: answer(instrument, method, args) };
    },
  };
  return { deck, calls };
}

describe('runConsole', () => {
  it('returns the value of a trailing expression', async () => {
    const { deck } = fakeDeck();
    expect(await runConsole('1+1', { deck })).toEqual({ success: true, result: 2, stdout: '', error: null });
    expect((await runConsole('const a = 20; a + 1;\n', { deck })).result).toBe(21);
    expect((await runConsole('let x = 1\nx + 41', { deck })).result).toBe(42);
  });

  it('captures console output and gives null when the snippet ends with a statement', async () => {
    const { deck } = fakeDeck();
    const r = await runConsole('for (let i = 0; i < 2; i++) console.log("i =", i, { a: [i] });\nconsole.error("oops")', {
      deck,
    });
    expect(r.success).toBe(true);
    expect(r.stdout).toBe('i = 0 { a: [ 0 ] }\ni = 1 { a: [ 1 ] }\noops\n');
    // console.error(...) is the last expression: its value, undefined, becomes null.
    expect(r.result).toBeNull();
    expect((await runConsole('const y = 3;\nif (y > 2) { console.log("big") }', { deck })).result).toBeNull();
  });

  it('awaits deck calls at top level, with an args object or positional arguments', async () => {
    const { deck, calls } = fakeDeck((i, m, a) => (m === 'weigh' ? 12.5 : { dosed: (a as { volume_ml: number }).volume_ml }));
    const r = await runConsole(
      [
        'const a = await deck.pump.dose({ volume_ml: 1 });',
        'const b = await deck.pump.dose(2, 0.5);',
        'await deck.pump.configure({ gain: 3 });', // the keys are not parameter names: it is `settings`
        'console.log(a.dosed + b.dosed);',
        'await deck.balance.weigh()',
      ].join('\n'),
      { deck },
    );
    expect(r).toEqual({ success: true, result: 12.5, stdout: '3\n', error: null });
    expect(calls).toEqual([
      { instrument: 'pump', method: 'dose', args: { volume_ml: 1 } },
      { instrument: 'pump', method: 'dose', args: { volume_ml: 2, rate: 0.5 } },
      { instrument: 'pump', method: 'configure', args: { settings: { gain: 3 } } },
      { instrument: 'balance', method: 'weigh', args: {} },
    ]);
  });

  it('exposes instruments, sleep and extra globals', async () => {
    const { deck } = fakeDeck();
    const r = await runConsole('await sleep(5); [instruments.map((i) => i.name), answer]', { deck, globals: { answer: 42 } });
    expect(r.result).toEqual([['pump', 'balance'], 42]);
  });

  it('refuses too many positional arguments', async () => {
    const { deck, calls } = fakeDeck();
    const r = await runConsole('await deck.pump.dose(1, 2, 3)', { deck });
    expect(r.success).toBe(false);
    expect(r.error).toMatch(/pump\.dose takes at most 2 argument\(s\) \(volume_ml, rate\), got 3/);
    expect(calls).toHaveLength(0);
  });

  it('strips TypeScript types', async () => {
    const { deck, calls } = fakeDeck(() => 7);
    const code = 'interface P { v: number }\nconst p: P = { v: 2 };\nconst w = (await deck.balance.weigh()) as number;\nw * p.v';
    expect(await runConsole(code, { deck, language: 'typescript' })).toEqual({ success: true, result: 14, stdout: '', error: null });
    expect(calls).toHaveLength(1);
    // The same code is not JavaScript.
    expect((await runConsole(code, { deck })).success).toBe(false);
  });

  it('reports a syntax error with line and column', async () => {
    const { deck, calls } = fakeDeck();
    const r = await runConsole('const a = 1;\nconst b = ;\nawait deck.balance.weigh()', { deck, language: 'typescript' });
    expect(r.success).toBe(false);
    expect(r.error).toMatch(/^SyntaxError: Unexpected ";" \(line 2, column 11\)/);
    expect(calls).toHaveLength(0); // nothing ran
  });

  it('reports a thrown error with the snippet frames only, and keeps stdout', async () => {
    const { deck } = fakeDeck();
    const r = await runConsole('console.log("before");\nfunction f() {\n  throw new RangeError("boom");\n}\nf();', { deck });
    expect(r.success).toBe(false);
    expect(r.stdout).toBe('before\n');
    const lines = r.error!.split('\n');
    expect(lines[0]).toBe('RangeError: boom');
    expect(lines[1]).toMatch(/at f \(<console>:3:9\)/);
    expect(lines.every((l, i) => i === 0 || l.includes('<console>'))).toBe(true);
  });

  it('reports a rejected deck call', async () => {
    const deck: ConsoleDeck = {
      list: () => schemas,
      call: async () => {
        throw Object.assign(new Error('volume_ml must be positive'), { name: 'LabError', code: 'invalid_input' });
      },
    };
    const r = await runConsole('await deck.pump.dose(-1)', { deck });
    expect(r.success).toBe(false);
    expect(r.error!.split('\n')[0]).toBe('LabError [invalid_input]: volume_ml must be positive');
  });

  it('stops a synchronous infinite loop', async () => {
    const { deck } = fakeDeck();
    const r = await runConsole('console.log("start"); while (true) {}', { deck, timeoutMs: 200 });
    expect(r).toEqual({ success: false, result: null, stdout: 'start\n', error: 'timed out after 200 ms' });
  });

  it('stops a loop that starts after an await, and the server goes on', async () => {
    const { deck } = fakeDeck();
    // this event loop is never blocked by the snippet's loop: it goes on answering while the snippet spins
    let turns = 0;
    const ticking = setInterval(() => turns++, 10);
    const r = await runConsole('await null; while (true) {}', { deck, timeoutMs: 300 }).finally(() => clearInterval(ticking));
    expect(r.error).toBe('timed out after 300 ms');
    expect(turns).toBeGreaterThan(0);
    expect((await runConsole('1 + 1', { deck })).result).toBe(2);
  });

  it('a snippet that calls process.exit ends only its own run', async () => {
    const { deck } = fakeDeck();
    // the vm context has no `process`, but the sandbox object's constructor leads out of it
    const r = await runConsole('console.log("bye"); deck.constructor.constructor("return process")().exit(3)', { deck, timeoutMs: 2000 });
    expect(r.success).toBe(false);
    expect(r.error).toMatch(/exit code 3/);
    expect((await runConsole('1 + 1', { deck })).result).toBe(2);
  });

  it('abandons slow asynchronous work and stops its deck calls', async () => {
    const { deck, calls } = fakeDeck();
    const r = await runConsole('await sleep(100_000); await deck.balance.weigh()', { deck, timeoutMs: 200 });
    expect(r).toEqual({ success: false, result: null, stdout: '', error: 'timed out after 200 ms' });
    expect(calls).toHaveLength(0);
  });
});

describe('splitLastExpression', () => {
  it.each([
    ['1 + 1', '', '1 + 1'],
    ['a = 1;\nb', 'a = 1;', '\nb'],
    ['x = a\n+b', '', 'x = a\n+b'],
    ['let a = 1\n// show it\na', 'let a = 1\n', '// show it\na'],
    ['f(1,\n  2)', '', 'f(1,\n  2)'],
  ])('%j', (code, body, tail) => {
    expect(splitLastExpression(code)).toEqual({ body, tail });
  });

  // The last one is a declaration then `(1)`; without a parser it cannot be told from a call of a function
  // expression, so no tail is taken (conservative: result null, the code still runs as written).
  it.each(['const a = 1;', 'if (x) { y }', 'for (;;) break', '{ a: 1 }', 'function f() {}\n(1)'])('%j has no trailing expression', (code) => {
    expect(splitLastExpression(code).tail).toBeNull();
  });
});

describe('jsonSafe', () => {
  it('turns values into JSON', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(jsonSafe(undefined)).toBeNull();
    expect(jsonSafe(() => 1)).toBeNull();
    expect(jsonSafe(new Date('2024-01-02T03:04:05Z'))).toBe('2024-01-02T03:04:05.000Z');
    expect(jsonSafe({ f: () => 1, n: NaN, m: new Map([['k', 1]]), s: new Set([1]) })).toEqual({ f: null, n: null, m: { k: 1 }, s: [1] });
    expect(jsonSafe(cyclic)).toEqual(expect.stringContaining('[Circular'));
  });
});
