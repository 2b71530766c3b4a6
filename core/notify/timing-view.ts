/**
 * The watchdog's timing in words, for the run page (server/views/timing.tsx renders it, server/client/timing.ts
 * keeps it current from `GET /executions/status`): each run's ETA (P10-P90 of past completed runs of its
 * workflow) and each running call step's expected end, an overdue one marked. Pure: no Node, no DOM, so the
 * browser bundle carries it too. `clock` writes a moment (`14:32:05 UTC` on the server, local time in the browser).
 */

export interface StepTiming {
  step_id: number;
  run_id: number;
  path: string;
  instrument: string;
  method: string;
  started_at: string;
  /** Its start plus the overdue bound; null while its instrument and method have too few records. */
  expected_end: string | null;
  overdue: boolean;
}

export interface RunEta {
  earliest: string;
  latest: string;
  samples: number;
}

/** What `GET /executions/status` carries as `timing`. */
export interface Timing {
  steps: StepTiming[];
  runs: { run_id: number; eta: RunEta | null }[];
}

export interface TimingLine {
  /** `run` or `step`, and its id (run_id, step_id). */
  kind: 'run' | 'step';
  id: number;
  text: string;
  overdue: boolean;
}

export function timingLines(t: Timing | null | undefined, clock: (iso: string) => string): TimingLine[] {
  if (!t) return [];
  const several = t.runs.length > 1;
  const out: TimingLine[] = t.runs.map((r) => ({
    kind: 'run',
    id: r.run_id,
    overdue: false,
    text: `${several ? `Run ${r.run_id}: ` : ''}${
      r.eta
        ? `ETA ${clock(r.eta.earliest)}–${clock(r.eta.latest)} (P10–P90 of ${r.eta.samples} past run${r.eta.samples === 1 ? '' : 's'} of this workflow)`
        : 'no ETA yet: no completed run of this workflow'
    }`,
  }));
  for (const s of t.steps) {
    const what = `${s.path} ${s.instrument}.${s.method}${several ? ` (run ${s.run_id})` : ''}, started ${clock(s.started_at)}`;
    const end =
      s.expected_end === null ? 'no expected end yet (too few past calls of it)' : s.overdue ? `overdue: expected to end by ${clock(s.expected_end)}` : `expected to end by ${clock(s.expected_end)}`;
    out.push({ kind: 'step', id: s.step_id, overdue: s.overdue, text: `${what}: ${end}` });
  }
  return out;
}

/** `14:32:05 UTC`: the server's way (the browser writes local time instead). */
export const utcClock = (iso: string): string => `${iso.slice(11, 19)} UTC`;
