/** Test problems and a campaign loop shared by the optimizers' unit tests and their convergence tests (test/full). */
import { expect } from '@jest/globals';
import { CONSTRAINT_TOLERANCE, checkConstraints, checkSpace, constraintViolation, type ObjectiveSpec, type Optimizer, type ParamValues } from '../../core/contracts/index.js';
import { reactorYield } from '../../plugins/sim-reactor.js';

export const BRANIN_MIN = 0.397887;
export const branin = (p: ParamValues) => {
  const x1 = p.x1 as number;
  const x2 = p.x2 as number;
  const b = 5.1 / (4 * Math.PI ** 2);
  const c = 5 / Math.PI;
  const t = 1 / (8 * Math.PI);
  return (x2 - b * x1 * x1 + c * x1 - 6) ** 2 + 10 * (1 - t) * Math.cos(x1) + 10;
};
export const BRANIN_SPACE = [
  { name: 'x1', type: 'range', bounds: [-5, 10] },
  { name: 'x2', type: 'range', bounds: [0, 15] },
];
export const REACTOR_SPACE = [
  { name: 'temperature', type: 'range', bounds: [20, 120] },
  { name: 'time', type: 'range', bounds: [1, 60] },
];
export const MIN_Y: ObjectiveSpec[] = [{ name: 'y', minimize: true }];
export const MAX_YIELD: ObjectiveSpec[] = [{ name: 'yield', minimize: false }];

/** Run a campaign one point at a time; returns every suggestion and its value. */
export async function run(opt: Optimizer, space: unknown, objectives: ObjectiveSpec[], f: (p: ParamValues) => number, budget: number, seed: number, config = {}) {
  const o = opt.create({ space, objectives, seed, config });
  const rows: { params: ParamValues; value: number }[] = [];
  for (let i = 0; i < budget; i++) {
    const [p] = await o.suggest(1);
    const value = f(p!);
    rows.push({ params: p!, value });
    await o.observe([{ params: p!, values: { [objectives[0]!.name]: value } }]);
  }
  return { o, rows };
}
/** Cheaper GP settings for tests about behaviour rather than quality (the jest VM runs numerics slower). */
export const FAST = { fit_restarts: 1, candidates: 256 };
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
export const yieldOf = (p: ParamValues) => reactorYield(p.temperature as number, p.time as number);

/** Every suggestion within CONSTRAINT_TOLERANCE of every constraint (checked with the contract's own measure). */
export function expectFeasible(points: ParamValues[], constraints: string[], space: unknown) {
  const s = checkSpace(space);
  const cs = checkConstraints(constraints, s);
  for (const p of points) for (const c of cs) expect({ point: p, constraint: c.text, ok: constraintViolation(c, p, s) <= CONSTRAINT_TOLERANCE }).toEqual({ point: p, constraint: c.text, ok: true });
}
