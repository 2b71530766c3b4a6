/**
 * Bayesian-optimisation campaigns (DESIGN.md §3, §7): a queued task like any other, whose iterations are
 * suggested by an optimizer plugin and whose measurements are told back to it. The optimizer's state is
 * never stored: it is rebuilt from the records (warm-start rows plus the run's finished iterations), so a
 * campaign survives a restart like a workflow run does. Nothing here knows about HTTP.
 */
import {
  checkBatchSize,
  checkConfig,
  checkConstraints,
  checkObjectives,
  checkOutcomeConstraints,
  checkSeed,
  checkSpace,
  isOptimizer,
  optimizerSchema,
  type Observation,
  type ObjectiveSpec,
  type Optimizer,
  type OptimizerInstance,
  type OptimizerSchema,
  type OutcomeConstraint,
  type ParameterSpec,
} from '../contracts/index.js';
import type { Deck } from '../deck/index.js';
import { LabError, type ErrorDetail } from '../errors.js';
import type { FileStore } from '../files/store.js';
import type { IterationSource, Runner, SourceFactory, TaskPayload } from '../runner/index.js';
import type { PhaseRow, QueueTaskRow, Store } from '../store/types.js';
import { outputName, sourceOf, type Workflow } from '../workflow/model.js';
import { outputValue } from '../workflow/interpreter.js';
import { acceptedTypes } from '../workflow/jsonschema.js';
import { outputSchema, validateWorkflow, type DeckSchemas } from '../workflow/validate.js';
import type { CampaignPoints } from './manual.js';
import { freshSuggestions, pointKey } from './points.js';

export interface CampaignPayload extends TaskPayload {
  optimizer: string;
  config: Record<string, unknown>;
  seed: number;
  /** The search space, fixed parameters included (the optimizer adds their values to its suggestions). */
  space: ParameterSpec[];
  objectives: ObjectiveSpec[];
  /** Linear parameter constraints, as written (`x1 + 2*x2 <= 10`); every suggestion satisfies them. */
  constraints?: string[];
  /** Limits on outputs (`purity >= 0.9`), as written; observations carry these outputs. */
  outcome_constraints?: string[];
  /** The campaign ends early when a measurement meets one of these (`run.yield >= 0.95`). */
  stop_when?: string[];
  /** Iterations to run (measurements to make). */
  budget: number;
  batch_size: number;
  /** Values of the workflow's parameters that are not searched (their defaults unless given). */
  fixed: Record<string, unknown>;
  /** Warm-start observations from an uploaded history file. */
  existing: Observation[];
  existing_file: string | null;
}

export interface CampaignInput {
  workflow?: unknown;
  repeat?: unknown;
  optimizer_type?: unknown;
  existing_data?: unknown;
  parameters?: unknown;
  objectives?: unknown;
  parameter_constraints?: unknown;
  outcome_constraints?: unknown;
  stop_when?: unknown;
  batch_size?: unknown;
  seed?: unknown;
  config?: unknown;
  name?: unknown;
}

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

/** The campaign being run or last run, for the plot. */
interface Live {
  taskId: number;
  runId: number | null;
  payload: CampaignPayload;
  instance: OptimizerInstance;
  /** Set when a measurement met stop_when: the iterations the campaign ends after, and why. */
  stopped: { iteration: number; reason: string } | null;
}

export interface PlotPoint {
  iteration: number;
  params: Record<string, unknown>;
  values: Record<string, number | null>;
  /** `optimizer:<name>` or `person:<username>` (issue 31); absent for warm-start rows. */
  suggested_by?: string;
  /** `run:<id>` (the campaign's workflow) or `person:<username>` (measured by hand). */
  measured_by?: string;
}

export interface LatestPlot {
  /** `stopped_early`: the measurement that met stop_when, in words (the campaign ran no further), or null. */
  campaign: { task_id: number; run_id: number | null; campaign_id?: number | null; name: string; workflow: string; optimizer: string; status: string; budget: number; batch_size: number; stopped_early?: string | null };
  parameters: ParameterSpec[];
  objectives: ObjectiveSpec[];
  /** Measurements of this campaign, in order; warm-start rows come first with iteration null, points measured by hand last (iteration null, `n`). */
  points: (Omit<PlotPoint, 'iteration'> & { iteration: number | null; n?: number })[];
  /** Best value of the first objective after each measurement (the campaign's own iterations) that meets the outcome constraints. */
  best_so_far: { iteration: number; value: number }[];
  /** The optimizer's own view (model surface, Pareto front, …), when it is still in memory. */
  model: unknown;
}

export interface CampaignsOptions {
  store: Store;
  deck: Deck;
  files: FileStore;
  runner: () => Runner;
  /** The optimizer plugins by name (the plugin host's optimizer registry). */
  optimizers: () => ReadonlyMap<string, { value: unknown; file: string }>;
}

/** What a campaign's run record keeps as its parameters: the campaign as it was set up. */
export interface CampaignRecord {
  campaign: {
    optimizer: string;
    seed: number;
    budget: number;
    batch_size: number;
    space: ParameterSpec[];
    objectives: ObjectiveSpec[];
    constraints: string[];
    outcome_constraints: string[];
    stop_when: string[];
    fixed: Record<string, unknown>;
    config: Record<string, unknown>;
    /** The history file it started from: how many observations, and the best value of the first objective. */
    warm_start: { file: string | null; rows: number; best: number | null };
  };
}

/** The first of `limits` that a measurement's outputs meet, said in words, or null. */
function limitMet(limits: OutcomeConstraint[], outputs: Record<string, unknown> | null): string | null {
  const c = limits.find((w) => {
    const v = outputs?.[w.name];
    return typeof v === 'number' && (w.op === '>=' ? v >= w.bound : v <= w.bound);
  });
  return c ? `${c.name} = ${String(outputs![c.name])} met stop_when "${c.text}"` : null;
}

/** Whether a measurement meets every outcome constraint of the campaign (it then counts for the best so far). */
function meetsOutcomes(p: CampaignPayload, outputs: Record<string, unknown>): boolean {
  return checkOutcomeConstraints(p.outcome_constraints ?? [], 'outcome_constraints').every((c) => {
    const v = outputs[c.name];
    return typeof v === 'number' && (c.op === '>=' ? v >= c.bound : v <= c.bound);
  });
}

export function campaignRecord(p: CampaignPayload): CampaignRecord {
  const first = p.objectives[0];
  const values = p.existing.filter((o) => meetsOutcomes(p, o.values)).map((o) => o.values[first?.name ?? '']).filter((v): v is number => typeof v === 'number');
  const best = values.length ? (first?.minimize ? Math.min(...values) : Math.max(...values)) : null;
  return {
    campaign: {
      optimizer: p.optimizer,
      seed: p.seed,
      budget: p.budget,
      batch_size: p.batch_size,
      space: p.space,
      objectives: p.objectives,
      constraints: p.constraints ?? [],
      outcome_constraints: p.outcome_constraints ?? [],
      stop_when: p.stop_when ?? [],
      fixed: p.fixed,
      config: p.config,
      warm_start: { file: p.existing_file, rows: p.existing.length, best },
    },
  };
}

/** A run record's campaign, when the run was one. */
export function campaignOfRun(parameters: unknown): CampaignRecord['campaign'] | null {
  const c = (parameters as Partial<CampaignRecord> | null)?.campaign;
  return c && typeof c === 'object' && typeof c.budget === 'number' ? c : null;
}

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

export class Campaigns {
  private live: Live | null = null;
  /** Points people add to campaigns (set by the runtime): a robot campaign takes points measured by hand. */
  points: CampaignPoints | null = null;
  /** Checks a campaign before it is queued, throwing to refuse it (the safety guard's search-space check; set by the runtime). */
  preflight: ((payload: CampaignPayload) => void) | null = null;

  constructor(private readonly opts: CampaignsOptions) {}

  private optimizers(): Map<string, Optimizer> {
    const out = new Map<string, Optimizer>();
    for (const [name, { value }] of this.opts.optimizers()) if (isOptimizer(value)) out.set(name, value);
    return out;
  }

  /** The optimizer plugin of that name (400 naming optimizer_type when none is given, 404 when unknown). */
  optimizer(name: unknown): Optimizer {
    const all = this.optimizers();
    if (typeof name !== 'string' || !name) return bad('optimizer_type', `is required: one of ${[...all.keys()].join(', ')}`);
    const opt = all.get(name);
    if (!opt) throw new LabError('not_found', `There is no optimizer "${name}"; there are ${[...all.keys()].join(', ') || 'none'}.`, [{ field: 'optimizer_type', message: 'unknown optimizer' }]);
    return opt;
  }

  /** Every optimizer's configuration schema and capabilities. */
  schemas(): OptimizerSchema[] {
    return [...this.optimizers().values()].map(optimizerSchema);
  }

  /** The configuration schema and capabilities of one optimizer, or of all (`{ optimizers }`). */
  schema(optimizerType?: unknown): OptimizerSchema | { optimizers: OptimizerSchema[] } {
    if (optimizerType === undefined || optimizerType === null || optimizerType === '') return { optimizers: this.schemas() };
    return optimizerSchema(this.optimizer(optimizerType));
  }

  /**
   * Check a campaign request against the live deck, the workflow, the optimizer and the warm-start file,
   * reporting every problem with its field; returns what the queued task carries.
   */
  async plan(input: CampaignInput): Promise<CampaignPayload> {
    if (typeof input.workflow !== 'string' || !input.workflow) bad('workflow', 'is required');
    const saved = await this.opts.store.workflows.get(input.workflow as string);
    if (!saved) throw new LabError('not_found', `There is no workflow "${String(input.workflow)}".`, [{ field: 'workflow', message: 'unknown workflow' }]);
    const wf: Workflow = validateWorkflow(saved.definition, this.opts.deck);
    const opt = this.optimizer(input.optimizer_type);
    const space = checkSpace(listField(input.parameters, 'parameters', parseSpaceText), opt);
    const objectives = checkObjectives(listField(input.objectives, 'objectives', parseObjectivesText), opt);
    const details: ErrorDetail[] = [];
    const params = new Map(wf.parameters.map((p) => [p.name, p]));
    space.forEach((s, i) => {
      const p = params.get(s.name);
      const fixedType = typeof s.value === 'string' ? 'string' : Number.isInteger(s.value) ? 'integer' : 'number';
      if (!p) details.push({ field: `parameters[${i}].name`, message: `"${s.name}" is not a parameter of ${wf.name} (it has ${[...params.keys()].join(', ') || 'none'})` });
      else if (s.type === 'fixed') {
        if (p.type !== fixedType && !(p.type === 'number' && fixedType === 'integer')) details.push({ field: `parameters[${i}].value`, message: `"${s.name}" is a ${p.type} parameter, and ${JSON.stringify(s.value)} is not` });
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
      const problem = notNumeric(wf, this.opts.deck, source);
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
    const existing = file ? await this.warmStart(file, space, [...objectives, ...outcomeConstraints]) : [];
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
  private async warmStart(file: string, all: ParameterSpec[], objectives: { name: string }[]): Promise<Observation[]> {
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
    await this.opts.files.scan(file, 'history', {
      onHead: ({ columns }) => {
        const missing = [...space.map((s) => s.name), ...objectives.map((o) => o.name)].filter((c) => !columns.includes(c));
        if (missing.length) {
          throw new LabError('invalid_input', `The history file ${file} has no column ${missing.map((m) => `"${m}"`).join(', ')}.`, missing.map((m) => ({ field: 'existing_data', message: `no column ${m}` })));
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
    if (bad) throw new LabError('invalid_input', `The history file ${file} has ${bad} bad value(s): ${details.slice(0, 3).map((d) => `${d.field}: ${d.message}`).join('; ')}.`, details);
    return rows;
  }

  /** Plan and queue a campaign. */
  async submit(input: CampaignInput, userId: number | null): Promise<QueueTaskRow> {
    return this.enqueue(await this.prepare(input), userId);
  }

  /** The task a campaign would queue, checked (`plan`) and named, without queueing it (an approval shows it first). */
  async prepare(input: CampaignInput, opts: { upfront?: boolean } = {}): Promise<{ name: string; kind: 'campaign'; payload: CampaignPayload }> {
    const payload = await this.plan(input);
    // the safety guard's up-front check (core/safety/upfront.ts); the preflight asks for its verdict instead
    if (opts.upfront !== false) this.preflight?.(payload);
    const name = typeof input.name === 'string' && input.name.trim() ? input.name.trim().slice(0, 200) : `${payload.workflow} · ${payload.optimizer} × ${payload.budget}`;
    return { name, kind: 'campaign', payload };
  }

  /** Queue a prepared campaign; it becomes the latest campaign (latest_plot). */
  async enqueue(prepared: { name: string; kind: 'campaign'; payload: CampaignPayload }, userId: number | null): Promise<QueueTaskRow> {
    const task = await this.opts.runner().enqueue({ ...prepared, createdBy: userId });
    await this.opts.store.settings.set('campaign.latest', task.id);
    // its campaign record, so people can add points to it and measure them by hand (issue 31)
    await this.points?.forTask(task.id, prepared.name, prepared.payload, userId);
    return task;
  }

  /** The runner's iteration source for campaign tasks. */
  readonly source: SourceFactory = Object.assign(async ({ task, runId, payload, done, log }: Parameters<SourceFactory>[0]) => {
    const p = payload as CampaignPayload;
    const opt = this.optimizer(p.optimizer);
    let instance = opt.create({ space: p.space, objectives: p.objectives, config: p.config, seed: p.seed, constraints: p.constraints, outcomeConstraints: p.outcome_constraints });
    const measured = done.map((ph) => this.observation(p, ph.params as Record<string, unknown>, ph.outputs as Record<string, unknown>)).filter((o): o is Observation => o !== null);
    const history = [...p.existing, ...measured];
    if (history.length) await instance.observe(history);
    if (done.length) await log(`Optimizer ${p.optimizer} rebuilt from ${p.existing.length} warm-start row(s) and ${measured.length} measurement(s) of this run.`);
    this.live = { taskId: task.id, runId, payload: p, instance, stopped: null };
    const live = this.live;
    const stopWhen = checkOutcomeConstraints(p.stop_when ?? [], 'stop_when');
    const met = (outputs: Record<string, unknown> | null) => limitMet(stopWhen, outputs);
    // a resumed campaign that had met its condition has no next iteration either
    const before = done.filter((ph) => ph.phase === 'main' && ph.status === 'ok').find((ph) => met(ph.outputs as Record<string, unknown>));
    if (before) live.stopped = { iteration: (before.iteration ?? 0) + 1, reason: met(before.outputs as Record<string, unknown>)! };
    let buffer: Record<string, number | string>[] = [];
    // points people added to this campaign (issue 31): once there are any, the optimizer is rebuilt with them
    // (measured ones observed, pending ones told) whenever they change, and never repeats a pending one
    const robotObs = [...measured];
    const hand = { campaign: undefined as number | null | undefined, signature: '', taken: null as Set<string> | null };
    const syncHand = async () => {
      if (!this.points) return;
      if (hand.campaign === undefined) hand.campaign = (await this.opts.store.campaigns.ofTask(task.id))?.id ?? null;
      if (hand.campaign === null) return;
      const points = await this.opts.store.campaigns.points(hand.campaign);
      const signature = points.map((x) => `${x.n}:${x.state}`).join(',');
      if (signature === hand.signature) return;
      hand.signature = signature;
      instance = await this.points.rebuild(p, points, robotObs);
      live.instance = instance;
      hand.taken = new Set(points.filter((x) => x.state === 'pending').map((x) => pointKey(p.space, x.parameters)));
    };
    const source: IterationSource = {
      // the runner reads this before each iteration: stop_when ends the campaign early
      get total() {
        return live.stopped ? Math.min(live.stopped.iteration, p.budget) : p.budget;
      },
      params: async (i, recorded) => {
        if (recorded) return recorded;
        if (buffer.length === 0) {
          await syncHand();
          const k = Math.min(p.batch_size, p.budget - i);
          buffer = hand.taken ? await freshSuggestions(instance, p, k, hand.taken) : [...(await instance.suggest(k))];
        }
        const next = buffer.shift();
        if (!next) throw new LabError('internal', `The optimizer ${p.optimizer} suggested nothing.`);
        return { ...p.fixed, ...next };
      },
      measured: async (i, params, outputs) => {
        const obs = this.observation(p, params, outputs);
        if (obs) robotObs.push(obs);
        if (obs) await instance.observe([obs]);
        else await log(`Iteration ${i + 1} gave no numeric ${this.measuredNames(p).join('/')}: not told to the optimizer.`);
        const reason = live.stopped ? null : met(outputs);
        if (reason) {
          live.stopped = { iteration: i + 1, reason };
          await log(`Campaign stopped early after iteration ${i + 1} of ${p.budget}: ${reason}.`);
        }
      },
      // an objective (or a constrained output) that is not a number fails the step that saved it: the operator retries, skips or aborts
      checkSaved: (name, value) => {
        for (const o of this.measuredNames(p)) {
          const source = sourceOf(p.definition.outputs, o) ?? o;
          if (source.split('.')[0] !== name) continue;
          const v = outputValue({ [name]: value }, source);
          if (typeof v !== 'number' || !Number.isFinite(v)) {
            return `the campaign's ${p.objectives.some((x) => x.name === o) ? 'objective' : 'outcome constraint on'} "${o}" must be a number, and it is ${v === null ? 'missing' : JSON.stringify(v).slice(0, 100)}`;
          }
        }
        return null;
      },
    };
    return source;
  }, { runParameters: (payload: TaskPayload) => campaignRecord(payload as CampaignPayload) });

  /** The outputs an observation carries: the objectives, then the outputs with outcome constraints. */
  measuredNames(p: CampaignPayload): string[] {
    const names = p.objectives.map((o) => o.name);
    for (const c of checkOutcomeConstraints(p.outcome_constraints ?? [], 'outcome_constraints')) if (!names.includes(c.name)) names.push(c.name);
    return names;
  }

  private observation(p: CampaignPayload, params: Record<string, unknown>, outputs: Record<string, unknown> | null): Observation | null {
    const values: Record<string, number> = {};
    for (const name of this.measuredNames(p)) {
      const v = outputs?.[name];
      if (typeof v !== 'number' || !Number.isFinite(v)) return null;
      values[name] = v;
    }
    const x: Record<string, number | string> = {};
    for (const s of p.space) x[s.name] = params[s.name] as number | string;
    return { params: x, values };
  }

  /** The latest campaign's measurements, best so far and model, for the plot; 404 when none has run. */
  async latestPlot(): Promise<LatestPlot> {
    const task = await this.latestTask();
    if (!task) throw new LabError('not_found', 'No campaign has run yet: start one on the campaign page.');
    const p = task.payload as CampaignPayload;
    const phases: PhaseRow[] = task.runId ? (await this.opts.store.phases.list(task.runId)).filter((ph) => ph.phase === 'main') : [];
    const first = p.objectives[0];
    const points: LatestPlot['points'] = p.existing.map((o) => ({ iteration: null, params: o.params, values: o.values }));
    const best: LatestPlot['best_so_far'] = [];
    // the warm start's best counts: a campaign that found nothing better shows the level it started from
    let bestValue: number | null = campaignRecord(p).campaign.warm_start.best;
    let stopped: string | null = null;
    const stopWhen = checkOutcomeConstraints(p.stop_when ?? [], 'stop_when');
    for (const ph of phases.sort((a, b) => (a.iteration ?? 0) - (b.iteration ?? 0))) {
      if (ph.status !== 'ok') continue;
      const outputs = (ph.outputs ?? {}) as Record<string, unknown>;
      const values = Object.fromEntries(this.measuredNames(p).map((name) => [name, typeof outputs[name] === 'number' ? (outputs[name] as number) : null]));
      points.push({ iteration: ph.iteration ?? 0, params: Object.fromEntries(p.space.map((s) => [s.name, (ph.params as Record<string, unknown>)[s.name]])), values, suggested_by: `optimizer:${p.optimizer}`, measured_by: `run:${task.runId}` });
      const v = values[first.name];
      // a measurement that misses an outcome constraint is no candidate for the best, whatever its value
      if (typeof v === 'number' && meetsOutcomes(p, outputs) && (bestValue === null || (first.minimize ? v < bestValue : v > bestValue))) bestValue = v;
      if (bestValue !== null) best.push({ iteration: ph.iteration ?? 0, value: bestValue });
      stopped ??= limitMet(stopWhen, outputs);
    }
    // points measured by hand (issue 31): after the campaign's own iterations, with who suggested and measured them
    const record = await this.opts.store.campaigns.ofTask(task.id);
    for (const x of record ? await this.opts.store.campaigns.points(record.id) : []) {
      if (x.state !== 'measured' || !x.results) continue;
      points.push({ iteration: null, n: x.n, params: x.parameters, values: Object.fromEntries(this.measuredNames(p).map((name) => [name, x.results![name] ?? null])), suggested_by: x.suggestedBy, measured_by: x.measuredBy ?? undefined });
    }
    const live = this.live?.taskId === task.id ? this.live : null;
    return {
      campaign: { task_id: task.id, run_id: task.runId, campaign_id: record?.id ?? null, name: task.name, workflow: p.workflow, optimizer: p.optimizer, status: task.status, budget: p.budget, batch_size: p.batch_size, stopped_early: stopped },
      parameters: p.space,
      objectives: p.objectives,
      points,
      best_so_far: best,
      model: live ? live.instance.snapshot() : null,
    };
  }

  /** The campaign task running now, or else the one queued most recently. */
  private async latestTask(): Promise<QueueTaskRow | null> {
    const id = (await this.opts.store.settings.get<number>('campaign.latest')) ?? this.live?.taskId;
    return id ? this.opts.store.queue.get(id) : null;
  }
}
