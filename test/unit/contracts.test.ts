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
    expect(() => defineInstrument({ ...def, methods: { ping: { params: {} as never, run: () => 1 } } })).toThrow(
      /method "ping" params must be a zod object/,
    );
  });
});
