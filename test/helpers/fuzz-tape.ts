/**
 * A random source fast-check can shrink, for the fuzzers (test/full/fuzz*.test.ts, issue 27 item 6): a request
 * is built from a tape of numbers in [0, 1) that fast-check draws (past its end: 0, each choice's first and
 * simplest option). A failing request is shrunk by shortening the tape and moving its numbers towards 0, so the
 * report is the simplest request that still fails, with the seed that repeats the run.
 */
import fc from 'fast-check';

/**
 * A tape of numbers in [0, 1), up to `maxLength` long (fast-check's "max" size: lengths up to the bound). The
 * numbers are whole 32-bit numbers scaled down: spread evenly (fc.double draws from the doubles' bit patterns,
 * nearly all of them tiny), and they shrink as integers do, to the smallest that still fails.
 */
export const tapeOf = (maxLength: number) =>
  fc.array(
    fc.integer({ min: 0, max: 2 ** 32 - 1 }).map((n) => n / 2 ** 32),
    { maxLength, size: 'max' },
  );

/** The numbers of a tape, one at a time; 0 past its end. */
export const tapeRng = (tape: readonly number[]): (() => number) => {
  let i = 0;
  return () => tape[i++] ?? 0;
};

/** Choices drawn from a source of numbers in [0, 1). */
export class Rng {
  constructor(private readonly next: () => number) {}
  /** The choices of a tape (see the file's comment). */
  static of(tape: readonly number[]) {
    return new Rng(tapeRng(tape));
  }
  float() {
    return this.next();
  }
  int(lo: number, hi: number) {
    return lo + Math.min(hi - lo, Math.floor(this.next() * (hi - lo + 1)));
  }
  chance(p: number) {
    // the tape's simplest value (0) is "yes" for a likely choice and "no" for an unlikely one
    return p >= 0.5 ? this.next() < p : 1 - this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.min(xs.length - 1, Math.floor(this.next() * xs.length))]!;
  }
  word(n = this.int(3, 8)) {
    const a = 'abcdefghijklmnopqrstuvwxyz';
    let s = '';
    for (let i = 0; i < n; i++) s += a[this.int(0, 25)];
    return s;
  }
}

/** FNV-1a: a per-operation seed, so adding an operation does not change the requests of the others. */
export function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A positive whole number from the environment (`FUZZ_SEED`, `FUZZ_SCALE`), or `fallback`. */
export const knob = (name: string, fallback: number) => {
  const v = process.env[name];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive whole number, got ${JSON.stringify(v)}`);
  return n;
};

export interface TapeRuns {
  /** How many tapes to try. */
  numRuns: number;
  /** fast-check's seed: the same seed, the same tapes. */
  seed: number;
  /** The longest tape (a request drawing more numbers than this takes the simplest option for the rest). */
  maxLength?: number;
  /** Try the empty tape (every choice its simplest) first. */
  simplestFirst?: boolean;
}

/**
 * Run `attempt` on `numRuns` tapes; an attempt fails by throwing (its message says what was sent and what came
 * back). On a failure fast-check shrinks the tape and throws the simplest failing attempt's error with the seed
 * and the tape (`Counterexample`), so `fc.assert(…, { seed, path })` repeats it.
 */
export async function onTapes(attempt: (rng: Rng) => Promise<void>, runs: TapeRuns): Promise<void> {
  await fc.assert(
    fc.asyncProperty(tapeOf(runs.maxLength ?? 64), (tape) => attempt(Rng.of(tape))),
    { numRuns: runs.numRuns, seed: runs.seed | 0, includeErrorInReport: true, ...(runs.simplestFirst ? { examples: [[[]] as [number[]]] } : {}) },
  );
}
