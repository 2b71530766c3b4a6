/**
 * The fuzzers' shrinkable random source (test/helpers/fuzz-tape.ts): the empty tape is every choice's simplest
 * option, and a deliberately failing property is reported as the simplest request that still fails, with the
 * seed that repeats it.
 */
import { Rng, onTapes } from '../helpers/fuzz-tape.js';

/** A toy request, drawn as the fuzzers draw theirs. */
const requestOf = (rng: Rng) => ({
  method: rng.pick(['GET', 'POST', 'PUT']),
  count: rng.int(0, 1000),
  extra: rng.chance(0.1) ? rng.word() : undefined,
  json: rng.chance(0.9),
});

describe('the fuzz tape', () => {
  it('gives the simplest option of every choice past its end (the empty tape)', () => {
    const rng = Rng.of([]);
    expect(requestOf(rng)).toEqual({ method: 'GET', count: 0, extra: undefined, json: true });
  });

  it('keeps the odds of a choice: chance(p) holds for a share p of the numbers', () => {
    const share = (p: number) => Array.from({ length: 1000 }, (_, i) => Rng.of([i / 1000]).chance(p)).filter(Boolean).length / 1000;
    expect(share(0.1)).toBeCloseTo(0.1, 2);
    expect(share(0.75)).toBeCloseTo(0.75, 2);
    expect(Array.from({ length: 1000 }, (_, i) => Rng.of([i / 1000]).int(1, 3))).toEqual(expect.arrayContaining([1, 2, 3]));
  });

  it('shrinks a failing request to the simplest one that still fails, and names the seed', async () => {
    const sent: string[] = [];
    // the "bug": a POST with a count of 500 or more
    const failing = onTapes(
      async (rng) => {
        const r = requestOf(rng);
        sent.push(JSON.stringify(r));
        if (r.method === 'POST' && r.count >= 500) throw new Error(`answered 500 to ${JSON.stringify(r)}`);
      },
      { numRuns: 200, seed: 42 },
    );
    const error: Error = await failing.then(
      () => new Error('the property did not fail'),
      (e: Error) => e,
    );
    expect(error.message).toMatch(/seed: 42/);
    expect(error.message).toMatch(/Shrunk \d+ time/);
    // the simplest failing request: the POST, the smallest failing count, no extra field, the likely JSON
    expect(error.message).toContain('answered 500 to {"method":"POST","count":500,"json":true}');
    // and it was found by trying others first (some of them passing)
    expect(sent.some((s) => !s.includes('"POST"'))).toBe(true);
  });

  it('repeats the same tapes for the same seed', async () => {
    const draw = async (seed: number) => {
      const got: string[] = [];
      await onTapes(async (rng) => void got.push(JSON.stringify(requestOf(rng))), { numRuns: 20, seed });
      return got;
    };
    expect(await draw(7)).toEqual(await draw(7));
    expect(await draw(7)).not.toEqual(await draw(8));
  });
});
