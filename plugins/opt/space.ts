/**
 * Search-space encoding and the observation history shared by the first-party optimizers.
 *
 * Two coordinate systems:
 * - the unit cube, one coordinate per parameter (what random and Sobol points live in): `fromUnit(u)` maps a
 *   point to parameter values, ints, steps and choices in equal-width bins;
 * - the model space [0, 1]^D the GP works in: range and int parameters scaled to [0, 1] (ints and steps
 *   relaxed to reals and rounded back by `snap`), each choice parameter one-hot over its choices.
 * A log-scale parameter is scaled by its logarithm in both (uniform in log, modelled in log).
 */
import { LabError, type ErrorDetail } from '../../core/contracts/index.js';
import type { JsonValue, ObjectiveSpec, Observation, OutcomeConstraint, ParameterSpec, ParamValues } from '../../core/contracts/index.js';

/** How many values a stepped parameter takes. */
const gridSize = (p: ParameterSpec) => Math.round((p.bounds![1] - p.bounds![0]) / p.step!) + 1;
/** A grid value, clamped, without the binary noise of low + k·step (0.30000000000000004). */
const onGrid = (v: number, p: ParameterSpec) => Math.min(p.bounds![1], Math.max(p.bounds![0], Number(v.toPrecision(12))));

export class SpaceCodec {
  readonly params: ParameterSpec[];
  /** Model-space dimension (one-hot choices expanded). */
  readonly dim: number;
  /** Start of each parameter's coordinates in the model space. */
  readonly offsets: number[];
  /** Model-space coordinates of range and int parameters (the ones local search moves). */
  readonly numeric: number[];

  constructor(space: ParameterSpec[]) {
    this.params = space;
    this.offsets = [];
    this.numeric = [];
    let d = 0;
    for (const p of space) {
      this.offsets.push(d);
      if (p.type === 'choice') d += p.choices!.length;
      else this.numeric.push(d++);
    }
    this.dim = d;
  }

  /** A unit-cube point (one coordinate per parameter) → parameter values. */
  fromUnit(u: ArrayLike<number>): ParamValues {
    const out: ParamValues = {};
    this.params.forEach((p, i) => {
      const v = Math.min(Math.max(u[i]!, 0), 1 - 1e-12);
      const [lo, hi] = p.bounds ?? [0, 0];
      if (p.type === 'choice') out[p.name] = p.choices![Math.floor(v * p.choices!.length)]!;
      else if (p.step) out[p.name] = onGrid(lo + Math.floor(v * gridSize(p)) * p.step, p);
      else if (p.type === 'int' && !p.log_scale) out[p.name] = lo + Math.floor(v * (hi - lo + 1));
      else out[p.name] = this.decodeNumber(p, v);
    });
    return out;
  }

  /** Parameter values (already checked) → model-space vector. */
  encode(values: ParamValues, out: Float64Array = new Float64Array(this.dim)): Float64Array {
    this.params.forEach((p, i) => {
      const o = this.offsets[i]!;
      const v = values[p.name]!;
      if (p.type === 'choice') {
        for (let k = 0; k < p.choices!.length; k++) out[o + k] = p.choices![k] === v ? 1 : 0;
      } else if (p.log_scale) {
        out[o] = Math.log((v as number) / p.bounds![0]) / Math.log(p.bounds![1] / p.bounds![0]);
      } else {
        out[o] = ((v as number) - p.bounds![0]) / (p.bounds![1] - p.bounds![0]);
      }
    });
    return out;
  }

  /** Model-space vector → parameter values (ints rounded and clamped, steps onto their grid, choices by largest coordinate). */
  decode(x: ArrayLike<number>): ParamValues {
    const out: ParamValues = {};
    this.params.forEach((p, i) => {
      const o = this.offsets[i]!;
      if (p.type === 'choice') {
        let best = 0;
        for (let k = 1; k < p.choices!.length; k++) if (x[o + k]! > x[o + best]!) best = k;
        out[p.name] = p.choices![best]!;
      } else {
        out[p.name] = this.decodeNumber(p, Math.min(Math.max(x[o]!, 0), 1));
      }
    });
    return out;
  }

  /** A model coordinate in [0, 1] → the value of a range or int parameter (log scale, step grid, rounding). */
  private decodeNumber(p: ParameterSpec, t: number): number {
    const [lo, hi] = p.bounds!;
    const v = p.log_scale ? lo * Math.exp(t * Math.log(hi / lo)) : lo + t * (hi - lo);
    if (p.step) return onGrid(lo + Math.round((v - lo) / p.step) * p.step, p);
    const r = p.type === 'int' ? Math.round(v) : v;
    return Math.min(hi, Math.max(lo, r));
  }

  /** Move a model-space vector onto the feasible set in place: clamp, round ints, exact one-hot. */
  snap(x: Float64Array): Float64Array {
    return this.encode(this.decode(x), x);
  }

  /** A canonical key of a parameter set (to spot repeats). */
  key(values: ParamValues): string {
    return this.params.map((p) => (p.type === 'range' ? (values[p.name] as number).toPrecision(12) : String(values[p.name]))).join('\u0001');
  }

  /**
   * Check and normalise one observed parameter set: numbers for range/int (numeric strings accepted, values
   * outside the bounds accepted: a warm-start history may cover more), a listed string for choices.
   */
  checkParams(params: unknown, field: string): ParamValues {
    const details: ErrorDetail[] = [];
    const out: ParamValues = {};
    if (!params || typeof params !== 'object') {
      throw new LabError('invalid_input', `${field}: parameters missing`, [{ field, message: 'must be an object' }]);
    }
    const src = params as Record<string, unknown>;
    for (const p of this.params) {
      const v = src[p.name];
      const f = `${field}.${p.name}`;
      if (p.type === 'choice') {
        const s = typeof v === 'number' ? String(v) : v;
        if (typeof s !== 'string' || !p.choices!.includes(s)) details.push({ field: f, message: `must be one of ${p.choices!.join(', ')}` });
        else out[p.name] = s;
      } else {
        const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
        if (typeof n !== 'number' || !Number.isFinite(n)) details.push({ field: f, message: 'must be a number' });
        else out[p.name] = n;
      }
    }
    if (details.length) throw new LabError('invalid_input', `Invalid observation: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`, details);
    return out;
  }
}

export interface HistoryRow {
  params: ParamValues;
  /** Objective values in objective order, as measured. */
  values: number[];
  /** The same, oriented for minimisation (maximised objectives negated). */
  loss: number[];
  /** Each outcome constraint's margin, oriented so that ≤ 0 meets it (bound − value for ≥, value − bound for ≤). */
  margins: number[];
  /** Whether the row meets every outcome constraint. */
  feasible: boolean;
}

/**
 * The observations an optimizer has been told about. Rows without a finite value for every objective (and
 * every output with an outcome constraint) are counted, not modelled.
 */
export class History {
  readonly codec: SpaceCodec;
  readonly objectives: ObjectiveSpec[];
  readonly outcomes: OutcomeConstraint[];
  readonly rows: HistoryRow[] = [];
  /** Rows observed without usable values (failed runs). */
  skipped = 0;

  constructor(codec: SpaceCodec, objectives: ObjectiveSpec[], outcomes: OutcomeConstraint[] = []) {
    this.codec = codec;
    this.objectives = objectives;
    this.outcomes = outcomes;
  }

  /** Every row observed, usable or not. */
  get total(): number {
    return this.rows.length + this.skipped;
  }

  /** Add observed rows (checked); returns every row's parameters, usable or not. */
  add(rows: Observation[]): ParamValues[] {
    if (!Array.isArray(rows)) throw new LabError('invalid_input', 'observe() takes a list of { params, values }', [{ field: 'rows', message: 'must be a list' }]);
    const all: ParamValues[] = [];
    const checked: (HistoryRow | null)[] = rows.map((r, i) => {
      const params = this.codec.checkParams(r?.params, `rows[${i}].params`);
      all.push(params);
      const raw = (r?.values ?? {}) as Record<string, unknown>;
      const num = (name: string) => {
        const v = raw[name];
        return typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
      };
      const values = this.objectives.map((o) => num(o.name));
      const margins = this.outcomes.map((c) => (c.op === '>=' ? c.bound - num(c.name) : num(c.name) - c.bound));
      if (!values.every(Number.isFinite) || !margins.every(Number.isFinite)) return null;
      return { params, values, loss: values.map((v, k) => (this.objectives[k]!.minimize ? v : -v)), margins, feasible: margins.every((m) => m <= 0) };
    });
    for (const r of checked) {
      if (r) this.rows.push(r);
      else this.skipped++;
    }
    return all;
  }

  /** Whether the objectives carry weights: they are then scalarised with them. */
  get weighted(): boolean {
    return this.objectives.length > 1 && this.objectives.every((o) => o.weight !== undefined);
  }

  /**
   * Each row's augmented Chebyshev scalarisation max_i(λ_i f_i) + 0.05·Σ λ_i f_i of the losses normalised to
   * [0, 1] over the rows (ParEGO); λ: the weights normalised, unless given.
   */
  scalarised(lambda?: number[]): number[] {
    const k = this.objectives.length;
    const w0 = lambda ?? this.objectives.map((o) => o.weight ?? 1);
    const sum = w0.reduce((a, b) => a + b, 0);
    const w = w0.map((v) => v / sum);
    const lo = new Array<number>(k).fill(Infinity);
    const hi = new Array<number>(k).fill(-Infinity);
    for (const r of this.rows) {
      for (let i = 0; i < k; i++) {
        lo[i] = Math.min(lo[i]!, r.loss[i]!);
        hi[i] = Math.max(hi[i]!, r.loss[i]!);
      }
    }
    return this.rows.map((r) => {
      let max = -Infinity;
      let tot = 0;
      for (let i = 0; i < k; i++) {
        const f = hi[i]! > lo[i]! ? (r.loss[i]! - lo[i]!) / (hi[i]! - lo[i]!) : 0;
        max = Math.max(max, w[i]! * f);
        tot += w[i]! * f;
      }
      return max + 0.05 * tot;
    });
  }

  /** Index of the best row meeting the outcome constraints (one objective: lowest loss; weighted: lowest scalarisation), or -1. */
  bestIndex(): number {
    const score = this.weighted ? this.scalarised() : this.rows.map((r) => r.loss[0]!);
    let best = -1;
    this.rows.forEach((r, i) => {
      if (r.feasible && (best < 0 || score[i]! < score[best]!)) best = i;
    });
    return best;
  }

  /** Indices of the non-dominated rows among those meeting the outcome constraints (duplicates kept once), in observation order. */
  paretoIndices(): number[] {
    const out: number[] = [];
    const rows = this.rows;
    for (let i = 0; i < rows.length; i++) {
      if (!rows[i]!.feasible) continue;
      let dominated = false;
      for (let j = 0; j < rows.length && !dominated; j++) {
        if (i === j || !rows[j]!.feasible) continue;
        const a = rows[j]!.loss;
        const b = rows[i]!.loss;
        let le = true;
        let lt = false;
        for (let k = 0; k < a.length; k++) {
          if (a[k]! > b[k]!) le = false;
          if (a[k]! < b[k]!) lt = true;
        }
        // j dominates i, or j is an earlier exact duplicate
        if (le && (lt || j < i)) dominated = true;
      }
      if (!dominated) out.push(i);
    }
    return out;
  }

  /** The row as the snapshot shows it: { params, values: { objective: value } }. */
  rowJson(i: number): { [k: string]: JsonValue } {
    const r = this.rows[i]!;
    return { params: { ...r.params }, values: Object.fromEntries(this.objectives.map((o, k) => [o.name, r.values[k]!])) };
  }

  /** The common part of every first-party optimizer's snapshot. */
  summary(): { [k: string]: JsonValue } {
    const multi = this.objectives.length > 1;
    const b = this.bestIndex();
    return {
      observations: this.rows.length,
      failed: this.skipped,
      objectives: this.objectives.map((o) => ({ name: o.name, minimize: o.minimize, ...(o.weight !== undefined ? { weight: o.weight } : {}) })),
      ...(this.outcomes.length ? { outcome_constraints: this.outcomes.map((c) => c.text), feasible: this.rows.filter((r) => r.feasible).length } : {}),
      best: (!multi || this.weighted) && b >= 0 ? this.rowJson(b) : null,
      pareto: multi ? this.paretoIndices().map((i) => this.rowJson(i)) : null,
    };
  }
}

/**
 * Suggestions handed out and not yet observed. An observed row settles the pending suggestion it matches
 * (same parameters, up to rounding in storage); a GP treats what is still pending as fantasised points, so
 * that asking again before the results are in gives new points.
 */
export class Pending {
  readonly codec: SpaceCodec;
  list: ParamValues[] = [];
  /** Points handed out before a rebuild and given up without a result (they count as handed out). */
  discarded: ParamValues[] = [];

  constructor(codec: SpaceCodec) {
    this.codec = codec;
  }

  add(points: ParamValues[]): void {
    this.list.push(...points.map((p) => ({ ...p })));
  }

  /** After a rebuild: the points handed out and not measured (the contract's restore). */
  restore(r: { pending: ParamValues[]; discarded: ParamValues[] }): void {
    this.add(r.pending ?? []);
    this.discarded.push(...(r.discarded ?? []).map((p) => ({ ...p })));
  }

  /** How many points were handed out and are not observed: pending or discarded. */
  get count(): number {
    return this.list.length + this.discarded.length;
  }

  settle(observed: ParamValues[]): void {
    for (const p of observed) {
      const x = this.codec.encode(p);
      const i = this.list.findIndex((q) => {
        const y = this.codec.encode(q);
        for (let d = 0; d < x.length; d++) if (Math.abs(x[d]! - y[d]!) > 1e-6) return false;
        return true;
      });
      if (i >= 0) this.list.splice(i, 1);
    }
  }
}

/** Check the n of suggest(n). */
export function checkCount(n: unknown): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 1000) {
    throw new LabError('invalid_input', 'suggest(n): n must be an integer from 1 to 1000', [{ field: 'batch_size', message: 'must be an integer from 1 to 1000' }]);
  }
  return n;
}
