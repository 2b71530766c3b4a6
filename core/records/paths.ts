/**
 * The document path of a recorded step. A step record keeps its phase, iteration and `stepIndex` (the
 * interpreter's running count of executed steps in that phase run), not its path; the path is found again
 * by counting through the workflow snapshot the way the interpreter does: call, wait, pause and if are one
 * step each; a repeat runs its body `times` times, continuing the count.
 *
 * An `if` makes the count after it depend on the branch taken, which is not recorded: indexes past the
 * first `if` of a phase (other than the `if` itself) have no known path (null). So does an index past the
 * end, or a snapshot that is not a workflow.
 */
import type { Step } from '../workflow/model.js';

/** How many steps one run of `steps` executes; null when an `if` makes it unknown. Memoised per list. */
const counts = new WeakMap<readonly Step[], number | null>();
function stepCount(steps: readonly Step[]): number | null {
  const known = counts.get(steps);
  if (known !== undefined) return known;
  let n: number | null = 0;
  for (const s of steps) {
    if (s.kind === 'if') {
      n = null;
      break;
    }
    if (s.kind === 'repeat') {
      const body = stepCount(s.steps);
      if (body === null) {
        n = null;
        break;
      }
      n += s.times * body;
    } else n += 1;
  }
  counts.set(steps, n);
  return n;
}

/** The path of the `index`-th executed step of `steps` (prefixed by `prefix`, e.g. `main`), or null. */
export function pathAtIndex(steps: readonly Step[], prefix: string, index: number): string | null {
  if (!Number.isInteger(index) || index < 0) return null;
  let k = index;
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i]!;
    const path = `${prefix}[${i}]`;
    if (s.kind === 'repeat') {
      const body = stepCount(s.steps);
      if (body === null) {
        // the first repetition runs from the start of the body: its leading steps are still known
        return pathAtIndex(s.steps, `${path}.steps`, k);
      }
      const total = s.times * body;
      if (k < total) return pathAtIndex(s.steps, `${path}.steps`, k % body);
      k -= total;
    } else {
      if (k === 0) return path;
      if (s.kind === 'if') return null; // the branch taken decides what comes next
      k -= 1;
    }
  }
  return null;
}

const isStepList = (v: unknown): v is Step[] => Array.isArray(v) && v.every((s) => typeof s === 'object' && s !== null && typeof (s as { kind?: unknown }).kind === 'string');

/**
 * A resolver for one run's snapshot: `(phase, index) → path | null`. Tolerates a snapshot of any shape
 * (records outlive workflow model changes): what is not a list of steps resolves nothing.
 */
export function stepPathResolver(snapshot: unknown): (phase: string | null, index: number | null) => string | null {
  const doc = (typeof snapshot === 'object' && snapshot !== null ? snapshot : {}) as Record<string, unknown>;
  return (phase, index) => {
    if (phase === null || index === null || (phase !== 'prep' && phase !== 'main' && phase !== 'cleanup')) return null;
    const steps = doc[phase];
    return isStepList(steps) ? pathAtIndex(steps, phase, index) : null;
  };
}
