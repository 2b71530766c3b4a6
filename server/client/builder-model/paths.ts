/** Steps addressed by paths (`main[2].steps[1]`): finding, inserting, removing, moving, walking, naming lists. */
import { PHASES, type Phase, type Step, type Workflow } from './document.js';
import { isObject } from './util.js';

type Segment = string | number;

/** `main[2].then[0].steps` → ['main', 2, 'then', 0, 'steps']; throws on anything else. */
export function parsePath(path: string): Segment[] {
  const out: Segment[] = [];
  const re = /(?:^|\.)([A-Za-z_]+)|\[(\d+)\]/gy;
  let m: RegExpExecArray | null;
  let at = 0;
  while (at < path.length && (m = re.exec(path))) {
    out.push(m[1] !== undefined ? m[1] : Number(m[2]));
    at = re.lastIndex;
  }
  if (at !== path.length || out.length === 0) throw new Error(`not a step path: ${path}`);
  return out;
}

export const stepPath = (list: string, index: number) => `${list}[${index}]`;

/** The list a path names (`main`, `main[1].steps`, `main[0].else`); an `if` without `else` gets one. */
export function listAt(doc: Workflow, path: string): Step[] {
  const segs = parsePath(path);
  if (!PHASES.includes(segs[0] as Phase)) throw new Error(`not a step list: ${path}`);
  let node: unknown = doc[segs[0] as Phase];
  for (let i = 1; i < segs.length; i++) {
    const s = segs[i];
    if (typeof s === 'number') {
      if (!Array.isArray(node) || !isObject(node[s])) throw new Error(`no step at ${path}`);
      node = node[s];
    } else {
      const obj = node as Record<string, unknown>;
      if (s === 'else' && obj.kind === 'if' && !Array.isArray(obj.else)) obj.else = [];
      node = obj[s];
    }
  }
  if (!Array.isArray(node)) throw new Error(`not a step list: ${path}`);
  return node as Step[];
}

/** Split a step path into its list and index: `main[1].steps[0]` → ['main[1].steps', 0]. */
export function splitStepPath(path: string): [string, number] {
  const m = /^(.*)\[(\d+)\]$/.exec(path);
  if (!m) throw new Error(`not a step path: ${path}`);
  return [m[1], Number(m[2])];
}

export function stepAt(doc: Workflow, path: string): Step {
  const [list, i] = splitStepPath(path);
  const step = listAt(doc, list)[i];
  if (!step) throw new Error(`no step at ${path}`);
  return step;
}

export function insertStep(doc: Workflow, list: string, index: number, step: Step): string {
  const steps = listAt(doc, list);
  const at = Math.max(0, Math.min(index, steps.length));
  steps.splice(at, 0, step);
  return stepPath(list, at);
}

export function removeStep(doc: Workflow, path: string): Step {
  const [list, i] = splitStepPath(path);
  const steps = listAt(doc, list);
  if (i >= steps.length) throw new Error(`no step at ${path}`);
  return steps.splice(i, 1)[0];
}

/**
 * Move a step from one list to another (or within one). `toIndex` is the position in the target list as
 * it is after the step was taken out (what SortableJS reports as newIndex). A block cannot move into
 * itself: false, and nothing changes.
 */
export function moveStep(doc: Workflow, fromList: string, fromIndex: number, toList: string, toIndex: number): boolean {
  const moving = stepPath(fromList, fromIndex);
  if (toList === moving || toList.startsWith(`${moving}.`)) return false;
  const source = listAt(doc, fromList);
  if (fromIndex < 0 || fromIndex >= source.length) return false;
  // Resolve the target before removing: removal shifts the indices inside the target's path.
  const target = listAt(doc, toList);
  const [step] = source.splice(fromIndex, 1);
  target.splice(Math.max(0, Math.min(toIndex, target.length)), 0, step);
  return true;
}

/** Every step with its path, in document order (prep → main → cleanup, depth first). */
export function walk(doc: Workflow, visit: (step: Step, path: string, phase: Phase) => void): void {
  const go = (steps: Step[], list: string, phase: Phase) =>
    steps.forEach((s, i) => {
      const p = stepPath(list, i);
      visit(s, p, phase);
      if (!isObject(s)) return;
      if (s.kind === 'repeat' && Array.isArray(s.steps)) go(s.steps, `${p}.steps`, phase);
      if (s.kind === 'if') {
        if (Array.isArray(s.then)) go(s.then, `${p}.then`, phase);
        if (Array.isArray(s.else)) go(s.else, `${p}.else`, phase);
      }
    });
  for (const phase of PHASES) go(doc[phase], phase, phase);
}

const PHASE_TITLE: Record<Phase, string> = { prep: 'Prep', main: 'Main', cleanup: 'Cleanup' };

/** Where a list is, in words: `main[1].else` → "Main › if (step 2) › else"; `main[0].steps` → "Main › repeat (step 1)". */
export function listLabel(doc: Workflow, path: string): string {
  const m = /^(prep|main|cleanup)((?:\[\d+\]\.(?:steps|then|else))*)$/.exec(path);
  if (!m) return path;
  const out = [PHASE_TITLE[m[1] as Phase]];
  let at = m[1];
  for (const [, i, branch] of m[2].matchAll(/\[(\d+)\]\.(steps|then|else)/g)) {
    at = stepPath(at, Number(i));
    const step = stepAt(doc, at);
    out.push(`${step.kind} (step ${Number(i) + 1})`);
    if (step.kind === 'if') out.push(branch);
    at = `${at}.${branch}`;
  }
  return out.join(' › ');
}
