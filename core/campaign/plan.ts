/**
 * Planning a campaign (DESIGN.md §7): the short text forms of a search space and of objectives, and the
 * check of a campaign request against the live deck, the workflow, the optimizer and the warm-start file,
 * every problem reported with its field. What it answers is the queued task's payload.
 */
import {
  checkBatchSize,
  checkConfig,
  checkConstraints,
  checkObjectives,
  checkOutcomeConstraints,
  checkSeed,
  checkSpace,
  type Observation,
  type Optimizer,
  type ParameterSpec,
} from '../contracts/index.js';
import type { Deck } from '../deck/index.js';
import { LabError, type ErrorDetail } from '../errors.js';
import type { FileStore } from '../files/store.js';
import type { Store } from '../store/types.js';
import { outputName, sourceOf, type Workflow } from '../workflow/model.js';
import { acceptedTypes } from '../workflow/jsonschema.js';
import { outputSchema, validateWorkflow, type DeckSchemas } from '../workflow/validate.js';
import type { CampaignInput, CampaignPayload } from './record.js';

const bad = (field: string, message: string): never => {
  throw new LabError('invalid_input', `${field}: ${message}`, [{ field, message }]);
};

/**
 * The short text form of a search space: `x: 0..1, n: int 1..10, c: log 0.01..10, v: 0..100 step 5,
 * solvent: water|ethanol, ph: = 7`. A range whose bounds are written `a..b` is continuous unless marked
 * `int`; `log` searches it on a log scale, `step s` on the grid low + k·s; `= v` fixes the parameter.
 */
export function parseSpaceText(text: string): unknown[] {
  const NUM = String.raw`-?[\d.eE+-]+`;
  const RANGE = new RegExp(String.raw`^((?:(?:int|integer|log)\s+)*)(${NUM})\s*\.\.\s*(${NUM})((?:\s+(?:int|integer|log|step\s+${NUM}))*)$`);
  return text
    .split(/[,;\n]/)
    .map((s) => s.trim())
    .filter(Boolean)
    .map((part, i) => {
      const m = /^([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*(.+)$/.exec(part);
      if (!m) return bad(`parameters[${i}]`, `write "name: low..high", "name: a|b|c" or "name: = value", got "${part}"`);
      const [, name, rest] = m;
      const fixed = /^=\s*(.+)$/.exec(rest.trim());
      if (fixed) {
        const v = fixed[1].trim();
        return { name, type: 'fixed', value: Number.isFinite(Number(v)) ? Number(v) : v };
      }
      const range = RANGE.exec(rest.trim());
      if (range) {
        const words = `${range[1]} ${range[4]}`;
        const step = /step\s+(\S+)/.exec(words);
        return {
          name,
          type: /\bint/.test(words) ? 'int' : 'range',
          bounds: [Number(range[2]), Number(range[3])],
          ...(/\blog\b/.test(words) ? { log_scale: true } : {}),
          ...(step ? { step: Number(step[1]) } : {}),
        };
      }
      if (rest.includes('|')) return { name, type: 'choice', choices: rest.split('|').map((c) => c.trim()) };
      return bad(`parameters[${i}]`, `"${rest}" is neither a range "low..high" nor choices "a|b|c" nor a value "= 7"`);
    });
}

/** The short text form of objectives: `yield:max, cost:min`, or with weights `yield:max:2, cost:min:1`. */
export function parseObjectivesText(text: string): unknown[] {
  return text
    .split(/[,;\n]/)
    .map((s) => s.trim())
    .filter(Boolean)
    .map((part, i) => {
      const m = /^([A-Za-z_][A-Za-z0-9_.-]*)\s*:\s*(max|maximi[sz]e|min|minimi[sz]e)(?:\s*:\s*([\d.eE+-]+))?$/i.exec(part);
      if (!m) return bad(`objectives[${i}]`, `write "name:max" or "name:min" (or "name:max:2" with a weight), got "${part}"`);
      return { name: m[1], minimize: m[2].toLowerCase().startsWith('min'), ...(m[3] !== undefined ? { weight: Number(m[3]) } : {}) };
    });
}

/** A list field: a JSON list (or JSON text of one), or the short text form. */
function listField(value: unknown, field: string, text: (s: string) => unknown[]): unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value !== 'string' || !value.trim()) return bad(field, 'is required');
  const s = value.trim();
  if (s.startsWith('[')) {
    try {
      return JSON.parse(s) as unknown[];
    } catch (e) {
      return bad(field, `is not valid JSON: ${(e as Error).message}`);
    }
  }
  return text(s);
}

/** A list of constraint strings: a list, JSON text of one, or text with one per line (or `;`). */
function constraintList(value: unknown, field: string): unknown {
  if (typeof value !== 'string' || !value.trim().startsWith('[')) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch (e) {
    return bad(field, `is not valid JSON: ${(e as Error).message}`);
  }
}

/**
 * A plugin's LabError as this runtime's: plugins are loaded in their own module instances (core/plugins/
 * loader.ts), so their LabError is another class (under jest, of another realm) with the same name, code
 * and details.
 */
function pluginError(e: unknown): unknown {
  const err = e as Partial<LabError> | null;
  if (e instanceof LabError || err?.name !== 'LabError' || typeof err.code !== 'string' || typeof err.message !== 'string') return e;
  return new LabError(err.code, err.message, err.details, err.data);
}

const intField = (value: unknown, field: string, fallback?: number): number => {
  if ((value === undefined || value === '') && fallback !== undefined) return fallback;
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) return bad(field, `must be a whole number of at least 1, got ${JSON.stringify(value)}`);
  return n;
};

/**
 * Why an output cannot be an objective, from what the deck declares it returns (`run` is an object
 * { yield }: choose `run.yield`, a field of an output being an objective too), or null when it is a number or
 * nothing is declared (checked when it comes).
 */
function notNumeric(wf: Workflow, deck: DeckSchemas, output: string): string | null {
  const declared = outputSchema(wf, deck, output);
  const types = declared ? acceptedTypes(declared.schema) : null;
  if (!declared || !types || types.has('number') || types.has('integer')) return null;
  const fields = Object.entries((declared.schema as { properties?: Record<string, unknown> }).properties ?? {})
    .filter(([, f]) => {
      const t = acceptedTypes(f);
      return !t || t.has('number') || t.has('integer');
    })
    .map(([k]) => `${output}.${k}`);
  const props = (declared.schema as { properties?: unknown }).properties;
  const what = types.has('object') ? `an object${fields.length || !props ? '' : ' with no numeric field'}` : `${[...types].join(' or ')}`;
  const choose = fields.length ? `: choose ${fields.join(' or ')}` : types.has('object') && !props ? `: choose a numeric field of it (${output}.<field>)` : '';
  return `"${output}" is ${what} (the declared result of ${declared.method}), and an objective must be a number${choose}`;
}

export interface PlanContext {
  store: Store;
  deck: Deck;
  files: FileStore;
  /** The optimizer plugin of that name (400 naming optimizer_type when none is given, 404 when unknown). */
  optimizer: (name: unknown) => Optimizer;
}

/**
 * Check a campaign request against the live deck, the workflow, the optimizer and the warm-start file,
 * reporting every problem with its field; returns what the queued task carries.
 */
export async function planCampaign(ctx: PlanContext, input: CampaignInput): Promise<CampaignPayload> {
  if (typeof input.workflow !== 'string' || !input.workflow) bad('workflow', 'is required');
  const saved = await ctx.store.workflows.get(input.workflow as string);
  if (!saved) throw new LabError('not_found', `There is no workflow "${String(input.workflow)}".`, [{ field: 'workflow', message: 'unknown workflow' }]);
  const wf: Workflow = validateWorkflow(saved.definition, ctx.deck);
  const opt = ctx.optimizer(input.optimizer_type);
  const space = checkSpace(listField(input.parameters, 'parameters', parseSpaceText), opt);
  const objectives = checkObjectives(listField(input.objectives, 'objectives', parseObjectivesText), opt);
  const details: ErrorDetail[] = [];
  const params = new Map(wf.parameters.map((p) => [p.name, p]));
  space.forEach((s, i) => {
    const p = params.get(s.name);
    const fixedType = typeof s.value === 'string' ? 'string' : Number.isInteger(s.value) ? 'integer' : 'number';
    if (!p) details.push({ field: `parameters[${i}].name`, message: `"${s.name}" is not a parameter of ${wf.name} (it has ${[...params.keys()].join(', ') || 'none'})` });
    else if (s.type === 'fixed') {
      if (p.type !== fixedType && !(p.type === 'number' && fixedType === 'integer'))
        details.push({ field: `parameters[${i}].value`, message: `"${s.name}" is a ${p.type} parameter, and ${JSON.stringify(s.value)} is not` });
    } else if (s.type === 'choice' ? p.type !== 'string' : p.type !== 'number' && p.type !== 'integer') {
      details.push({ field: `parameters[${i}].type`, message: `${s.type} does not fit the ${p.type} parameter "${s.name}"` });
    } else if (p.type === 'integer' && s.type === 'range') {
      details.push({ field: `parameters[${i}].type`, message: `"${s.name}" is an integer parameter: use type int` });
    }
  });
  const outcomeConstraints = checkOutcomeConstraints(constraintList(input.outcome_constraints, 'outcome_constraints'), 'outcome_constraints', opt);
  const stopWhen = checkOutcomeConstraints(constraintList(input.stop_when, 'stop_when'), 'stop_when');
  const outputs: [string, string][] = [
    ...objectives.map((o, i): [string, string] => [`objectives[${i}].name`, o.name]),
    ...outcomeConstraints.map((c, i): [string, string] => [`outcome_constraints[${i}]`, c.name]),
    ...stopWhen.map((c, i): [string, string] => [`stop_when[${i}]`, c.name]),
  ];
  // an objective may be a field of an output (`cell.current_ma` of the dict output `cell`): the campaign's
  // runs then report it as an output of its own, so every iteration records it as a number
  const reported = wf.outputs.map(outputName);
  const added: Workflow['outputs'] = [];
  for (const [field, name] of outputs) {
    const source = sourceOf(wf.outputs, name);
    if (source === null) {
      details.push({ field, message: `"${name}" is not an output of ${wf.name} (its outputs: ${reported.join(', ') || 'none'})` });
      continue;
    }
    if (!reported.includes(name)) {
      added.push(source === name ? name : { name, from: source });
      reported.push(name);
    }
    const problem = notNumeric(wf, ctx.deck, source);
    if (problem) details.push({ field, message: field.startsWith('objectives') ? problem : problem.replace('an objective must', 'it must') });
  }
  const fixed: Record<string, unknown> = {};
  for (const p of wf.parameters) {
    if (space.some((s) => s.name === p.name)) continue;
    if (p.default === undefined) details.push({ field: 'parameters', message: `"${p.name}" is neither searched nor has a default: add it to the search space or give it a default` });
    else fixed[p.name] = p.default;
  }
  if (details.length) throw new LabError('invalid_input', `The campaign does not fit ${wf.name}: ${details.map((d) => d.message).join('; ')}.`, details);
  const budget = intField(input.repeat, 'repeat');
  const batchSize = checkBatchSize(input.batch_size === undefined || input.batch_size === '' ? 1 : Number(input.batch_size), opt);
  const seed = input.seed === undefined || input.seed === '' ? Math.floor(Math.random() * 2 ** 31) : checkSeed(typeof input.seed === 'string' ? Number(input.seed) : input.seed);
  const config = checkConfig(input.config ?? {}, opt) as Record<string, unknown>;
  const file = typeof input.existing_data === 'string' && input.existing_data.trim() ? input.existing_data.trim() : null;
  const constraints = checkConstraints(constraintList(input.parameter_constraints, 'parameter_constraints'), space, opt).map((c) => c.text);
  const outcome = outcomeConstraints.map((c) => c.text);
  // the optimizer checks what only it can (constraints that exclude each other, its own limits) before anything is queued
  try {
    opt.create({ space, objectives, config, seed, constraints, outcomeConstraints: outcome });
  } catch (e) {
    throw pluginError(e);
  }
  const existing = file ? await warmStart(ctx.files, file, space, [...objectives, ...outcomeConstraints]) : [];
  return {
    workflow: wf.name,
    version: saved.version,
    definition: added.length ? { ...wf, outputs: [...wf.outputs, ...added] } : wf,
    optimizer: opt.name,
    config,
    seed,
    space,
    objectives,
    constraints,
    outcome_constraints: outcome,
    stop_when: stopWhen.map((c) => c.text),
    budget,
    batch_size: batchSize,
    fixed,
    existing,
    existing_file: file,
  };
}

/** Observations from an uploaded history CSV: its columns must cover the searched space and the measured outputs. */
async function warmStart(files: FileStore, file: string, all: ParameterSpec[], objectives: { name: string }[]): Promise<Observation[]> {
  const space = all.filter((s) => s.type !== 'fixed');
  const rows: Observation[] = [];
  const details: ErrorDetail[] = [];
  let bad = 0;
  const problem = (d: ErrorDetail) => {
    if (bad++ < 100) details.push(d);
  };
  /** The column index of each searched parameter and objective, once the header is read. */
  let at: Map<string, number> = new Map();
  /** A run data CSV's status column: its rows that did not end `ok` (skipped, failed) are not observations. */
  let statusAt = -1;
  await files.scan(file, 'history', {
    onHead: ({ columns }) => {
      const missing = [...space.map((s) => s.name), ...objectives.map((o) => o.name)].filter((c) => !columns.includes(c));
      if (missing.length) {
        throw new LabError(
          'invalid_input',
          `The history file ${file} has no column ${missing.map((m) => `"${m}"`).join(', ')}.`,
          missing.map((m) => ({ field: 'existing_data', message: `no column ${m}` })),
        );
      }
      at = new Map(columns.map((c, i) => [c, i]));
      const used = new Set([...space.map((x) => x.name), ...objectives.map((o) => o.name)]);
      statusAt = columns.findIndex((c) => (c === 'status' || c === 'run_status') && !used.has(c));
    },
    // only the searched and measured columns are kept, however wide the file
    onRow: (cells, line) => {
      if (statusAt >= 0 && cells[statusAt] !== '' && cells[statusAt] !== 'ok') return;
      const where = `line ${line}`;
      const params: Record<string, number | string> = {};
      for (const s of space) {
        const raw = cells[at.get(s.name)!]!;
        if (s.type === 'choice') {
          if (!s.choices!.includes(raw)) problem({ field: `${where}, column ${s.name}`, message: `"${raw}" is not one of ${s.choices!.join(', ')}` });
          params[s.name] = raw;
        } else {
          const n = Number(raw);
          if (raw === '' || !Number.isFinite(n)) problem({ field: `${where}, column ${s.name}`, message: `"${raw}" is not a number` });
          params[s.name] = n;
        }
      }
      const values: Record<string, number> = {};
      for (const o of objectives) {
        const raw = cells[at.get(o.name)!]!;
        const n = Number(raw);
        if (raw === '' || !Number.isFinite(n)) problem({ field: `${where}, column ${o.name}`, message: `"${raw}" is not a number` });
        values[o.name] = n;
      }
      rows.push({ params, values });
    },
  });
  if (bad)
    throw new LabError(
      'invalid_input',
      `The history file ${file} has ${bad} bad value(s): ${details
        .slice(0, 3)
        .map((d) => `${d.field}: ${d.message}`)
        .join('; ')}.`,
      details,
    );
  return rows;
}
