/**
 * The tail of a run as the live page shows it when it connects: the current run (or else the latest one),
 * its last log lines and its last call steps, shaped like the runner's live `log` and `step` events.
 */
import type { Store } from '../store/types.js';
import { stepPathResolver } from './paths.js';
import { SHOWN_RESULT_CHARS } from '../result-limit.js';

export async function runTail(store: Store, currentRunId: number | null | undefined, limit = 50) {
  const runId = currentRunId ?? (await store.runs.list({ page: 1, perPage: 1 })).rows[0]?.id;
  const run = runId ? await store.runs.get(runId) : null;
  if (!run) return { log: [], steps: [] };
  const pathOf = stepPathResolver(run.workflow);
  const log = (await store.logs.list(run.id)).slice(-limit).map((l) => ({ run_id: run.id, level: l.level, message: l.message, at: l.at.toISOString() }));
  const steps = (await store.runSteps.list(run.id, SHOWN_RESULT_CHARS)).slice(-limit).map((st) => ({
    run_id: run.id,
    phase: st.phase,
    iteration: st.iteration,
    path: pathOf(st.phase, st.stepIndex) ?? `${st.phase}`,
    index: st.stepIndex,
    state: st.status === 'ok' ? 'ok' : st.status === 'error' ? 'error' : 'start',
    kind: 'call',
    instrument: st.instrument,
    method: st.method,
    output: st.output,
    error: st.error ?? undefined,
  }));
  return { log, steps };
}
