/**
 * A record's timing (docs/notifications.md, "The watchdog"): for each call step of a run, the bound the
 * watchdog learns for it and whether the step went over. The bound is not stored with the step (a step pays
 * nothing for it): it is worked out again from the call records, by the watchdog's rule, from what the
 * watchdog had to learn from when the step started: the latest 500 records of its instrument made before it,
 * of those the successful calls of its method that had ended by then, with the lab's watchdog settings as
 * they are now. Two light queries per instrument of the run (no args, no output).
 */
import { overdueBound, type CallStats } from '../notify/watchdog.js';
import { EMPTY_SETTINGS, NotificationSettings, SETTINGS_KEY, type Watchdog } from '../notify/settings.js';
import { INPUT_INSTRUMENT } from '../runner/input.js';
import type { CallTiming, StepRow, Store } from '../store/types.js';

/** How many of an instrument's latest records the watchdog learns from (its `history`). */
const HISTORY = 500;
/** At most this many of an instrument's records made during the run are read (the earliest beyond it are left out). */
const DURING = 50_000;

export interface StepBound {
  /** The overdue bound when the step started; null while its instrument and method had too few calls. */
  bound_ms: number | null;
  /** It ran longer than its bound (a running step: so far). */
  overdue: boolean;
}

export async function watchdogSettings(store: Store): Promise<Watchdog> {
  const r = NotificationSettings.safeParse((await store.settings.get(SETTINGS_KEY)) ?? {});
  return r.success ? r.data.watchdog : EMPTY_SETTINGS.watchdog;
}

/**
 * The durations of a window of calls, kept sorted as calls come into it and leave it, with its median and
 * MAD as statsOf (core/notify/watchdog.ts) gives them: a record of 10 000 steps costs no sort per step.
 */
export class SlidingStats {
  private readonly sorted: number[] = [];

  add(duration: number): void {
    this.sorted.splice(this.at(duration), 0, duration);
  }

  remove(duration: number): void {
    const i = this.at(duration);
    if (this.sorted[i] === duration) this.sorted.splice(i, 1);
  }

  stats(): CallStats | null {
    const a = this.sorted;
    const n = a.length;
    if (n === 0) return null;
    const pos = (n - 1) * 0.5;
    const lo = Math.floor(pos);
    const hi = Math.ceil(pos);
    const median = a[lo]! + (a[hi]! - a[lo]!) * (pos - lo);
    // the deviations |a_i - median|: those below the median (walked down) and those above (walked up), merged
    let left = lo; // then the last index of a value ≤ the median
    while (left + 1 < n && a[left + 1]! <= median) left++;
    let right = left + 1;
    // walk the deviations in order up to the `hi`-th, keeping the `lo`-th and `hi`-th
    let dLo = 0;
    let dHi = 0;
    for (let i = 0; i <= hi; i++) {
      const dl = left >= 0 ? median - a[left]! : Infinity;
      const dr = right < n ? a[right]! - median : Infinity;
      let d: number;
      if (dl <= dr) {
        d = dl;
        left--;
      } else {
        d = dr;
        right++;
      }
      if (i === lo) dLo = d;
      if (i === hi) dHi = d;
    }
    return { samples: n, medianMs: median, madMs: dLo + (dHi - dLo) * (pos - lo) };
  }

  private at(v: number): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.sorted[mid]! < v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** Each call step's bound and overdue mark, by step id (input steps have none). */
export async function stepBounds(store: Store, steps: StepRow[], now = Date.now()): Promise<Map<number, StepBound>> {
  const out = new Map<number, StepBound>();
  const calls = steps.filter((s) => s.instrument !== INPUT_INSTRUMENT);
  if (calls.length === 0) return out;
  const w = await watchdogSettings(store);
  const byInstrument = new Map<string, StepRow[]>();
  for (const s of calls) {
    const list = byInstrument.get(s.instrument);
    if (list) list.push(s);
    else byInstrument.set(s.instrument, [s]);
  }
  await Promise.all(
    [...byInstrument].map(async ([instrument, mine]) => {
      mine.sort((a, b) => a.id - b.id);
      const first = mine[0]!.id;
      const [before, during] = await Promise.all([
        store.steps.timings(instrument, { toId: first, limit: HISTORY }),
        store.steps.timings(instrument, { fromId: first, toId: mine.at(-1)!.id, limit: DURING }),
      ]);
      const rows: CallTiming[] = [...before.reverse(), ...during.reverse()];
      // a successful call's end and duration (ms); one that had not ended well never counts
      const ends = rows.map((r) => (r.status === 'ok' && r.endedAt ? r.endedAt.getTime() : Infinity));
      const durationOf = (i: number) => ends[i]! - rows[i]!.startedAt.getTime();
      // per method: the window's durations, which rows are in it, and the lowest row it may hold
      const windows = new Map<string, { stats: SlidingStats; in: Uint8Array; from: number }>();
      let k = 0; // rows made before the step
      for (const s of mine) {
        while (k < rows.length && rows[k]!.id < s.id) k++;
        const started = s.startedAt.getTime();
        let win = windows.get(s.method);
        if (!win) windows.set(s.method, (win = { stats: new SlidingStats(), in: new Uint8Array(rows.length), from: 0 }));
        // the latest HISTORY rows of the instrument made before the step: its method's calls that had ended well by then
        const from = Math.max(0, k - HISTORY);
        for (let i = win.from; i < from; i++) {
          if (!win.in[i]) continue;
          win.in[i] = 0;
          win.stats.remove(durationOf(i));
        }
        win.from = from;
        for (let i = from; i < k; i++) {
          const want = ends[i]! <= started && rows[i]!.method === s.method ? 1 : 0;
          if (want === win.in[i]) continue;
          win.in[i] = want;
          if (want) win.stats.add(durationOf(i));
          else win.stats.remove(durationOf(i));
        }
        const bound = overdueBound(win.stats.stats(), w);
        const end = s.endedAt ? s.endedAt.getTime() : s.status === 'running' ? now : null;
        out.set(s.id, { bound_ms: bound === null ? null : Math.round(bound), overdue: bound !== null && end !== null && end - started > bound });
      }
    }),
  );
  return out;
}
