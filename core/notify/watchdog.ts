/**
 * The watchdog (DESIGN.md §17): a call step is overdue when it runs longer than a bound learned from
 * labdeck's own call records of that instrument and method, max(factor × median, median + mad_factor × MAD,
 * floor_s), once min_samples calls are recorded. An overdue step raises one `step_overdue` alert and a line
 * in its run's log (the run page shows it), written together; it is resolved when the step ends. Nothing is
 * stopped. It also gives each running step its expected end and each run its ETA (P10-P90 of the durations
 * of past completed runs of the same workflow).
 */
import type { Store } from '../store/types.js';
import { alerting, keys, open, resolve } from './events.js';
import type { Watchdog as WatchdogSettings } from './settings.js';

export interface CallStats {
  samples: number;
  medianMs: number;
  madMs: number;
}

/** The median and the median absolute deviation of durations (ms). */
export function statsOf(durations: number[]): CallStats | null {
  if (durations.length === 0) return null;
  const median = quantile(durations, 0.5);
  return {
    samples: durations.length,
    medianMs: median,
    madMs: quantile(
      durations.map((d) => Math.abs(d - median)),
      0.5,
    ),
  };
}

/** Linear-interpolated quantile q ∈ [0, 1] of values. */
export function quantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

/** The overdue bound in ms, or null while fewer than min_samples calls are recorded. */
export function overdueBound(stats: CallStats | null, w: WatchdogSettings): number | null {
  if (!stats || stats.samples < w.min_samples) return null;
  return Math.max(w.factor * stats.medianMs, stats.medianMs + w.mad_factor * stats.madMs, w.floor_s * 1000);
}

/** P10 and P90 of the durations (ms) of the latest completed runs of a workflow (not `exceptRun`). */
export async function pastDurations(store: Store, workflow: string, exceptRun?: number): Promise<{ p10: number; p90: number; samples: number } | null> {
  const past = await store.runs.list({ keyword: workflow, page: 1, perPage: 200 });
  const durations = past.rows.filter((r) => r.id !== exceptRun && r.workflowName === workflow && r.status === 'completed' && r.endedAt).map((r) => r.endedAt!.getTime() - r.startedAt.getTime());
  return durations.length ? { p10: quantile(durations, 0.1), p90: quantile(durations, 0.9), samples: durations.length } : null;
}

/** A run's ETA window from past runs of its workflow, or null without any. */
export async function runEta(store: Store, runId: number): Promise<{ earliest: string; latest: string; samples: number } | null> {
  const run = await store.runs.get(runId);
  if (!run) return null;
  const d = await pastDurations(store, run.workflowName, runId);
  if (!d) return null;
  const t0 = run.startedAt.getTime();
  return { earliest: new Date(t0 + d.p10).toISOString(), latest: new Date(t0 + d.p90).toISOString(), samples: d.samples };
}

/** `ETA 14:32-14:41 (P10-P90 of 12 past runs)`, in local time. */
export function etaText(eta: { earliest: string; latest: string; samples: number }): string {
  const hm = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  return `ETA ${hm(eta.earliest)}-${hm(eta.latest)} (P10-P90 of ${eta.samples} past run${eta.samples === 1 ? '' : 's'} of this workflow)`;
}

/** How long the records' stats (and the settings) are kept before they are read again. */
const STATS_MS = 30_000;

interface Tracked {
  stepId: number;
  runId: number;
  taskId: number | null;
  userId: number | null;
  path: string;
  instrument: string;
  method: string;
  startedAt: number;
  boundMs: number | null;
  alerted: boolean;
}

export interface WatchdogOptions {
  store: Store;
  /** The settings' watchdog part, read when a step starts. */
  settings: () => Promise<WatchdogSettings>;
  /** This host's name, for the messages. */
  host: string;
  now?: () => number;
  /** How often to look (default 1 s); 0: only when `check()` is called (tests). */
  intervalMs?: number;
  /** How many of an instrument's latest records are read for its stats (default 500). */
  history?: number;
}

export class Watchdog {
  private readonly steps = new Map<number, Tracked>();
  private readonly etas = new Map<number, { p10: number; p90: number; samples: number } | null>();
  private readonly runs = new Map<number, { startedAt: number; workflow: string }>();
  private timer: NodeJS.Timeout | null = null;
  private readonly now: () => number;

  constructor(private readonly o: WatchdogOptions) {
    this.now = o.now ?? Date.now;
  }

  start(): void {
    const every = this.o.intervalMs ?? 1000;
    if (every > 0 && !this.timer) (this.timer = setInterval(() => void this.check().catch(() => undefined), every)).unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** A run started (or resumed): its ETA from past runs of its workflow. */
  async runStarted(runId: number): Promise<void> {
    const run = await this.o.store.runs.get(runId);
    if (!run) return;
    this.runs.set(runId, { startedAt: run.startedAt.getTime(), workflow: run.workflowName });
    this.etas.set(runId, await pastDurations(this.o.store, run.workflowName, runId));
  }

  runEnded(runId: number): void {
    this.runs.delete(runId);
    this.etas.delete(runId);
  }

  /** A call step started: its bound from the records of its instrument and method. */
  async stepStarted(s: { stepId: number; runId: number; taskId?: number | null; userId?: number | null; path: string; instrument: string; method: string }): Promise<void> {
    const t: Tracked = { ...s, taskId: s.taskId ?? null, userId: s.userId ?? null, startedAt: this.now(), boundMs: null, alerted: false };
    this.steps.set(s.stepId, t);
    t.boundMs = overdueBound(await this.statsFor(s.instrument, s.method), await this.settingsNow());
  }

  /** Stats per instrument and method, read from the records at most every STATS_MS (a step costs no query). */
  private readonly stats = new Map<string, { at: number; stats: Promise<CallStats | null> }>();
  private statsFor(instrument: string, method: string): Promise<CallStats | null> {
    const key = `${instrument}\u0000${method}`;
    const now = this.now();
    const c = this.stats.get(key);
    if (c && now - c.at < STATS_MS) return c.stats;
    const stats = this.o.store.steps
      .recent(instrument, this.o.history ?? 500)
      .then((recent) => statsOf(recent.filter((r) => r.method === method && r.status === 'ok' && r.endedAt).map((r) => r.endedAt!.getTime() - r.startedAt.getTime())));
    this.stats.set(key, { at: now, stats });
    stats.catch(() => this.stats.delete(key));
    return stats;
  }

  private settingsAt = -Infinity;
  private settingsCache: Promise<WatchdogSettings> | null = null;
  private settingsNow(): Promise<WatchdogSettings> {
    const now = this.now();
    if (!this.settingsCache || now - this.settingsAt >= STATS_MS) {
      this.settingsAt = now;
      this.settingsCache = this.o.settings();
      this.settingsCache.catch(() => (this.settingsCache = null));
    }
    return this.settingsCache;
  }

  /** A call step ended: forgotten, and its overdue alert (if any) resolved. */
  async stepEnded(stepId: number): Promise<void> {
    const t = this.steps.get(stepId);
    this.steps.delete(stepId);
    if (!t?.alerted) return;
    const took = Math.round((this.now() - t.startedAt) / 1000);
    await alerting(this.o.store, [resolve(keys.overdue(stepId), `the step ended after ${took} s`)], async (tx) => {
      await tx.logs.add(t.runId, 'info', `Step ${t.path} (${t.instrument}.${t.method}), overdue, ended after ${took} s.`);
    });
  }

  /** Raise one alert for each step past its bound; returns how many it raised. */
  async check(): Promise<number> {
    let raised = 0;
    const now = this.now();
    for (const t of this.steps.values()) {
      if (t.alerted || t.boundMs === null || now - t.startedAt <= t.boundMs) continue;
      t.alerted = true;
      raised++;
      const ran = Math.round((now - t.startedAt) / 1000);
      const bound = Math.round(t.boundMs / 1000);
      const message = `Step ${t.path} (${t.instrument}.${t.method}) has run ${ran} s, longer than its calls usually take (at most ${bound} s): check the instrument. Nothing was stopped.`;
      await alerting(
        this.o.store,
        [
          open(
            'step_overdue',
            keys.overdue(t.stepId),
            { host: this.o.host, task_id: t.taskId, run_id: t.runId, step: t.path, message, instrument: t.instrument, method: t.method, bound_s: bound },
            { userId: t.userId },
          ),
        ],
        async (tx) => {
          await tx.logs.add(t.runId, 'warn', `Overdue: ${message}`);
        },
      );
    }
    return raised;
  }

  /** The running call steps with their expected end (null: not enough records yet) and whether overdue. */
  running(): { step_id: number; run_id: number; path: string; instrument: string; method: string; started_at: string; expected_end: string | null; overdue: boolean }[] {
    const now = this.now();
    return [...this.steps.values()].map((t) => ({
      step_id: t.stepId,
      run_id: t.runId,
      path: t.path,
      instrument: t.instrument,
      method: t.method,
      started_at: new Date(t.startedAt).toISOString(),
      expected_end: t.boundMs === null ? null : new Date(t.startedAt + t.boundMs).toISOString(),
      overdue: t.boundMs !== null && now - t.startedAt > t.boundMs,
    }));
  }

  /** A run's ETA window (P10-P90 of past completed runs of its workflow), or null without any. */
  eta(runId: number): { earliest: string; latest: string; samples: number } | null {
    const e = this.etas.get(runId);
    const r = this.runs.get(runId);
    if (!e || !r) return null;
    return { earliest: new Date(r.startedAt + e.p10).toISOString(), latest: new Date(r.startedAt + e.p90).toISOString(), samples: e.samples };
  }
}
