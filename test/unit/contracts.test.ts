import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { defineInstrument, isInstrumentDriver, isDeviceSpec, z, ContractError } from '../../core/contracts/index.js';

describe('defineInstrument', () => {
  const def = {
    name: 'noop',
    version: '1.0.0',
    options: z.object({}),
    create: () => ({}),
    methods: { ping: { params: z.object({}), run: () => 'pong' } },
  };

  it('tags a valid driver and declares devices with with()', () => {
    const d = defineInstrument(def);
    expect(isInstrumentDriver(d)).toBe(true);
    const spec = d.with({});
    expect(isDeviceSpec(spec)).toBe(true);
    expect(spec.driver).toBe(d);
  });

  it('names the offending part of a bad definition', () => {
    expect(() => defineInstrument({ ...def, name: 'bad name' })).toThrow(ContractError);
    expect(() => defineInstrument({ ...def, contract: 99 })).toThrow(/contract 99/);
    expect(() => defineInstrument({ ...def, methods: { ping: { params: {} as never, run: () => 1 } } })).toThrow(/method "ping" params must be a zod object/);
  });
});

describe('the contract stands alone', () => {
  // Plugin authors import only core/contracts: it, and the first-party plugins written against it, reach
  // nothing else in core/ (the error type they throw is part of the contract).
  const root = process.cwd();
  const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));

  it.each(['core/contracts', 'plugins'])('%s imports nothing from core/ but the contract', (dir) => {
    const outside: string[] = [];
    for (const file of files(join(root, dir))) {
      for (const m of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
        const target = relative(root, resolve(dirname(file), m[1]));
        if (target.startsWith('core/') && !target.startsWith('core/contracts/')) outside.push(`${relative(root, file)} → ${target}`);
      }
    }
    expect(outside).toEqual([]);
  });
});
