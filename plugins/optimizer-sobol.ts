/**
 * `sobol`: a scrambled Sobol' sequence over the search space: quasi-random points that fill the space far
 * more evenly than random ones (no clumps, no big holes), for screening a space or a fixed-budget design.
 * Seeded scrambling (linear matrix scramble + digital shift); up to 32 parameters.
 *
 * The k-th suggested point is the k-th point of the sequence (k counts the points observed or pending before
 * it), so a campaign rebuilt from its records after a restart continues the same sequence. Under linear
 * constraints, the k-th feasible point of the sequence (./opt/polytope.ts).
 */
import { defineOptimizer, z } from '../core/contracts/index.js';
import { LabError } from '../core/contracts/index.js';
import { FeasibleSequence, FeasibleSpace } from './opt/polytope.js';
import { createRng } from './opt/rng.js';
import { SOBOL_MAX_DIM, SobolSequence } from './opt/sobol.js';
import { History, Pending, SpaceCodec, checkCount } from './opt/space.js';

export const sobolOptimizer = defineOptimizer({
  name: 'sobol',
  description: 'Scrambled Sobol quasi-random sequence: evenly spread points, for screening a space or a fixed-budget design.',
  config: z.object({
    scramble: z.boolean().default(true).describe('Scramble the sequence with the seed (off: the plain Sobol sequence, starting at the corner)'),
  }),
  capabilities: { parameterTypes: ['range', 'int', 'choice'], multiObjective: true, batch: true, constraints: true, outcomeConstraints: true, logScale: true, steps: true },
  create({ space, objectives, config, seed, constraints, outcomeConstraints }) {
    if (space.length > SOBOL_MAX_DIM) {
      throw new LabError('invalid_input', `sobol handles up to ${SOBOL_MAX_DIM} parameters`, [{ field: 'parameters', message: `at most ${SOBOL_MAX_DIM} parameters` }]);
    }
    const codec = new SpaceCodec(space);
    const history = new History(codec, objectives, outcomeConstraints);
    const pending = new Pending(codec);
    const feasible = new FeasibleSpace(codec, constraints);
    const seq = new SobolSequence(feasible.cubeDim, { scramble: config.scramble, seed });
    const points = new FeasibleSequence(
      feasible,
      (i) => seq.point(i),
      (j) => createRng(seed, 'sobol-walk', j),
    );
    return {
      suggest(n) {
        checkCount(n);
        const start = history.total + pending.count;
        const out = Array.from({ length: n }, (_, j) => points.at(start + j));
        pending.add(out);
        return out;
      },
      observe(rows) {
        pending.settle(history.add(rows));
      },
      restore: (r) => pending.restore(r),
      snapshot: () => ({ optimizer: 'sobol', pending: pending.list.length, ...history.summary() }),
    };
  },
});
