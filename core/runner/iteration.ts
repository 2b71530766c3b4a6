/**
 * An interrupted run's in-doubt step, and the instruments its iteration used (issue 25): were they made
 * again since that iteration began? An instrument's incarnation is when its object was last made (the deck's
 * Device.madeAt: created, reloaded after a dispose, back online after its Python host restarted or its agent
 * reconnected; every in-process instrument after labdeck itself restarted). A step records the incarnation it
 * ran on by its start time: one that started before the instrument's `madeAt` ran on an earlier object.
 *
 * When any instrument of the iteration was made again, the steps before the in-doubt one measured something
 * else than a retry of it would: the status says so (`remade`), the control `rerun-iteration` runs the
 * iteration again from its first step, and in a campaign the plain Retry does that by default (`retry:
 * "iteration"`): a campaign's point is never made of two instruments' measurements unasked. `retry-step`
 * re-runs the in-doubt step only, whatever the default.
 */
import type { StepRow } from '../store/types.js';
import type { IterationDoubt } from './status-schema.js';

/** What an interrupted task's status adds about its in-doubt step's iteration. */
// what a retry would mix: declared once, as zod (status-schema.ts)
export type { IterationDoubt } from './status-schema.js';

/**
 * The instruments of the in-doubt step's phase run (its phase and iteration) made again after that phase run
 * first used them. `madeAt` is the deck's incarnation of an instrument (null: not in this deck, not judged).
 */
export function remadeSince(steps: StepRow[], doubt: Pick<StepRow, 'phase' | 'iteration'>, madeAt: (instrument: string) => Date | null): string[] {
  const firstUse = new Map<string, number>();
  for (const s of steps) {
    if (s.phase !== doubt.phase || s.iteration !== doubt.iteration) continue;
    const t = s.startedAt.getTime();
    const seen = firstUse.get(s.instrument);
    if (seen === undefined || t < seen) firstUse.set(s.instrument, t);
  }
  return [...firstUse]
    .filter(([name, t]) => {
      const made = madeAt(name);
      return made !== null && made.getTime() > t;
    })
    .map(([name]) => name)
    .sort();
}

export function iterationDoubt(kind: string, remade: string[]): IterationDoubt {
  return { remade, retry: remade.length > 0 && kind === 'campaign' ? 'iteration' : 'step' };
}

/** The run log's line for a resume, by what the operator chose. */
export function resumeLine(mode: 'retry' | 'skip' | 'iteration', remade: string[]): string {
  const why = remade.length ? ` (${remade.join(', ')} made again since it began)` : '';
  if (mode === 'iteration') return `Resuming after the interruption: re-running the in-doubt step's iteration from its first step${why}; its earlier steps' records stay, superseded.`;
  return `Resuming after the interruption (${mode === 'retry' ? 're-running' : 'skipping'} the in-doubt step${why}).`;
}
