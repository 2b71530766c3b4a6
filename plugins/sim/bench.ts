/**
 * Shared helpers of the simulated instruments (a helper folder: not a plugin itself).
 *
 * - `sleep(ms, signal)`: the time a call takes, honouring the call's abort signal.
 * - `mulberry32(seed)`: a small seeded RNG, and `gaussian(rng)`, so noisy simulations are reproducible.
 * - `bench(name)`: a tiny simulated lab bench shared by the pump and the balance: what the pump doses lands
 *   in the vessel on the balance (mL × density = g). Kept on globalThis so that every copy of this module
 *   (plugins are loaded fresh on each reload) sees the same bench.
 */

/** Resolve after `ms` (immediately for 0), or reject with an AbortError when `signal` aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortError());
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortError(): Error {
  const e = new Error('the call was aborted');
  e.name = 'AbortError';
  return e;
}

/** mulberry32: a fast 32-bit seeded PRNG returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal sample (Box-Muller) from a uniform RNG. */
export function gaussian(rng: () => number): number {
  const u = Math.max(rng(), 1e-12);
  const v = rng();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

export interface Bench {
  /** Grams in the vessel on the balance. */
  mass_g: number;
}

const BENCHES = Symbol.for('labdeck.sim.benches');

/** The named simulated bench (created empty on first use). */
export function bench(name = 'default'): Bench {
  const g = globalThis as unknown as Record<symbol, Map<string, Bench> | undefined>;
  const map = (g[BENCHES] ??= new Map());
  let b = map.get(name);
  if (!b) map.set(name, (b = { mass_g: 0 }));
  return b;
}
