/** A do-nothing instrument for benchmarks and smoke tests: `ping()` answers 'pong' at once. */
import { defineInstrument, z } from '../core/contracts/index.js';
import { sleep } from './sim/bench.js';

export const simNoop = defineInstrument({
  name: 'sim-noop',
  version: '1.0.0',
  description: 'Answers ping() with "pong"; no delay by default (benchmarks).',
  options: z.object({ delay_ms: z.number().min(0).max(60_000).default(0).describe('Simulated duration of each call, ms') }),
  create: (o) => ({ ...o }),
  methods: {
    ping: {
      description: 'Answer "pong".',
      params: z.object({}),
      returns: z.string(),
      safety: 'readonly',
      run: (n, _args, ctx) => (n.delay_ms > 0 ? sleep(n.delay_ms, ctx.signal).then(() => 'pong') : 'pong'),
    },
  },
});
