import { CholeskyDecomposition, Matrix } from 'ml-matrix';
import { ballDistance, maximizeLogEI, rank } from '../../plugins/opt/acquisition.js';
import { Posterior, cholesky, fitHyper, hyperOf, negLogPosterior, pairDiffs } from '../../plugins/opt/gp.js';
import { minimizeBox } from '../../plugins/opt/lbfgs.js';
import { dLogH, erfc, logEI, logH, normCdf, normPdf } from '../../plugins/opt/normal.js';
import { FeasibleSpace, linprog } from '../../plugins/opt/polytope.js';
import { createRng } from '../../plugins/opt/rng.js';
import { checkConstraints, checkSpace } from '../../core/contracts/index.js';
import { SOBOL_MAX_DIM, SobolSequence } from '../../plugins/opt/sobol.js';
import { SpaceCodec } from '../../plugins/opt/space.js';

/** Squared L2-star discrepancy (Warnock's formula): lower is more uniform. */
function l2Star(points: number[][]): number {
  const N = points.length;
  const d = points[0]!.length;
  let a = 0;
  let b = 0;
  for (const p of points) a += p.reduce((s, x) => s * (1 - x * x), 1);
  for (const p of points) for (const q of points) b += p.reduce((s, x, k) => s * (1 - Math.max(x, q[k]!)), 1);
  return 3 ** -d - (2 ** (1 - d) / N) * a + b / (N * N);
}

describe('Sobol sequence', () => {
  it('matches the published unscrambled sequence (Joe-Kuo directions)', () => {
    const s = new SobolSequence(3, { scramble: false });
    expect(s.take(10)).toEqual([
      [0, 0, 0],
      [0.5, 0.5, 0.5],
      [0.75, 0.25, 0.25],
      [0.25, 0.75, 0.75],
      [0.375, 0.375, 0.625],
      [0.875, 0.875, 0.125],
      [0.625, 0.125, 0.875],
      [0.125, 0.625, 0.375],
      [0.1875, 0.3125, 0.9375],
      [0.6875, 0.8125, 0.4375],
    ]);
    // point 1023 of the 21-dimensional sequence, as scipy.stats.qmc.Sobol(21, scramble=False) gives it
    const p = new SobolSequence(21, { scramble: false }).point(1023);
    expect(p.map((v) => Math.round(v * 2 ** 10))).toEqual(
      [
        0.00097656, 0.75292969, 0.61230469, 0.14550781, 0.18652344, 0.43847656, 0.13964844, 0.61816406, 0.34472656, 0.85058594, 0.67871094, 0.03613281, 0.12988281, 0.66503906, 0.36230469, 0.46386719,
        0.31347656, 0.87597656, 0.58496094, 0.31933594, 0.86621094,
      ].map((v) => Math.round(v * 2 ** 10)),
    );
    expect(SOBOL_MAX_DIM).toBeGreaterThanOrEqual(21);
    expect(() => new SobolSequence(SOBOL_MAX_DIM + 1)).toThrow(RangeError);
  });

  it('next() and point(i) agree', () => {
    const s = new SobolSequence(5, { seed: 3 });
    const seq = s.take(40);
    expect(seq[37]).toEqual(s.point(37));
    expect(seq[0]).toEqual(s.point(0));
  });

  it('scrambles with the seed: inside [0,1)^d, reproducible, and better spread than random points', () => {
    const a = new SobolSequence(4, { seed: 11 }).take(256);
    expect(new SobolSequence(4, { seed: 11 }).take(256)).toEqual(a);
    expect(new SobolSequence(4, { seed: 12 }).take(256)).not.toEqual(a);
    for (const p of a) for (const x of p) expect(x >= 0 && x < 1).toBe(true);
    // every 1-D projection of 256 points has exactly one point in each 1/256 bin (a (0, m, 1)-net)
    for (let k = 0; k < 4; k++) expect(new Set(a.map((p) => Math.floor(p[k]! * 256))).size).toBe(256);
    const rng = createRng(5);
    const random = Array.from({ length: 10 }, () => l2Star(Array.from({ length: 256 }, () => [rng.next(), rng.next(), rng.next(), rng.next()])));
    const sobol = l2Star(a);
    expect(sobol).toBeLessThan(Math.min(...random) / 3);
  });
});

describe('normal distribution and log expected improvement', () => {
  it('erfc and the normal cdf are accurate', () => {
    expect(erfc(0.1)).toBeCloseTo(0.8875370839817152, 14);
    expect(erfc(1)).toBeCloseTo(0.15729920705028513, 14);
    expect(erfc(5) / 1.5374597944280349e-12).toBeCloseTo(1, 12);
    expect(normCdf(0)).toBe(0.5);
    expect(normCdf(-1.959963984540054)).toBeCloseTo(0.025, 14);
    expect(normPdf(0)).toBeCloseTo(0.3989422804014327, 15);
  });

  it('log h(z) is accurate and finite far into the tail (reference: mpmath, 50 digits)', () => {
    const ref: [number, number, number][] = [
      [2, 0.69738354578822831, 0.48655931878528387],
      [0, -0.91893853320467274, 1.2533141373155003],
      [-1, -2.4851210257126413, 1.9042712333296918],
      [-5, -16.74430116266099, 5.3618162412880885],
      [-20, -206.9178385094251, 20.099262811101282],
      [-40, -808.29856835661996, 40.049906657648518],
      [-1e4, -50000019.339619307, 10000.000199999994],
    ];
    for (const [z, lh, dlh] of ref) {
      expect(Math.abs(logH(z) - lh) / Math.abs(lh)).toBeLessThan(1e-12);
      expect(Math.abs(dLogH(z) - dlh) / dlh).toBeLessThan(1e-12);
    }
  });

  it('is monotone and smooth at z = -40 where plain EI underflows to 0', () => {
    const naive = (z: number) => normPdf(z) + z * normCdf(z);
    expect(naive(-40)).toBe(0);
    let prev = -Infinity;
    for (let z = -45; z <= 3; z += 0.25) {
      const v = logH(z);
      expect(Number.isFinite(v)).toBe(true);
      expect(v).toBeGreaterThan(prev);
      prev = v;
    }
    // no seam where the two formulas meet (z = -1)
    expect(Math.abs(logH(-1 + 1e-9) - logH(-1 - 1e-9))).toBeLessThan(1e-8);
    const { value, dMu, dSigma } = logEI(10, 0.25, 0); // z = -40
    expect(value).toBeCloseTo(logH(-40) + Math.log(0.25), 10);
    const h = 1e-6;
    expect(dMu).toBeCloseTo((logEI(10 + h, 0.25, 0).value - logEI(10 - h, 0.25, 0).value) / (2 * h), 3);
    expect(dSigma).toBeCloseTo((logEI(10, 0.25 + h, 0).value - logEI(10, 0.25 - h, 0).value) / (2 * h), 2);
  });
});

describe('Gaussian process', () => {
  const f = (x: number) => Math.sin(6 * x) + 0.5 * x;
  const xs = [0.05, 0.15, 0.3, 0.42, 0.5, 0.61, 0.7, 0.85, 0.95];
  const X = Float64Array.from(xs);
  const yRaw = xs.map(f);
  const mean = yRaw.reduce((a, b) => a + b) / yRaw.length;
  const sd = Math.sqrt(yRaw.reduce((a, b) => a + (b - mean) ** 2, 0) / (yRaw.length - 1));
  const y = Float64Array.from(yRaw, (v) => (v - mean) / sd);

  it('Cholesky factors a kernel matrix as ml-matrix does, and says when a matrix is not positive definite', () => {
    const K = Float64Array.from([4, 2, 2, 3]);
    const L = cholesky(K, 2)!;
    expect(Array.from(L)).toEqual([2, 0, 1, Math.sqrt(2)]);
    expect(cholesky(Float64Array.from([1, 2, 2, 1]), 2)).toBeNull();
    // a 40×40 Matérn kernel matrix of random 3-D points, against ml-matrix's factor
    const rng = createRng(3);
    const n = 40;
    const pts = Float64Array.from({ length: 3 * n }, () => rng.next());
    const post = new Posterior(pts, n, 3, new Float64Array(n), hyperOf(Float64Array.from([0.3, 0.5, 0.2, 1.2, 1e-4].map(Math.log)), 3));
    const Kn = new Float64Array(n * n);
    for (let i = 0; i < n; i++) {
      const row = post.kernelRow(pts.subarray(3 * i, 3 * i + 3), new Float64Array(n));
      for (let j = 0; j < n; j++) Kn[i * n + j] = row[j]! + (i === j ? 1e-4 : 0);
    }
    const mine = cholesky(Kn, n)!;
    const ref = new CholeskyDecomposition(Matrix.from1DArray(n, n, Kn)).lowerTriangularMatrix.to1DArray();
    for (let i = 0; i < n * n; i++) expect(mine[i]!).toBeCloseTo(ref[i]!, 10);
  });

  it('has analytic likelihood gradients that match finite differences', () => {
    const D = 2;
    const rng = createRng(1);
    const X2 = Float64Array.from({ length: 40 }, () => rng.next());
    const y2 = Float64Array.from({ length: 20 }, (_, i) => Math.sin(5 * X2[2 * i]!) + X2[2 * i + 1]! ** 2);
    const S = pairDiffs(X2, 20, D);
    const th = Float64Array.from([0.3, 0.8, 1.5, 0.01].map(Math.log));
    const g = new Float64Array(4);
    negLogPosterior(th, g, S, y2, 20, D);
    const tmp = new Float64Array(4);
    for (let i = 0; i < 4; i++) {
      const tp = th.slice();
      const tm = th.slice();
      tp[i] = tp[i]! + 1e-6;
      tm[i] = tm[i]! - 1e-6;
      const fd = (negLogPosterior(tp, tmp, S, y2, 20, D) - negLogPosterior(tm, tmp, S, y2, 20, D)) / 2e-6;
      expect(Math.abs(g[i]! - fd)).toBeLessThan(1e-4 * Math.max(1, Math.abs(fd)));
    }
  });

  it('fits a 1-D function: close to the truth at the data, uncertain away from it', () => {
    const start = Float64Array.from([Math.log(0.3), 0, Math.log(1e-3)]);
    const { theta } = fitHyper(X, xs.length, 1, y, [{ theta: start }], 100);
    const post = new Posterior(X, xs.length, 1, y, hyperOf(theta, 1));
    const at = post.predict(X, xs.length);
    xs.forEach((x, i) => expect(Math.abs(mean + sd * at.mu[i]! - f(x))).toBeLessThan(0.02));
    // between data points the prediction is still good; outside them the sd grows
    const mid = post.predict(Float64Array.from([0.36, 0.78]), 2);
    expect(Math.abs(mean + sd * mid.mu[0]! - f(0.36))).toBeLessThan(0.1);
    const far = post.predict(Float64Array.from([0.5, 1.6]), 2);
    expect(far.sd[1]!).toBeGreaterThan(20 * far.sd[0]!);
    expect(far.sd[1]!).toBeGreaterThan(0.5);
    // gradients of the posterior mean and sd in x
    const x0 = Float64Array.from([0.33]);
    const pg = post.predictWithGrad(x0);
    const h = 1e-6;
    const a = post.predict(Float64Array.from([0.33 + h]), 1);
    const b = post.predict(Float64Array.from([0.33 - h]), 1);
    expect(pg.dMu[0]!).toBeCloseTo((a.mu[0]! - b.mu[0]!) / (2 * h), 4);
    expect(pg.dSd[0]!).toBeCloseTo((a.sd[0]! - b.sd[0]!) / (2 * h), 4);
  });

  it('appending a point in O(n²) gives the same posterior as refactoring', () => {
    const h = hyperOf(Float64Array.from([Math.log(0.2), 0, Math.log(1e-4)]), 1);
    const full = new Posterior(X, xs.length, 1, y, h);
    const grown = new Posterior(X, xs.length - 1, 1, y.subarray(0, xs.length - 1), h);
    const fresh = new Posterior(X, xs.length - 1, 1, y.subarray(0, xs.length - 1), h);
    grown.addPoint([xs.at(-1)!], y.at(-1)!);
    const C = Float64Array.from([0.1, 0.47, 0.9, 0.99, xs.at(-1)!]);
    const p = grown.predict(C, 5);
    const q = full.predict(C, 5);
    // the variance does not depend on y; the mean differs only by the GLS constant, re-estimated by a refactorisation
    for (let i = 0; i < 5; i++) expect(p.sd[i]!).toBeCloseTo(q.sd[i]!, 8);
    expect(p.mu[4]!).toBeCloseTo(y.at(-1)!, 3);
    expect(fresh.predict(C, 5).sd[3]!).toBeGreaterThan(3 * p.sd[3]!); // the appended point informs x = 0.99
    const cl = full.clone();
    cl.addPoint([0.25], 0);
    expect(full.n).toBe(xs.length);
    expect(cl.n).toBe(xs.length + 1);
  });

  it('screens candidates by an upper bound on their sd: the bound holds, and the best candidates and their scores are those of a full evaluation', () => {
    const D = 4;
    const rng = createRng(8);
    const n = 150;
    const Xs = Float64Array.from({ length: n * D }, () => rng.next());
    const ys = Float64Array.from({ length: n }, (_, i) => Math.cos(5 * Xs[i * D]!) * Xs[i * D + 1]! - Xs[i * D + 2]! ** 2);
    const post = new Posterior(Xs, n, D, ys, hyperOf(Float64Array.from([0.3, 0.4, 0.5, 0.8, 1, 1e-4].map(Math.log)), D));
    const m = 1024;
    const C = Float64Array.from({ length: m * D }, () => rng.next());
    const exact = post.predict(C, m);
    const { mu, sdUpper } = post.predictBound(C, m);
    for (let i = 0; i < m; i++) {
      expect(mu[i]!).toBeCloseTo(exact.mu[i]!, 12);
      expect(sdUpper[i]!).toBeGreaterThanOrEqual(exact.sd[i]!);
    }
    const codec = new SpaceCodec(Array.from({ length: D }, (_, d) => ({ name: `x${d}`, type: 'range' as const, bounds: [0, 1] as [number, number] })));
    const best = Math.min(...post.trainMean());
    const opts = { codec, feasible: new FeasibleSpace(codec, []), rng: createRng(1), best, incumbents: [], candidates: m, localStarts: 5, exclude: new Set<string>() };
    const { score, order } = rank(post, opts, C, m, 64);
    const full = Array.from({ length: m }, (_, i) => logEI(exact.mu[i]!, exact.sd[i]!, best).value);
    const fullOrder = Array.from({ length: m }, (_, i) => i).sort((a, b) => full[b]! - full[a]! || a - b);
    expect(order.slice(0, 64)).toEqual(fullOrder.slice(0, 64));
    for (const i of order.slice(0, 64)) expect(score[i]!).toBeCloseTo(full[i]!, 10);
    expect(new Set(order).size).toBe(m);
    expect(order.filter((i) => score[i]! > full[i]! + 1e-9).length).toBeGreaterThan(m / 2); // most were only bounded
  });

  it('growing a posterior by new observations (Cholesky updates, outputs standardised anew) equals a fresh factorisation', () => {
    const D = 3;
    const rng = createRng(5);
    const n = 60;
    const Xg = Float64Array.from({ length: n * D }, () => rng.next());
    const raw = Array.from({ length: n }, (_, i) => Math.sin(4 * Xg[i * D]!) + Xg[i * D + 1]! * Xg[i * D + 2]!);
    const std = (k: number) => {
      const m = raw.slice(0, k).reduce((a, b) => a + b) / k;
      const s = Math.sqrt(raw.slice(0, k).reduce((a, b) => a + (b - m) ** 2, 0) / (k - 1));
      return Float64Array.from(raw.slice(0, k), (v) => (v - m) / s);
    };
    const h = hyperOf(Float64Array.from([0.4, 0.3, 0.6, 1.3, 1e-5].map(Math.log)), D);
    const base = new Posterior(Xg, 45, D, std(45), h);
    const grown = Posterior.grow(base, Xg, n, std(n));
    const fresh = new Posterior(Xg, n, D, std(n), h);
    expect(base.n).toBe(45); // the base is untouched
    expect(grown.n).toBe(n);
    expect(grown.mean).toBeCloseTo(fresh.mean, 9);
    const C = Float64Array.from({ length: 20 * D }, () => rng.next());
    const a = grown.predict(C, 20);
    const b = fresh.predict(C, 20);
    for (let i = 0; i < 20; i++) {
      expect(a.mu[i]!).toBeCloseTo(b.mu[i]!, 8);
      expect(a.sd[i]!).toBeCloseTo(b.sd[i]!, 8);
    }
    const ta = grown.trainMean();
    const tb = fresh.trainMean();
    for (let i = 0; i < n; i++) expect(ta[i]!).toBeCloseTo(tb[i]!, 8);
  });

  it('maximises log EI where improvement is likely', () => {
    const codec = new SpaceCodec([{ name: 'x', type: 'range', bounds: [0, 1] }]);
    const h = hyperOf(Float64Array.from([Math.log(0.15), 0, Math.log(1e-4)]), 1);
    const post = new Posterior(X, xs.length, 1, y, h);
    const best = Math.min(...post.trainMean());
    const r = maximizeLogEI(post, { codec, feasible: new FeasibleSpace(codec, []), rng: createRng(2), best, incumbents: [], candidates: 256, localStarts: 4, exclude: new Set() });
    // a dense grid agrees on the maximiser
    let gx = 0;
    let gv = -Infinity;
    for (let i = 0; i <= 2000; i++) {
      const x = i / 2000;
      const p = post.predict(Float64Array.from([x]), 1);
      const v = logEI(p.mu[0]!, p.sd[0]!, best).value;
      if (v > gv) [gx, gv] = [x, v];
    }
    expect(r.logEI).toBeGreaterThanOrEqual(gv - 1e-6);
    expect(Math.abs(r.x[0]! - gx)).toBeLessThan(1e-3);

    // keeping out of a ball around that maximiser (radius 1 length scale of 0.15): the best point outside it
    const avoid = { center: Float64Array.from([gx]), lengthscales: Float64Array.from([0.15]), radius: 1 };
    expect(ballDistance(avoid, [gx + 0.3])).toBeCloseTo(2, 12);
    const out = maximizeLogEI(post, { codec, feasible: new FeasibleSpace(codec, []), rng: createRng(2), best, incumbents: [r.x], candidates: 256, localStarts: 4, exclude: new Set(), avoid });
    expect(Math.abs(out.x[0]! - gx)).toBeGreaterThan(0.15);
    let ov = -Infinity;
    for (let i = 0; i <= 2000; i++) {
      const x = i / 2000;
      if (Math.abs(x - gx) <= 0.15) continue;
      const p = post.predict(Float64Array.from([x]), 1);
      ov = Math.max(ov, logEI(p.mu[0]!, p.sd[0]!, best).value);
    }
    expect(out.logEI).toBeGreaterThanOrEqual(ov - 1e-3);
    expect(out.logEI).toBeLessThan(gv);
  });
});

describe('linear constraints', () => {
  it('linprog solves small LPs, negative right-hand sides (phase 1) included, and says when none is feasible', () => {
    // max x + y  s.t. x + 2y <= 4, 3x + y <= 6, x >= 0, y >= 0  →  (1.6, 1.2), 2.8
    const r = linprog(
      [
        [1, 2],
        [3, 1],
      ],
      [4, 6],
      [1, 1],
    )!;
    expect(r.value).toBeCloseTo(2.8, 12);
    expect(r.x[0]).toBeCloseTo(1.6, 12);
    expect(r.x[1]).toBeCloseTo(1.2, 12);
    // max -x  s.t. -x - y <= -3 (x + y >= 3), y <= 1  →  x = 2
    expect(
      linprog(
        [
          [-1, -1],
          [0, 1],
        ],
        [-3, 1],
        [-1, 0],
      )!.value,
    ).toBeCloseTo(-2, 12);
    expect(
      linprog(
        [
          [1, 1],
          [-1, -1],
        ],
        [1, -2],
        [1, 0],
      ),
    ).toBeNull();
  });

  it('maximises log EI inside the constraints when the unconstrained maximiser lies outside', () => {
    const space = checkSpace([
      { name: 'x', type: 'range', bounds: [0, 1] },
      { name: 'y', type: 'range', bounds: [0, 1] },
    ]);
    const codec = new SpaceCodec(space);
    const feasible = new FeasibleSpace(codec, checkConstraints(['x + y <= 0.6'], space));
    const pts: number[] = [];
    const vals: number[] = [];
    for (let i = 0; i < 5; i++)
      for (let j = 0; j < 5; j++) {
        const [a, b] = [i / 4, j / 4];
        pts.push(a, b);
        vals.push((a - 0.8) ** 2 + (b - 0.8) ** 2);
      }
    const mean = vals.reduce((a, b) => a + b) / vals.length;
    const post = new Posterior(
      Float64Array.from(pts),
      25,
      2,
      Float64Array.from(vals, (v) => (v - mean) / 0.3),
      hyperOf(Float64Array.from([Math.log(0.4), Math.log(0.4), 0, Math.log(1e-4)]), 2),
    );
    const best = Math.min(...post.trainMean());
    const r = maximizeLogEI(post, { codec, feasible, rng: createRng(1), best, incumbents: [], candidates: 512, localStarts: 4, exclude: new Set() });
    expect(r.x[0]! + r.x[1]!).toBeLessThanOrEqual(0.6 + 1e-12);
    // a dense grid over the feasible triangle finds nothing better, and agrees on where
    let gv = -Infinity;
    let at = [0, 0];
    for (let i = 0; i <= 300; i++) {
      for (let j = 0; i + j <= 180; j++) {
        const p = post.predict(Float64Array.from([i / 300, j / 300]), 1);
        const v = logEI(p.mu[0]!, p.sd[0]!, best).value;
        if (v > gv) [gv, at] = [v, [i / 300, j / 300]];
      }
    }
    expect(r.logEI).toBeGreaterThanOrEqual(gv - 1e-3);
    expect(Math.hypot(r.x[0]! - at[0]!, r.x[1]! - at[1]!)).toBeLessThan(0.02);
    // keeping out of a ball around it as well: still feasible, outside the ball
    const avoid = { center: r.x.slice(), lengthscales: Float64Array.from([0.1, 0.1]), radius: 1.5 };
    const away = maximizeLogEI(post, { codec, feasible, rng: createRng(1), best, incumbents: [r.x], candidates: 512, localStarts: 4, exclude: new Set(), avoid });
    expect(away.x[0]! + away.x[1]!).toBeLessThanOrEqual(0.6 + 1e-12);
    expect(ballDistance(avoid, away.x)).toBeGreaterThan(1.5);
    expect(Number.isFinite(away.logEI)).toBe(true);
    // without the constraint the maximiser lies outside it
    const free = maximizeLogEI(post, { codec, feasible: new FeasibleSpace(codec, []), rng: createRng(1), best, incumbents: [], candidates: 512, localStarts: 4, exclude: new Set() });
    expect(free.x[0]! + free.x[1]!).toBeGreaterThan(0.6);
  });
});

describe('projected L-BFGS', () => {
  it('minimises a badly scaled quadratic inside a box, stopping at an active bound', () => {
    const f = (x: Float64Array, g: Float64Array) => {
      g[0] = 2 * (x[0]! - 3);
      g[1] = 200 * (x[1]! + 0.5);
      return (x[0]! - 3) ** 2 + 100 * (x[1]! + 0.5) ** 2;
    };
    const r = minimizeBox(f, [0.5, 0.5], [0, 0], [2, 1]);
    expect(r.x[0]).toBeCloseTo(2, 8);
    expect(r.x[1]).toBeCloseTo(0, 8);
    const u = minimizeBox(f, [0, 0], [-10, -10], [10, 10]);
    expect(u.x[0]).toBeCloseTo(3, 6);
    expect(u.x[1]).toBeCloseTo(-0.5, 6);
  });
});
