/**
 * The sliding window a record's timing learns its bounds from (core/records/timing.ts): as calls come in and
 * leave, its median and MAD are statsOf's (core/notify/watchdog.ts), the watchdog's own numbers.
 */
import { statsOf } from '../../core/notify/watchdog.js';
import { SlidingStats } from '../../core/records/timing.js';

it('gives the median and MAD statsOf gives, window after window', () => {
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  // durations with ties (whole ms from a few values) and outliers
  const durations = Array.from({ length: 400 }, () => (rnd() < 0.1 ? Math.round(rnd() * 5000) : 50 + Math.round(rnd() * 4)));
  const w = new SlidingStats();
  expect(w.stats()).toBeNull();
  let inWindow = new Set<number>();
  for (let step = 0; step < 300; step++) {
    // a window that mostly slides by one, sometimes jumps, sometimes leaves calls out
    const from = step < 150 ? Math.max(0, step - 40) : Math.floor(rnd() * 300);
    const ids = Array.from({ length: 1 + Math.floor(rnd() * 60) }, (_, i) => from + i).filter((i) => i < durations.length && rnd() > 0.2);
    for (const i of inWindow) if (!ids.includes(i)) w.remove(durations[i]!);
    for (const i of ids) if (!inWindow.has(i)) w.add(durations[i]!);
    inWindow = new Set(ids);
    const expected = statsOf(ids.map((i) => durations[i]!));
    const got = w.stats();
    if (expected === null) expect(got).toBeNull();
    else {
      expect(got!.samples).toBe(expected.samples);
      expect(got!.medianMs).toBeCloseTo(expected.medianMs, 9);
      expect(got!.madMs).toBeCloseTo(expected.madMs, 9);
    }
  }
});
