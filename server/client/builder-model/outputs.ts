/** The variables steps save and the outputs a workflow reports (what a campaign optimises). */
import type { JSONSchema } from '../../../core/contracts/index.js';
import type { MethodLookup, Phase, Workflow } from './document.js';
import type { Output } from '../../../core/workflow/model.js';
import { walk } from './paths.js';
import { isObject } from './util.js';

/** The name an output is reported under, and where its value comes from (`{ name: "power", from: "cell.power_mw" }`). */
export const outputName = (o: Output): string => (typeof o === 'string' ? o : o.name);
export const outputSource = (o: Output): string => (typeof o === 'string' ? o : o.from);

/** The names call and input steps save (`save_as`), in document order, once each; only those in `phase` when given. */
export function savedVars(doc: Workflow, phase?: Phase): string[] {
  const out: string[] = [];
  walk(doc, (s, _p, ph) => {
    if (isObject(s) && (s.kind === 'call' || s.kind === 'input') && typeof s.save_as === 'string' && s.save_as && (!phase || ph === phase) && !out.includes(s.save_as)) {
      out.push(s.save_as);
    }
  });
  return out;
}

/** The fields of a declared return value: an object's properties, a tuple's positions (`0`, `1`, …). */
function returnFields(returns: JSONSchema | undefined): string[] {
  if (!isObject(returns)) return [];
  if (isObject(returns.properties)) return Object.keys(returns.properties);
  if (Array.isArray(returns.prefixItems)) return returns.prefixItems.map((_, i) => String(i));
  return [];
}

/**
 * The outputs the builder offers, in document order: each variable a main step saves and, when its method
 * declares that it returns an object (`{ yield }`) or a tuple, each field of it (`run.yield`, `pos.0`).
 */
export function outputChoices(doc: Workflow, lookup: MethodLookup): string[] {
  const out: string[] = [];
  walk(doc, (s, _p, phase) => {
    if (phase !== 'main' || !isObject(s) || (s.kind !== 'call' && s.kind !== 'input') || typeof s.save_as !== 'string' || !s.save_as || out.includes(s.save_as)) return;
    out.push(s.save_as);
    if (s.kind === 'input') return; // a person's value: no fields
    for (const f of returnFields(lookup(s.instrument, s.method)?.returns)) out.push(`${s.save_as}.${f}`);
  });
  return out;
}

/**
 * After a "Save result as" changed: tick the outputs of each variable main saves now and did not before
 * (`before`: the choices offered until then): the fields of its declared return object when it has them
 * (`run.yield`, the numbers a campaign can optimise), else the variable. Returns what was ticked.
 */
export function tickNewOutputs(doc: Workflow, lookup: MethodLookup, before: readonly string[]): string[] {
  const now = outputChoices(doc, lookup);
  const ticked: string[] = [];
  for (const v of savedVars(doc, 'main')) {
    if (before.includes(v)) continue;
    const fields = now.filter((n) => n.startsWith(`${v}.`));
    for (const n of fields.length ? fields : [v]) {
      if (doc.outputs.some((o) => outputName(o) === n)) continue;
      setOutput(doc, n, true);
      ticked.push(n);
    }
  }
  return ticked;
}

/**
 * Why an output cannot be reported, or null: it must be a variable a main step saves, or a field of one
 * (`cell.current_ma` of a step saved as `cell`, whether or not its method declares that field).
 */
export function outputWarning(doc: Workflow, output: Output): string | null {
  const root = outputSource(output).split('.')[0]!;
  if (savedVars(doc, 'main').includes(root)) return null;
  return savedVars(doc).includes(root) ? 'saved only outside main' : 'not saved in main';
}

/**
 * Tick (`on`) or untick the output `name`. Keep outputs in the order main saves them (a field beside its
 * variable); drop none (an output no step saves is reported by the server); an output with a name of its own
 * (`{ name, from }`) stays as it is while ticked.
 */
export function setOutput(doc: Workflow, name: string, on: boolean): void {
  const saved = savedVars(doc, 'main');
  const outs = doc.outputs.filter((o) => on || outputName(o) !== name);
  if (on && !outs.some((o) => outputName(o) === name)) outs.push(name);
  const rank = (o: Output) => {
    const root = saved.indexOf(outputSource(o).split('.')[0]!);
    return root >= 0 ? root : saved.length + outs.indexOf(o);
  };
  doc.outputs = outs.sort((a, b) => rank(a) - rank(b));
}
