import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from '../../core/contracts/index.js';
import { classDocs, constructorParams, functionParams, inferredInfo, introspectClass, introspectObject, parseJsDoc, sourceOrder, typeFromText } from '../../core/deck/introspect.js';

const simple = (src: string) => functionParams(src)?.map((p) => ({ name: p.name, default: p.default, hasDefault: p.hasDefault, defaultOk: p.defaultOk, rest: p.rest }));

describe('parameter parsing (no eval)', () => {
  it('reads names and literal defaults of methods, functions and arrows', () => {
    expect(simple('dose(volume_ml, rate = 2.5, label = "a,b", fast = true, none = null) { return 1 }')).toEqual([
      { name: 'volume_ml', default: undefined, hasDefault: false, defaultOk: false, rest: false },
      { name: 'rate', default: 2.5, hasDefault: true, defaultOk: true, rest: false },
      { name: 'label', default: 'a,b', hasDefault: true, defaultOk: true, rest: false },
      { name: 'fast', default: true, hasDefault: true, defaultOk: true, rest: false },
      { name: 'none', default: null, hasDefault: true, defaultOk: true, rest: false },
    ]);
    expect(functionParams('async function go(x = -3, y = [1, [2, "3"]], z = { a: 1, "b c": [true] }) {}')?.map((p) => p.default)).toEqual([-3, [1, [2, '3']], { a: 1, 'b c': [true] }]);
    expect(functionParams('(a, b = 1e3) => a + b')?.map((p) => [p.name, p.default])).toEqual([
      ['a', undefined],
      ['b', 1000],
    ]);
    expect(functionParams('x => x * 2')?.map((p) => p.name)).toEqual(['x']);
    expect(functionParams('async *gen(n = 0x10) {}')?.[0].default).toBe(16);
    expect(functionParams('function () { [native code] }')).toBeNull();
  });

  it('marks expressions as a default it cannot read, and never runs them', () => {
    (globalThis as Record<string, unknown>).__introspectRan = false;
    const ps = functionParams('m(a = Math.PI, b = (globalThis.__introspectRan = true), c = `t${1}`, d = `plain`) {}')!;
    expect(ps.map((p) => [p.name, p.hasDefault, p.defaultOk])).toEqual([
      ['a', true, false],
      ['b', true, false],
      ['c', true, false],
      ['d', true, true],
    ]);
    expect(ps[3].default).toBe('plain');
    expect((globalThis as Record<string, unknown>).__introspectRan).toBe(false);
  });

  it('handles comments, destructuring, rest parameters and tricky bodies', () => {
    const ps = functionParams('m(/* the rate */ rate = 1 /* ml/min */, { a, b = "x", c: renamed = 2 }, [p, q], ...rest) { return /)/.test("(") }')!;
    expect(ps.map((p) => p.name)).toEqual(['rate', 'arg1', 'arg2', 'rest']);
    expect(ps[0].default).toBe(1);
    expect(ps[1].fields?.map((f) => [f.name, f.default])).toEqual([
      ['a', undefined],
      ['b', 'x'],
      ['c', 2],
    ]);
    expect(ps[3].rest).toBe(true);
  });

  it('finds constructor parameters, not a method that mentions "constructor("', () => {
    const src = 'class A extends mixin({ x: 1 }) { say() { return "constructor(" + `${1}` } constructor(port = "COM1", baud = 9600) { super() } }';
    expect(constructorParams(src)?.map((p) => [p.name, p.default])).toEqual([
      ['port', 'COM1'],
      ['baud', 9600],
    ]);
    expect(constructorParams('class B { go() {} }')).toBeNull();
  });

  it('reads TypeScript annotations from source', () => {
    const ps = functionParams('m(x: number, mode?: "a" | "b", list: Array<Map<string, number>> = [], private y = 2) {}')!;
    expect(ps.map((p) => [p.name, p.typeText, p.optional])).toEqual([
      ['x', 'number', false],
      ['mode', '"a"|"b"', true],
      ['list', 'Array<Map<string,number>>', false],
      ['y', undefined, false],
    ]);
    expect(typeFromText('"a" | "b"')).toEqual({ kind: 'enum', values: ['a', 'b'] });
    expect(typeFromText('number[]')).toEqual({ kind: 'array', items: { kind: 'number' } });
    expect(typeFromText('integer')).toEqual({ kind: 'integer' });
    expect(typeFromText('string | undefined')).toEqual({ kind: 'string' });
    expect(typeFromText('Foo')).toBeNull();
  });
});

describe('JSDoc', () => {
  it('parses description, params, returns and safety', () => {
    const d = parseJsDoc(`*
     * Dispense liquid.
     * Slowly.
     * @param {number} volume_ml Volume, mL
     * @param {'slow'|'fast'} [speed='slow'] - How fast
     * @returns {number} dispensed mL
     * @hazardous
     `);
    expect(d.description).toBe('Dispense liquid.\nSlowly.');
    expect(d.params.get('volume_ml')).toEqual({ type: 'number', description: 'Volume, mL' });
    expect(d.params.get('speed')).toEqual({ type: "'slow'|'fast'", description: 'How fast', optional: true, default: 'slow' });
    expect(d.returns).toEqual({ type: 'number', description: 'dispensed mL' });
    expect(d.safety).toBe('hazardous');
    expect(parseJsDoc(' Mail me@example.com. @hidden ')).toMatchObject({ description: 'Mail me@example.com.', hidden: true });
  });

  it('finds member docs and TS parameters of a class in a module source', () => {
    const src = `
      /** A pump. */
      export class Pump {
        rate = compute(1);
        /** Dose it. @param {number} v Volume */
        async dose(v: number, note?: string) { return v }
        /** not attached to anything */
        ;
        prime() {}
      }`;
    const docs = classDocs(src, 'Pump')!;
    expect(docs.description).toBe('A pump.');
    expect([...docs.members.keys()]).toEqual(['dose', 'prime']);
    expect(docs.members.get('dose')).toMatchObject({
      description: 'Dose it.',
      sourceParams: [
        { name: 'v', typeText: 'number' },
        { name: 'note', typeText: 'string', optional: true },
      ],
    });
    expect(docs.members.get('prime')?.description).toBeUndefined();
  });
});

describe('introspectClass', () => {
  class Base {
    home() {
      return 'home';
    }
  }
  class Arm extends Base {
    static description = 'A robot arm';
    static schemas = { move: z.object({ x: z.number().min(0), y: z.number().min(0) }) };
    constructor(
      public port = 'COM1',
      public speed = 2,
    ) {
      super();
    }
    move(x: number, y: number) {
      return [x, y, this.port, this.speed];
    }
    grip(force = 0.5, label = 'g', soft = false, plan?: unknown) {
      return { force, label, soft, plan };
    }
    get busy() {
      return false;
    }
    _secret() {
      return 1;
    }
    override home() {
      return 'arm home';
    }
  }

  const arm = introspectClass(Arm);

  it('lists public methods in declaration order (own class first), skipping private, getters and constructor', () => {
    expect(Object.keys(arm.methods)).toEqual(['move', 'grip', 'home']);
    expect(arm.name).toBe('Arm');
    expect(arm.description).toBe('A robot arm');
  });

  it('infers types from defaults; what it cannot type is any JSON and listed', () => {
    const grip = z.toJSONSchema(arm.methods.grip.params, { io: 'input' });
    expect(grip.properties).toEqual({
      force: { type: 'number', default: 0.5 },
      label: { type: 'string', default: 'g' },
      soft: { type: 'boolean', default: false },
      plan: {},
    });
    expect(inferredInfo(arm)?.methods.grip).toEqual({ inferred: true, fields: ['plan'] });
    expect(arm.methods.grip.params.safeParse({ force: 'x' }).success).toBe(false);
    // compiled code has no `?`: without the source, a parameter with no default is required
    expect(arm.methods.grip.params.safeParse({}).success).toBe(false);
    expect(arm.methods.grip.params.parse({ plan: [1] })).toEqual({ force: 0.5, label: 'g', soft: false, plan: [1] });
  });

  it('lets explicit static schemas win (not inferred)', () => {
    expect(inferredInfo(arm)?.methods.move).toEqual({ inferred: false, fields: [] });
    expect(arm.methods.move.params.safeParse({ x: -1, y: 0 }).success).toBe(false);
  });

  it('builds options from the constructor and calls methods with positional arguments', async () => {
    expect(z.toJSONSchema(arm.options, { io: 'input' }).properties).toEqual({ port: { type: 'string', default: 'COM1' }, speed: { type: 'number', default: 2 } });
    const inst = await arm.create(arm.options.parse({ port: 'COM7' }));
    const ctx = { signal: new AbortController().signal, log: () => undefined };
    expect(arm.methods.move.run(inst, { x: 1, y: 2 }, ctx)).toEqual([1, 2, 'COM7', 2]);
    expect(arm.methods.grip.run(inst, arm.methods.grip.params.parse({ soft: true, plan: null }), ctx)).toEqual({ force: 0.5, label: 'g', soft: true, plan: null });
    expect(arm.methods.home.run(inst, {}, ctx)).toBe('arm home');
  });

  it('uses JSDoc and TypeScript annotations from the source file over inference', () => {
    const file = resolve('test/fixtures/plugins/shaker-class.ts');
    const { Shaker } = {
      Shaker: class Shaker {
        static schemas = {};
        constructor(
          public port = 'COM3',
          public baud = 9600,
        ) {}
        spin(rpm = 200, ramp = false) {
          return { rpm, ramp };
        }
        speed() {
          return 0;
        }
        program(rpm: number, minutes: number) {
          return rpm * minutes;
        }
      },
    };
    const d = introspectClass(Shaker, { source: readFileSync(file, 'utf8') });
    expect(d.description).toBe('An orbital shaker driven over a serial port.');
    const spin = z.toJSONSchema(d.methods.spin.params, { io: 'input' });
    expect(spin.properties).toEqual({
      rpm: { type: 'integer', default: 200, description: 'Speed, rpm', minimum: expect.any(Number), maximum: expect.any(Number) },
      ramp: { type: 'boolean', default: false, description: 'Ramp up slowly' },
    });
    expect(d.methods.spin.description).toBe('Spin at a speed.');
    expect(d.methods.speed.safety).toBe('readonly');
    // no default, but the TS source says number
    expect(z.toJSONSchema(d.methods.program.params, { io: 'input' }).properties).toEqual({ rpm: { type: 'number' }, minutes: { type: 'number' } });
    expect(inferredInfo(d)?.methods.program.fields).toEqual([]);
  });

  it('makes a parameter optional when the TypeScript source marks it `name?`, though the compiled code has lost the `?`', async () => {
    // what jiti (or swc, here) runs has no `?`; the module's source, which the loader passes in, still has it
    class Mono {
      scan(start_nm: number, end_nm: number, step_nm?: number) {
        return [start_nm, end_nm, step_nm ?? 1];
      }
    }
    expect(Function.prototype.toString.call(Mono.prototype.scan)).not.toContain('?:');
    const source = 'export class Mono {\n  scan(start_nm: number, end_nm: number, step_nm?: number) {\n    return 1;\n  }\n}\n';
    const d = introspectClass(Mono, { source });
    const scan = d.methods.scan;
    const schema = z.toJSONSchema(scan.params, { io: 'input' });
    expect(schema.properties).toEqual({ start_nm: { type: 'number' }, end_nm: { type: 'number' }, step_nm: { type: 'number' } });
    expect(schema.required).toEqual(['start_nm', 'end_nm']);
    const ctx = { signal: new AbortController().signal, log: () => undefined };
    expect(await scan.run(new Mono(), scan.params.parse({ start_nm: 400, end_nm: 700 }), ctx)).toEqual([400, 700, 1]);
    expect(scan.params.safeParse({ start_nm: 400, end_nm: 700, step_nm: 'fine' }).success).toBe(false);
  });
});

describe('introspectObject', () => {
  it('takes own methods of a plain object', () => {
    const d = introspectObject({
      n: 1,
      on: () => 'on',
      off() {
        return 'off';
      },
      _x() {},
    });
    expect(d.name).toBe('object');
    expect(Object.keys(d.methods)).toEqual(['on', 'off']);
  });

  it('takes class methods of an instance, but not those of library bases like EventEmitter', () => {
    class Sensor extends EventEmitter {
      read(channel = 0) {
        return channel;
      }
      dispose() {}
    }
    const d = introspectObject(new Sensor());
    expect(d.name).toBe('Sensor');
    expect(Object.keys(d.methods)).toEqual(['read']);
  });
});

describe('sourceOrder', () => {
  it('orders export names by declaration in the source', () => {
    const src = 'export const pump = 1;\nexport const balance = 2;\nconst x = 3;\nexport { x as zeta };\nexport const alpha = 4;';
    expect(sourceOrder(['alpha', 'balance', 'pump', 'missing'], src)).toEqual(['pump', 'balance', 'alpha', 'missing']);
  });
});
