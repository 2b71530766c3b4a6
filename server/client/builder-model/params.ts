/** The workflow's parameters: declaring those steps refer to, counting and renaming references, defaults. */
import type { JSONSchema } from '../../../core/contracts/index.js';
import { argFields, typesOf } from './args.js';
import { NAME, type MethodLookup, type ParamType, type Step, type Workflow } from './document.js';
import { walk } from './paths.js';
import { isObject, NUMBER } from './util.js';

/** The parameter type that fits an argument's schema: what `#name` declares when the name is new. */
export function paramTypeFor(schema: JSONSchema | null | undefined): ParamType {
  const types = typesOf(schema);
  if (!types) return 'number';
  for (const t of ['number', 'integer', 'boolean', 'string'] as const) {
    // an argument taking any number takes integers too: prefer the wider one
    if (t === 'number' && types.has('number')) return 'number';
    if (types.has(t)) return t;
  }
  return 'string';
}

/** Every `{ param }` reference with where it is (`main[0].args.volume_ml`, `main[1].condition.left`). */
export function paramRefs(doc: Workflow): { name: string; field: string; step: Step }[] {
  const out: { name: string; field: string; step: Step }[] = [];
  const param = (a: unknown) => (isObject(a) && typeof a.param === 'string' ? a.param : null);
  walk(doc, (s, p) => {
    if (!isObject(s)) return;
    if (s.kind === 'call' && isObject(s.args)) {
      for (const [k, a] of Object.entries(s.args)) {
        const name = param(a);
        if (name !== null) out.push({ name, field: `${p}.args.${k}`, step: s });
      }
    } else if (s.kind === 'if' && isObject(s.condition)) {
      for (const side of ['left', 'right'] as const) {
        const name = param(s.condition[side]);
        if (name !== null) out.push({ name, field: `${p}.condition.${side}`, step: s });
      }
    }
  });
  return out;
}

/**
 * Declare every parameter a step refers to (`#name`) that the workflow does not declare yet, with the type
 * of the argument it is used for (number when unknown). Returns the names added. Invalid names are left
 * for the server to report.
 */
export function declareMissingParams(doc: Workflow, lookup: MethodLookup): string[] {
  const have = new Set(doc.parameters.map((p) => p.name));
  const added: string[] = [];
  for (const ref of paramRefs(doc)) {
    if (have.has(ref.name) || !NAME.test(ref.name)) continue;
    let schema: JSONSchema | null = null;
    if (ref.step.kind === 'call') {
      const arg = ref.field.slice(ref.field.lastIndexOf('.args.') + 6);
      schema = argFields(lookup(ref.step.instrument, ref.step.method)?.params).find((f) => f.name === arg)?.schema ?? null;
    }
    doc.parameters.push({ name: ref.name, type: paramTypeFor(schema) });
    have.add(ref.name);
    added.push(ref.name);
  }
  return added;
}

/** How many references each declared parameter has. */
export function paramUsage(doc: Workflow): Map<string, number> {
  const n = new Map(doc.parameters.map((p) => [p.name, 0]));
  for (const r of paramRefs(doc)) if (n.has(r.name)) n.set(r.name, n.get(r.name)! + 1);
  return n;
}

/** Rename a parameter and every reference to it. */
export function renameParam(doc: Workflow, from: string, to: string): void {
  if (from === to) return;
  for (const p of doc.parameters) if (p.name === from) p.name = to;
  walk(doc, (s) => {
    if (!isObject(s)) return;
    const fix = (a: unknown) => {
      if (isObject(a) && a.param === from) a.param = to;
    };
    if (s.kind === 'call' && isObject(s.args)) Object.values(s.args).forEach(fix);
    if (s.kind === 'if' && isObject(s.condition)) {
      fix(s.condition.left);
      fix(s.condition.right);
    }
  });
}

/** A default as typed in the parameters panel → the value stored (undefined: no default). */
export function parseDefault(text: string, type: ParamType): { value: string | number | boolean | undefined; problem?: string } {
  const t = text.trim();
  if (t === '') return { value: undefined };
  if (type === 'string') return { value: text };
  if (type === 'boolean') {
    if (t === 'true' || t === 'false') return { value: t === 'true' };
    return { value: text, problem: 'must be true or false' };
  }
  if (!NUMBER.test(t)) return { value: text, problem: 'is not a number' };
  const n = Number(t);
  if (type === 'integer' && !Number.isInteger(n)) return { value: n, problem: 'must be a whole number' };
  return { value: n };
}
