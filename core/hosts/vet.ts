/**
 * What an instrument described by another PC (`lab agent`) may hold, checked once when it connects (issue 26
 * items 6, 7, 9, 14): its schemas go into the API document, the API page, the builder, MCP's tool list and the
 * validation of every call, so a schema nested 10,000 deep, a megabyte of description, a method name that is
 * code, or a pattern that backtracks for seconds would break those for everyone. An instrument that breaks a
 * rule is refused by itself (the agent's other instruments are served), with the reason, which the agent logs.
 *
 * - its name: an identifier like a deck's device names (letters, digits, `_`, `-`; at most 64);
 * - its methods' and their parameters' names: identifiers (letters, digits, `_`; at most 64), which is also
 *   what makes them safe to write into an exported Python or TypeScript script;
 * - at most MAX_AGENT_METHODS methods (./agent-protocol.ts); each method's schema (parameters and returns)
 *   nested at most MAX_SCHEMA_DEPTH levels and at most MAX_METHOD_SCHEMA_BYTES as JSON;
 * - every `pattern` (and `patternProperties` name) one the linear-time matcher runs (core/workflow/linear-
 *   regex.ts: no lookarounds or backreferences, at most 256 characters), or one JavaScript cannot compile at
 *   all (Python's syntax), which nothing here ever tests.
 */
import type { HostInstrument, HostMethod } from '../contracts/host.js';
import { consumptionProblem, type JSONSchema, type Safety } from '../contracts/index.js';
import { compileLinear } from '../workflow/linear-regex.js';
import type { AgentHello } from './agent-protocol.js';

/** Deepest nesting of objects and lists in one method's schemas (its parameters and its returns). */
export const MAX_SCHEMA_DEPTH = 32;
/** Largest method description, as JSON (its schemas, description and all). */
export const MAX_METHOD_SCHEMA_BYTES = 64 * 1024;
/** Longest instrument description and class name kept (longer ones are cut). */
const MAX_DESCRIPTION = 4096;
const MAX_CLASS = 128;
export const INSTRUMENT_NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
export const IDENTIFIER_RE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Keywords whose values are data, not schemas: a `pattern` inside a default value is no pattern. */
const VALUE_KEYWORDS = new Set(['default', 'const', 'enum', 'examples']);

type Described = AgentHello['instruments'][number];
type DescribedMethod = Described['methods'][number];

const show = (s: string) => JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);

/**
 * The first problem of a schema (walked without recursion, so no depth can overflow the stack): too deep, or
 * a pattern the linear-time matcher does not run. Null when it is fine.
 */
export function schemaProblem(schema: unknown, maxDepth = MAX_SCHEMA_DEPTH): string | null {
  const stack: { v: unknown; depth: number; data: boolean }[] = [{ v: schema, depth: 1, data: false }];
  while (stack.length) {
    const { v, depth, data } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > maxDepth) return `is nested deeper than ${maxDepth} levels`;
    if (Array.isArray(v)) {
      for (const x of v) stack.push({ v: x, depth: depth + 1, data });
      continue;
    }
    for (const [k, x] of Object.entries(v)) {
      if (!data && k === 'pattern' && typeof x === 'string') {
        const c = compileLinear(x);
        // one JavaScript cannot compile (Python's `(?P<name>…)`) is shown but never tested: harmless
        if (!c.ok && !c.syntax) return `has the pattern ${show(x)}, refused: ${c.reason}`;
      }
      if (!data && k === 'patternProperties' && typeof x === 'object' && x !== null) {
        for (const p of Object.keys(x)) {
          const c = compileLinear(p);
          if (!c.ok && !c.syntax) return `has the property pattern ${show(p)}, refused: ${c.reason}`;
        }
      }
      stack.push({ v: x, depth: depth + 1, data: data || VALUE_KEYWORDS.has(k) });
    }
  }
  return null;
}

function methodProblem(m: DescribedMethod): string | null {
  if (!IDENTIFIER_RE.test(m.name)) return `the method name ${show(m.name)} is not an identifier (letters, digits and _, at most 64)`;
  const where = `method ${m.name}`;
  const deep = schemaProblem(m.params) ?? (m.returns ? schemaProblem(m.returns) : null);
  if (deep) return `${where}: its schema ${deep}`;
  const bytes = JSON.stringify(m).length;
  if (bytes > MAX_METHOD_SCHEMA_BYTES) return `${where}: its description is ${Math.ceil(bytes / 1024)} KB of JSON, more than the ${MAX_METHOD_SCHEMA_BYTES / 1024} KB allowed`;
  const props = m.params.properties;
  if (props !== undefined && (typeof props !== 'object' || props === null || Array.isArray(props))) return `${where}: its parameters' "properties" is not an object`;
  for (const p of Object.keys(props ?? {})) {
    if (!IDENTIFIER_RE.test(p)) return `${where}: the parameter name ${show(p)} is not an identifier (letters, digits and _, at most 64)`;
  }
  return null;
}

/** An instrument an agent described, as the deck takes it, or why it is refused. */
export function vetInstrument(inst: Described): { ok: true; instrument: HostInstrument } | { ok: false; reason: string } {
  if (!INSTRUMENT_NAME_RE.test(inst.name)) return { ok: false, reason: `the instrument name ${show(inst.name)} is not a name (letters, digits, _ and -, at most 64)` };
  const seen = new Set<string>();
  const methods: HostMethod[] = [];
  for (const m of inst.methods) {
    const problem = methodProblem(m);
    if (problem) return { ok: false, reason: `${inst.name}: ${problem}` };
    if (seen.has(m.name)) return { ok: false, reason: `${inst.name}: the method ${m.name} is described twice` };
    seen.add(m.name);
    methods.push({
      ...m,
      description: m.description ?? '',
      safety: m.safety as Safety, // one it does not know is read as undeclared (./remote.ts)
      hidden: m.hidden ?? false,
      params: m.params as JSONSchema,
      ...(m.returns ? { returns: m.returns as JSONSchema } : {}),
      inferred: m.inferred ?? true,
      inferredFields: (m.inferredFields ?? []).slice(0, 256),
    });
  }
  return {
    ok: true,
    instrument: { name: inst.name, class: inst.class.slice(0, MAX_CLASS) || 'Instrument', description: inst.description.slice(0, MAX_DESCRIPTION), methods },
  };
}

/**
 * The methods of an instrument or class the Python host described, without those whose name or a parameter's
 * name is not an identifier (a class can be given any attribute name with setattr, a signature any parameter
 * name with __signature__): each one left out is logged with its reason, the rest are served. Names are
 * written into exported scripts (core/workflow/python.ts), so only identifiers are taken.
 */
export function identifierMethods<T extends { methods: HostMethod[] }>(described: T, where: string, log: (line: string) => void): T {
  const methods = described.methods.filter((m) => {
    const problem = !IDENTIFIER_RE.test(m.name)
      ? `the method name ${show(m.name)} is not an identifier`
      : Object.keys((m.params?.properties as Record<string, unknown> | undefined) ?? {})
          .filter((p) => !IDENTIFIER_RE.test(p))
          .map((p) => `the parameter name ${show(p)} of ${m.name} is not an identifier`)[0];
    if (problem) log(`[python] ${where}: ${problem} (letters, digits and _, at most 64): that method is left out`);
    else if (m.consumes !== undefined && m.consumes !== null) {
      const bad = consumptionProblem(m.consumes, Object.keys((m.params?.properties as Record<string, unknown> | undefined) ?? {}));
      if (bad) log(`[python] ${where}.${m.name}: __labdeck_consumes__ does not fit (${bad}): it is not counted (the lab's consumption rules still are)`);
    }
    return !problem;
  });
  return methods.length === described.methods.length ? described : { ...described, methods };
}
