/**
 * Sobol' low-discrepancy sequence (32-bit, Gray-code order) with optional seeded scrambling.
 *
 * Direction numbers: Joe & Kuo, "Constructing Sobol sequences with better two-dimensional projections"
 * (SIAM J. Sci. Comput. 30, 2008), file new-joe-kuo-6.21201, dimensions 2-32 (dimension 1 is van der Corput).
 * Scrambling: a random linear matrix scramble (lower-triangular binary matrix with unit diagonal applied to
 * the digits of every direction number) followed by a random digital shift (XOR), as in Matoušek (1998) and
 * scipy.stats.qmc.Sobol. The scrambled sequence is still a (t, s)-sequence, and every point is uniformly
 * distributed in [0, 1)^d.
 */
import { createRng } from './rng.js';

/** Joe-Kuo entries for dimensions 2..32: degree s, coefficients a, initial numbers m_1..m_s. */
const JOE_KUO =
  '1 0 1|2 1 1 3|3 1 1 3 1|3 2 1 1 1|4 1 1 1 3 3|4 4 1 3 5 13|5 2 1 1 5 5 17|5 4 1 1 5 5 5|5 7 1 1 7 11 19|' +
  '5 11 1 1 5 1 1|5 13 1 1 1 3 11|5 14 1 3 5 5 31|6 1 1 3 3 9 7 49|6 13 1 1 1 15 21 21|6 16 1 3 1 13 27 49|' +
  '6 19 1 1 1 15 7 5|6 22 1 3 1 15 13 25|6 25 1 1 5 5 19 61|7 1 1 3 7 11 23 15 103|7 4 1 3 7 13 13 15 69|' +
  '7 7 1 1 3 13 7 35 63|7 8 1 3 5 9 1 25 53|7 14 1 3 1 13 9 35 107|7 19 1 3 1 5 27 61 31|7 21 1 1 5 11 19 41 61|' +
  '7 28 1 3 5 3 3 13 69|7 31 1 1 7 13 1 19 1|7 32 1 3 7 5 13 19 59|7 37 1 1 3 9 25 29 41|7 41 1 3 5 13 23 1 55|' +
  '7 42 1 3 7 3 13 59 17';

const BITS = 32;
export const SOBOL_MAX_DIM = JOE_KUO.split('|').length + 1;

/** The 32 direction numbers of one dimension (v[k] holds digit k+1 in its bit 31-k and below). */
function directionNumbers(dim: number): Uint32Array {
  const v = new Uint32Array(BITS);
  if (dim === 0) {
    for (let k = 0; k < BITS; k++) v[k] = 2 ** (31 - k);
    return v;
  }
  const [s, a, ...m] = JOE_KUO.split('|')[dim - 1]!.split(' ').map(Number) as [number, number, ...number[]];
  for (let k = 0; k < BITS; k++) {
    if (k < s) {
      v[k] = (m[k]! * 2 ** (31 - k)) >>> 0;
    } else {
      let x = v[k - s]! ^ (v[k - s]! >>> s);
      for (let j = 1; j < s; j++) if ((a >>> (s - 1 - j)) & 1) x ^= v[k - j]!;
      v[k] = x >>> 0;
    }
  }
  return v;
}

function parity(x: number): number {
  x ^= x >>> 16;
  x ^= x >>> 8;
  x ^= x >>> 4;
  x ^= x >>> 2;
  x ^= x >>> 1;
  return x & 1;
}

/** Count trailing zeros of a positive integer below 2^53. */
function ctz(i: number): number {
  let c = 0;
  while (i % 2 === 0) {
    i /= 2;
    c++;
  }
  return c;
}

export interface SobolOptions {
  /** Scramble (linear matrix scramble + digital shift); default true. */
  scramble?: boolean;
  /** Seed of the scramble. */
  seed?: number;
}

export class SobolSequence {
  readonly dim: number;
  private readonly v: Uint32Array[];
  private readonly shift: Uint32Array;
  private readonly state: Uint32Array;
  /** Index of the next point `next()` returns. */
  index = 0;

  constructor(dim: number, opts: SobolOptions = {}) {
    if (!Number.isInteger(dim) || dim < 1 || dim > SOBOL_MAX_DIM) {
      throw new RangeError(`Sobol dimension must be an integer in 1..${SOBOL_MAX_DIM}, got ${dim}`);
    }
    this.dim = dim;
    this.v = Array.from({ length: dim }, (_, d) => directionNumbers(d));
    this.shift = new Uint32Array(dim);
    this.state = new Uint32Array(dim);
    if (opts.scramble ?? true) {
      const rng = createRng(opts.seed ?? 0, 'sobol-scramble', dim);
      for (let d = 0; d < dim; d++) {
        // rows[k]: which digits (bit 31-l for digit l <= k) feed scrambled digit k; unit diagonal
        const rows = new Uint32Array(BITS);
        for (let k = 0; k < BITS; k++) {
          const below = k === 0 ? 0 : (rng.uint32() >>> (32 - k)) * 2 ** (32 - k); // random digits 0..k-1
          rows[k] = (below + 2 ** (31 - k)) >>> 0;
        }
        const vd = this.v[d]!;
        for (let j = 0; j < BITS; j++) {
          let out = 0;
          for (let k = 0; k < BITS; k++) if (parity(rows[k]! & vd[j]!)) out += 2 ** (31 - k);
          vd[j] = out >>> 0;
        }
        this.shift[d] = rng.uint32();
      }
    }
  }

  /** The i-th point (0-based) of the sequence, in [0, 1)^dim. */
  point(i: number): number[] {
    const out = new Array<number>(this.dim).fill(0);
    const g = i ^ Math.floor(i / 2); // Gray code (i < 2^31 here; see next() for longer runs)
    for (let d = 0; d < this.dim; d++) {
      let x = this.shift[d]!;
      for (let k = 0; k < BITS; k++) if ((g >>> k) & 1) x ^= this.v[d]![k]!;
      out[d] = (x >>> 0) / 4294967296;
    }
    return out;
  }

  /** The next point of the sequence. */
  next(): number[] {
    const i = this.index++;
    if (i > 0) {
      const c = ctz(i);
      for (let d = 0; d < this.dim; d++) this.state[d] = this.state[d]! ^ this.v[d]![c]!;
    }
    const out = new Array<number>(this.dim);
    for (let d = 0; d < this.dim; d++) out[d] = ((this.state[d]! ^ this.shift[d]!) >>> 0) / 4294967296;
    return out;
  }

  /** The next n points. */
  take(n: number): number[][] {
    return Array.from({ length: n }, () => this.next());
  }
}
