/**
 * How far a constrained search space reaches (issue 28 item 3): each constrained parameter's least and
 * greatest value over box ∩ linear constraints, as the safety guard's campaign check uses them
 * (core/safety/polytope.ts; the campaign route's answers are in test/api/safety.test.ts).
 */
import { checkConstraints, type ParameterSpec } from '../../core/contracts/index.js';
import { extents } from '../../core/safety/polytope.js';

const range = (name: string, lo: number, hi: number): ParameterSpec => ({ name, type: 'range', bounds: [lo, hi] });
const reach = (space: ParameterSpec[], texts: string[]) => {
  const r = extents(space, checkConstraints(texts, space));
  return r.empty ? 'empty' : Object.fromEntries(r.range);
};

describe('extents over the polytope', () => {
  it('a sum bound pulls a range in; a parameter no constraint names is not listed (its ends stand)', () => {
    const space = [range('t', 0, 200), range('u', 0, 100), range('w', 0, 5)];
    expect(reach(space, ['t + u <= 120'])).toEqual({ t: [0, 120], u: [0, 100] });
    expect(reach(space, [])).toEqual({});
  });

  it('a difference lets a parameter reach as far as the other allows; >= bounds from below', () => {
    const space = [range('t', 0, 200), range('u', 0, 50)];
    expect(reach(space, ['t - u <= 100'])).toEqual({ t: [0, 150], u: [0, 50] });
    expect(reach(space, ['t + 2*u >= 180'])).toEqual({ t: [80, 200], u: [0, 50] });
  });

  it('several constraints and an equality: the vertex the two meet at', () => {
    const space = [range('a', 0, 100), range('b', 0, 100), range('c', 0, 100)];
    expect(reach(space, ['a + b + c == 100', 'a - b <= 10', 'c >= 30'])).toEqual({ a: [0, 40], b: [0, 70], c: [30, 100] });
  });

  it('a fixed parameter moves to the right-hand side', () => {
    const space: ParameterSpec[] = [range('t', 0, 200), { name: 'k', type: 'fixed', value: 40 }];
    expect(reach(space, ['t + k <= 100'])).toEqual({ t: [0, 60] });
  });

  it('units far apart (µL and L) do not swamp each other', () => {
    const space = [range('ul', 0, 1e6), range('l', 0, 1e-3)];
    expect(reach(space, ['1e-6*ul + 1000*l <= 1', 'ul >= 2e5'])).toEqual({ ul: [2e5, 1e6], l: [0, 8e-4] });
  });

  it('constraints that exclude each other: an empty polytope reaches nothing', () => {
    const space = [range('t', 0, 100), range('u', 0, 100)];
    expect(reach(space, ['t + u <= 10', 't + u >= 50'])).toBe('empty');
  });

  it('twelve parameters under one budget: each reaches what the budget leaves it (its time: npm run bench safety)', () => {
    const space = Array.from({ length: 12 }, (_, i) => range(`x${i}`, 0, 100));
    const r = reach(space, [space.map((s) => s.name).join(' + ') + ' <= 30', 'x0 - x1 <= 5']);
    expect(r).toMatchObject({ x0: [0, 17.5], x1: [0, 30], x11: [0, 30] }); // x0 ≤ x1 + 5 and x0 + x1 ≤ 30
  });
});
