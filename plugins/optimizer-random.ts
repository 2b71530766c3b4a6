/**
 * `random`: independent uniform draws over the search space (range parameters uniform between their bounds,
 * every integer and every choice equally likely). The baseline every other optimizer has to beat. Under
 * linear constraints, uniform over the feasible polytope (./opt/polytope.ts).
 *
 * Reproducible: the k-th suggested point of a campaign depends only on the seed and k (the number of points
 * observed or pending before it), so a campaign rebuilt from its records after a restart carries on with the
 * same points.
 */
import { defineOptimizer, z } from '../core/contracts/index.js';
import { FeasibleSpace } from './opt/polytope.js';
import { createRng } from './opt/rng.js';
import { History, Pending, SpaceCodec, checkCount } from './opt/space.js';

export const randomOptimizer = defineOptimizer({
  name: 'random',
  description: 'Uniform random search: every point equally likely. A baseline, and a safe choice for very cheap experiments.',
  config: z.object({}),
  capabilities: { parameterTypes: ['range', 'int', 'choice'], multiObjective: true, batch: true, constraints: true, outcomeConstraints: true, logScale: true, steps: true },
  create({ space, objectives, seed, constraints, outcomeConstraints }) {
    const codec = new SpaceCodec(space);
    const feasible = new FeasibleSpace(codec, constraints);
    const history = new History(codec, objectives, outcomeConstraints);
    const pending = new Pending(codec);
    return {
      suggest(n) {
        checkCount(n);
        const start = history.total + pending.count;
        const out = Array.from({ length: n }, (_, j) => feasible.sample(createRng(seed, 'random', start + j)));
        pending.add(out);
        return out;
      },
      observe(rows) {
        pending.settle(history.add(rows));
      },
      restore: (r) => pending.restore(r),
      snapshot: () => ({ optimizer: 'random', pending: pending.list.length, ...history.summary() }),
    };
  },
});
