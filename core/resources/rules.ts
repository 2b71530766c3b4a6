/**
 * Consumption rules (issue 32): which calls use, make or move which resources. One lab-wide document,
 *
 *   [{ "target": "pipette" | "class:Pipette", "method": "aspirate",
 *      "resource": "tips" | { "arg": "source" }, "amount": 1 | { "arg": "volume_ml" },
 *      "to"?: "rack:A1" | { "arg": "target" } }]
 *
 * A rule with `to` moves the resource (a sample) there instead of using it up; a negative amount makes the
 * resource (a waste bottle filling up, say). `target` is one instrument or every instrument of a driver class.
 */
import { z } from 'zod';
import { LabError } from '../errors.js';
import type { Consumption } from '../contracts/index.js';
import type { ResourceUse } from '../store/resource-types.js';

const ArgRef = z.strictObject({ arg: z.string().min(1).describe('A parameter of the method: its value is taken') });

export const ConsumptionRule = z.strictObject({
  target: z.string().min(1).describe('An instrument, or "class:<Driver>" for every instrument of that driver'),
  method: z.string().min(1).describe('The method whose calls use the resource'),
  resource: z.union([z.string().min(1), ArgRef]).describe('The resource by name, or { "arg": param }: the name is that argument of the call'),
  amount: z.union([z.number().finite(), ArgRef]).optional().describe('How much one call uses (default 1; negative: makes it), or { "arg": param }'),
  to: z
    .union([z.string().min(1), ArgRef])
    .optional()
    .describe('Moves the resource there (a sample to a position) instead of using it'),
});
export type ConsumptionRule = z.infer<typeof ConsumptionRule>;
export const ConsumptionRules = z.array(ConsumptionRule).max(1000);

/** The rules, checked: 400 naming the rule and field. */
export function parseRules(doc: unknown): ConsumptionRule[] {
  const parsed = ConsumptionRules.safeParse(doc);
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.map((i) => ({
    field: i.path.length ? i.path.map((p, n) => (typeof p === 'number' ? `[${p}]` : n ? `.${String(p)}` : String(p))).join('') : 'rules',
    message: i.message,
  }));
  throw new LabError('invalid_input', `The consumption rules do not fit: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}.`, details);
}

/** A value a call gives a rule: known, or (in a preflight) not known before the run. */
export const UNKNOWN = Symbol('unknown');
export type Known = unknown | typeof UNKNOWN;

export interface CallShape {
  instrument: string;
  /** The instrument's driver class (for `class:` targets); undefined when unknown. */
  driver?: string;
  method: string;
}

export function ruleApplies(rule: ConsumptionRule, call: CallShape): boolean {
  if (rule.method !== call.method) return false;
  return rule.target === call.instrument || (call.driver !== undefined && rule.target === `class:${call.driver}`);
}

/**
 * The rules one call goes through: the lab's rules for it, or, when the lab's document has none for this
 * method of this instrument (or of its driver class), what the driver declares (`consumes` in a TypeScript
 * contract, `__labdeck_consumes__` on a Python method). The lab's rule wins: one rule of the lab for a method
 * replaces the whole of its driver's declaration (an amount of 0 turns a declaration off).
 */
export function rulesFor(rules: readonly ConsumptionRule[], call: CallShape, declared: readonly Consumption[] | undefined): ConsumptionRule[] {
  const lab = rules.filter((r) => ruleApplies(r, call));
  if (lab.length || !declared?.length) return lab;
  return declared.map((d) => ({ target: call.instrument, method: call.method, ...d }));
}

/**
 * What one call does to the stock. `arg(name)` gives an argument (UNKNOWN when a preflight cannot know it);
 * a use whose resource or amount is unknown is reported in `unknown`, naming the rule's field.
 */
export function usesOf(rules: readonly ConsumptionRule[], call: CallShape, arg: (name: string) => Known): { uses: ResourceUse[]; unknown: string[] } {
  const uses: ResourceUse[] = [];
  const unknown: string[] = [];
  for (const rule of rules) {
    if (!ruleApplies(rule, call)) continue;
    const resource = typeof rule.resource === 'string' ? rule.resource : arg(rule.resource.arg);
    if (resource === UNKNOWN || resource === undefined || resource === null || resource === '') {
      unknown.push(`${call.instrument}.${call.method}: which resource (the argument "${typeof rule.resource === 'string' ? '' : rule.resource.arg}") is not known before the run`);
      continue;
    }
    if (rule.to !== undefined) {
      const to = typeof rule.to === 'string' ? rule.to : arg(rule.to.arg);
      if (to === UNKNOWN) {
        unknown.push(`${call.instrument}.${call.method}: where "${String(resource)}" goes is not known before the run`);
        continue;
      }
      uses.push({ resource: String(resource), amount: 0, to: to === null || to === undefined ? '' : String(to) });
      continue;
    }
    const raw = rule.amount === undefined ? 1 : typeof rule.amount === 'number' ? rule.amount : arg(rule.amount.arg);
    if (raw === UNKNOWN) {
      unknown.push(`${call.instrument}.${call.method}: how much "${String(resource)}" it uses is not known before the run`);
      continue;
    }
    const amount = Number(raw);
    if (!Number.isFinite(amount)) continue;
    uses.push({ resource: String(resource), amount });
  }
  return { uses, unknown };
}
