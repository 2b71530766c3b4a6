/**
 * The saved workflows the current deck breaks (issue 32): each saved workflow checked against the lab's live
 * instruments (the same check a queued run gets), each problem with the step it is in, the call it makes, and
 * what changed in the deck to break it (the newest deck version that changed that method), so the workflows
 * page and `GET /app/deck/versions` can say "main[0].args.to: mover.move_sample has no argument "to"
 * (deck version 7: argument to renamed to target)".
 */
import { isLabError, type ErrorDetail } from '../errors.js';
import type { Store } from '../store/types.js';
import { validateWorkflow, type DeckSchemas } from '../workflow/validate.js';
import { changeText, type MethodChange } from './deck-versions.js';

export interface BrokenStep extends ErrorDetail {
  field: string;
  /** The step the field is in (`main[0]`, `prep[1].steps[0]`). */
  step: string;
  /** The call that step makes (`mover.move_sample`), when it is a call step. */
  call?: string;
  /** What changed in the deck, and in which version (absent when no version says). */
  change?: string;
  deck_version?: number;
}

export interface BrokenWorkflow {
  workflow: string;
  version: number;
  problems: BrokenStep[];
}

/** How many deck versions (newest first) are searched for the change that broke a step. */
const VERSIONS_SEARCHED = 200;

/** The step path a field is in: `main[0].args.to` → `main[0]`, `main[1].steps[0].method` → `main[1].steps[0]`. */
export function stepOf(field: string): string {
  const m = /^(?:prep|main|cleanup)\[\d+\](?:\.(?:steps|then|else)\[\d+\])*/.exec(field);
  return m ? m[0] : field;
}

/** The step a path names in a workflow document (raw JSON: the saved document may not fit the deck now). */
function stepAt(doc: unknown, path: string): Record<string, unknown> | undefined {
  let at: unknown = doc;
  for (const part of path.match(/[A-Za-z]+|\[\d+\]/g) ?? []) {
    if (at === null || typeof at !== 'object') return undefined;
    at = part.startsWith('[') ? (at as unknown[])[Number(part.slice(1, -1))] : (at as Record<string, unknown>)[part];
  }
  return at && typeof at === 'object' ? (at as Record<string, unknown>) : undefined;
}

/** A problem the deck causes (not one of the document's own: a parameter's type, a duplicate name). */
const DECK_PROBLEM = /\.args\b|instrument|method/;

export async function brokenWorkflows(store: Store, catalogue: DeckSchemas): Promise<BrokenWorkflow[]> {
  const out: BrokenWorkflow[] = [];
  for (const w of await store.workflows.list()) {
    const saved = await store.workflows.get(w.name);
    if (!saved) continue;
    try {
      validateWorkflow(saved.definition, catalogue);
    } catch (e) {
      if (!isLabError(e) || !e.details?.length) continue;
      const problems = e.details
        .filter((d) => DECK_PROBLEM.test(`${d.field ?? ''} ${d.message}`))
        .map((d): BrokenStep => {
          const field = d.field ?? 'workflow';
          const step = stepOf(field);
          const s = stepAt(saved.definition, step);
          const call = s && s.kind === 'call' && typeof s.instrument === 'string' && typeof s.method === 'string' ? `${s.instrument}.${s.method}` : undefined;
          return { ...d, field, step, ...(call ? { call } : {}) };
        });
      if (problems.length) out.push({ workflow: w.name, version: saved.version, problems });
    }
  }
  if (out.length) await explain(store, out);
  return out;
}

/** Name, for each broken call, the newest deck version that changed its method (or removed its instrument). */
async function explain(store: Store, broken: BrokenWorkflow[]): Promise<void> {
  const versions = await store.resources.deckVersions.list(VERSIONS_SEARCHED);
  const argOf = (field: string) => /\.args\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(field)?.[1];
  for (const p of broken.flatMap((b) => b.problems)) {
    if (!p.call) continue;
    const [instrument, method] = p.call.split('.') as [string, string];
    const arg = argOf(p.field);
    const fits = (c: MethodChange) =>
      c.instrument === instrument &&
      (c.method === undefined || c.method === method) &&
      // an argument's problem is explained by a change of that argument (its old or new name), or of the method
      (arg === undefined || c.argument === undefined || c.argument === arg || c.to === arg);
    for (const v of versions) {
      const c = ((v.diff ?? []) as MethodChange[]).find(fits);
      if (c) {
        p.change = changeText(c);
        p.deck_version = v.id;
        break;
      }
    }
  }
}
