/**
 * Seeded random numbers for the optimizers (a helper folder: not a plugin itself).
 *
 * `createRng(seed, ...labels)` gives an independent, reproducible stream per (seed, labels): sfc32 seeded
 * through splitmix32, so nearby seeds (0, 1, 2 ...) give unrelated streams and the same seed always gives the
 * same numbers on every platform (32-bit integer arithmetic only).
 */

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** Standard normal (Box-Muller). */
  normal(): number;
  /** A uniform 32-bit unsigned integer. */
  uint32(): number;
}

/** splitmix32 step: a good 32-bit mixer, used to spread seeds. */
function splitmix32(state: number): [number, number] {
  const s = (state + 0x9e3779b9) | 0;
  let z = s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  z ^= z >>> 16;
  return [s, z >>> 0];
}

/** Hash a seed and labels (strings or numbers) into one 32-bit integer. */
export function hashSeed(seed: number, ...labels: (string | number)[]): number {
  // split the seed into two 32-bit halves so seeds beyond 2^32 still differ
  let h = (Math.floor(Math.abs(seed)) % 4294967296) ^ (seed < 0 ? 0x5bd1e995 : 0);
  [h] = splitmix32(h ^ Math.floor(Math.abs(seed) / 4294967296));
  for (const l of labels) {
    const s = String(l);
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    [, h] = splitmix32(h);
  }
  return h >>> 0;
}

export function createRng(seed: number, ...labels: (string | number)[]): Rng {
  let st = hashSeed(seed, ...labels);
  const words: number[] = [];
  for (let i = 0; i < 4; i++) {
    let w: number;
    [st, w] = splitmix32(st);
    words.push(w);
  }
  let [a, b, c, d] = words as [number, number, number, number];
  const uint32 = (): number => {
    // sfc32 (Chris Doty-Humphrey's small fast counting generator)
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) uint32(); // warm up
  const next = () => uint32() / 4294967296;
  let spare: number | null = null;
  return {
    next,
    uint32,
    int: (n) => Math.min(n - 1, Math.floor(next() * n)),
    normal() {
      if (spare !== null) {
        const s = spare;
        spare = null;
        return s;
      }
      const u = 1 - next(); // (0, 1]
      const v = next();
      const r = Math.sqrt(-2 * Math.log(u));
      spare = r * Math.sin(2 * Math.PI * v);
      return r * Math.cos(2 * Math.PI * v);
    },
  };
}
