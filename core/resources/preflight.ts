/**
 * The preflight of a task (issue 32): before anything moves, every step resolved against the live schemas of
 * the host that will run it, what the whole task will use against the stock, and how long it should take
 * (P10-P50-P90 per step, from past call records). The same check runs when a task is queued: a task that
 * needs more than the stock holds is refused (409, naming resource, needed and available), and nothing moves.
 * Also here: the deck versions (deck-versions.ts), taken whenever the deck changes, and each run's stamp.
 */
import type { Campaigns } from '../campaign/index.js';
import type { Deck } from '../deck/index.js';
import { LabError, isLabError, type ErrorDetail } from '../errors.js';
import type { Runner } from '../runner/index.js';
import type { TaskPayload, WorkflowPayload } from '../runner/tasks.js';
import type { Store } from '../store/types.js';
import type { Step } from '../workflow/model.js';
import type { CampaignPayload } from '../campaign/index.js';
import { brokenWorkflows, type BrokenWorkflow } from './broken.js';
import { changeText, diffDecks, snapshotOf, type DeckSnapshot, type MethodChange } from './deck-versions.js';
import type { SafetyPreflight } from '../safety/upfront.js';
import type { Resources } from './index.js';
import { UNKNOWN, rulesFor, usesOf, type Known } from './rules.js';
import type { Consumption } from '../contracts/index.js';

export interface Band {
  p10: number;
  p50: number;
  p90: number;
}

export interface PreflightStep {
  path: string;
  kind: string;
  instrument?: string;
  method?: string;
  /** Which labdeck runs it: this one, another on the database, or a `lab agent`. */
  host?: string;
  /** How many times the whole task makes this step. */
  times: number;
  /** One call's duration (s), or null with a reason. */
  duration_s: Band | null;
  reason?: string;
}

export interface PreflightResult {
  ok: boolean;
  problems: ErrorDetail[];
  resources: { name: string; needed: number; available: number; unit: string | null }[];
  duration_s: Band | null;
  /** Why there is no duration, or what it leaves out (operator pauses). */
  duration_reason?: string;
  steps: PreflightStep[];
  iterations: number;
  deck_version: number | null;
  /** The safety guard's verdict on what is known before it moves (core/safety/upfront.ts); null: no guard installed. */
  safety: SafetyPreflight | null;
}

/** Past calls a step's band is learned from. */
const SAMPLES = 50;
const DECK_SETTLE_MS = 300;

/** Linear-interpolated quantile of sorted numbers. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
}

const round = (x: number) => Math.round(x * 1000) / 1000;

interface Visit {
  path: string;
  step: Step;
  /** How many times this step runs per pass of its phase (repeat blocks multiply). */
  mult: number;
}

/** Every step of a phase with its path and multiplicity; both branches of an `if` count (the worst case). */
function visits(steps: readonly Step[], path: string, mult: number, out: Visit[]): Visit[] {
  steps.forEach((step, i) => {
    const p = `${path}[${i}]`;
    out.push({ path: p, step, mult });
    if (step.kind === 'repeat') visits(step.steps, `${p}.steps`, mult * step.times, out);
    else if (step.kind === 'if') {
      visits(step.then, `${p}.then`, mult, out);
      if (step.else) visits(step.else, `${p}.else`, mult, out);
    }
  });
  return out;
}

export class Preflight {
  /** The safety guard's verdict of a prepared task (set by core/runtime.ts); its problems join the preflight's. */
  safety: ((kind: string, payload: TaskPayload) => SafetyPreflight) | null = null;
  private version: number | null = null;
  private versionTimer: NodeJS.Timeout | null = null;
  private versionWrite: Promise<void> = Promise.resolve();
  private readonly onDeckChange = () => this.deckChanged('the deck changed');
  private readonly onRunEvent = (e: { type: string; status?: string; run_id?: number; host?: string }) => {
    if (e.type === 'run' && e.status === 'running' && e.host === undefined && e.run_id !== undefined) {
      const runId = e.run_id;
      // a deck change still settling is numbered first: the run is stamped with the deck it runs on
      void this.settled()
        .then(() => (this.version === null ? undefined : this.opts.store.resources.deckVersions.stampRun(runId, this.version)))
        .catch(() => undefined);
    }
  };

  constructor(private readonly opts: { store: Store; deck: Deck; runner: Runner; campaigns: Campaigns; resources: Resources }) {}

  /** Take the deck's version now, follow its changes, and check every task before it is queued. */
  async start(): Promise<void> {
    await this.takeVersion('labdeck started');
    this.opts.deck.on('change', this.onDeckChange);
    this.opts.deck.on('drivers', this.onDeckChange);
    this.opts.runner.on('event', this.onRunEvent);
    this.opts.runner.beforeQueue = (t) => this.refuseShort(t.kind, t.payload);
  }

  close(): void {
    this.opts.deck.off('change', this.onDeckChange);
    this.opts.deck.off('drivers', this.onDeckChange);
    this.opts.runner.off('event', this.onRunEvent);
    if (this.versionTimer) clearTimeout(this.versionTimer);
    this.opts.runner.beforeQueue = null;
  }

  /** The host name deck versions are kept under (without the process id: a restart is the same deck). */
  get hostKey(): string {
    return this.opts.runner.host.name.replace(/ \(pid \d+\)$/, '');
  }

  /** The current deck version's number. */
  get deckVersion(): number | null {
    return this.version;
  }

  private deckChanged(reason: string): void {
    if (this.versionTimer) clearTimeout(this.versionTimer);
    this.versionTimer = setTimeout(() => void this.takeVersion(reason).catch(() => undefined), DECK_SETTLE_MS);
    this.versionTimer.unref();
  }

  /** Wait until the deck changes seen so far are numbered (tests, and a page that shows the latest). */
  async settled(): Promise<void> {
    if (this.versionTimer) {
      clearTimeout(this.versionTimer);
      this.versionTimer = null;
      await this.takeVersion('the deck changed');
    }
    await this.versionWrite;
  }

  /** A new version when the deck differs from this host's last one; returns what changed. */
  takeVersion(reason: string): Promise<void> {
    const run = async () => {
      const snap = snapshotOf(this.opts.deck.list());
      const last = await this.opts.store.resources.deckVersions.latest(this.hostKey);
      const before = (last?.schemas ?? null) as DeckSnapshot | null;
      const diff = before ? diffDecks(before, snap) : [];
      if (last && diff.length === 0) {
        this.version = last.id;
        return;
      }
      const v = await this.opts.store.resources.deckVersions.add({ host: this.hostKey, reason: last ? `${reason}: ${diff.map(changeText).slice(0, 5).join('; ')}` : reason, schemas: snap, diff });
      this.version = v.id;
    };
    this.versionWrite = this.versionWrite.then(run, run);
    return this.versionWrite;
  }

  /**
   * The saved workflows the current deck breaks, each with the step and field and what changed: the
   * workflow checked against the lab's live instruments (the same check a queued run gets).
   */
  broken(): Promise<BrokenWorkflow[]> {
    return brokenWorkflows(this.opts.store, this.opts.runner.catalogue);
  }

  /** The diff between two versions (or a version and the one before it). */
  async diff(id: number, against?: number): Promise<{ from: number | null; to: number; changes: MethodChange[]; lines: string[] }> {
    const v = await this.opts.store.resources.deckVersions.get(id);
    if (!v) throw new LabError('not_found', `There is no deck version ${id} (GET /app/deck/versions lists them).`, [{ field: 'id', message: 'unknown version' }]);
    if (against === undefined) {
      const changes = (v.diff ?? []) as MethodChange[];
      return { from: null, to: id, changes, lines: changes.map(changeText) };
    }
    const a = await this.opts.store.resources.deckVersions.get(against);
    if (!a) throw new LabError('not_found', `There is no deck version ${against}.`, [{ field: 'against', message: 'unknown version' }]);
    const changes = diffDecks(a.schemas as DeckSnapshot, v.schemas as DeckSnapshot);
    return { from: against, to: id, changes, lines: changes.map(changeText) };
  }

  /** Preflight of what POST /executions/config (or a campaign's form, with `optimizer_type`) would queue. */
  async check(input: Record<string, unknown>): Promise<PreflightResult> {
    let prepared: { kind: 'workflow' | 'campaign'; payload: TaskPayload };
    try {
      prepared =
        input.optimizer_type !== undefined || input.parameters !== undefined || input.objectives !== undefined
          ? await this.opts.campaigns.prepare(input as Parameters<Campaigns['prepare']>[0], { upfront: false })
          : await this.opts.runner.prepare(input as Parameters<Runner['prepare']>[0], { upfront: false });
    } catch (e) {
      if (!isLabError(e) || (e.code !== 'invalid_input' && e.code !== 'not_found')) throw e;
      const problems = e.details?.length ? e.details : [{ field: 'workflow', message: e.message }];
      return { ok: false, problems, resources: [], duration_s: null, duration_reason: 'the task does not check out', steps: [], iterations: 0, deck_version: this.version, safety: null };
    }
    const result = await this.ofPayload(prepared.kind, prepared.payload);
    // what the guard would refuse at submit, one problem per row (or parameter), step and field
    const safety = this.safety?.(prepared.kind, prepared.payload) ?? null;
    if (!safety) return result;
    const problems = [...safety.problems, ...result.problems];
    return { ...result, ok: problems.length === 0, problems, safety };
  }

  /** What a queued task would run, per iteration: a workflow's rows, or a campaign's worst case. */
  private iterations(kind: string, payload: TaskPayload): { count: number; row: (i: number) => Record<string, unknown>; note?: string } {
    if (kind === 'campaign') {
      const p = payload as CampaignPayload;
      const row: Record<string, unknown> = {};
      for (const s of p.space) row[s.name] = s.type === 'fixed' ? s.value : s.bounds ? s.bounds[1] : s.choices?.[0];
      return { count: p.budget, row: () => row, note: 'a campaign is counted at the top of each range (its suggestions are not known yet)' };
    }
    const w = payload as WorkflowPayload;
    if (w.repeat) return { count: w.repeat.times, row: () => w.repeat!.row };
    const rows = w.rows ?? [];
    return { count: rows.length, row: (i) => rows[i]! };
  }

  /** The preflight of a checked task. */
  async ofPayload(kind: string, payload: TaskPayload): Promise<PreflightResult> {
    const wf = payload.definition;
    const problems: ErrorDetail[] = [];
    const it = this.iterations(kind, payload);
    const rules = await this.opts.resources.rules();
    const needs = new Map<string, number>();
    const unknown = new Set<string>();
    const catalogue = this.opts.runner.catalogue;
    const defaults = Object.fromEntries(wf.parameters.map((p) => [p.name, p.default]));

    const phases: { phase: 'prep' | 'main' | 'cleanup'; passes: number }[] = [
      { phase: 'prep', passes: 1 },
      { phase: 'main', passes: it.count },
      { phase: 'cleanup', passes: 1 },
    ];
    const steps: PreflightStep[] = [];
    const callSteps: { visit: Visit; out: PreflightStep; driver?: string; defaults: Record<string, unknown>; declared?: Consumption[] }[] = [];
    for (const { phase, passes } of phases) {
      for (const v of visits(wf[phase] as Step[], phase, 1, [])) {
        const out: PreflightStep = { path: v.path, kind: v.step.kind, times: v.mult * passes, duration_s: null };
        if (v.step.kind === 'call') {
          out.instrument = v.step.instrument;
          out.method = v.step.method;
          let driver: string | undefined;
          let argDefaults: Record<string, unknown> = {};
          let declared: Consumption[] | undefined;
          try {
            const schema = catalogue.schema(v.step.instrument);
            driver = schema.driver;
            out.host = schema.host ?? 'this labdeck';
            if (schema.offline) problems.push({ field: `${v.path}.instrument`, message: `${v.step.instrument} is offline: ${schema.offline}` });
            const m = schema.methods.find((x) => x.name === (v.step as { method: string }).method);
            const props = ((m?.params as { properties?: Record<string, { default?: unknown }> } | undefined)?.properties ?? {}) as Record<string, { default?: unknown }>;
            argDefaults = Object.fromEntries(
              Object.entries(props)
                .filter(([, s]) => s && 'default' in s)
                .map(([k, s]) => [k, s.default]),
            );
            declared = m?.consumes;
          } catch {
            // prepare() checked the workflow against the same catalogue; an instrument gone since is its problem
            problems.push({ field: `${v.path}.instrument`, message: `no instrument "${v.step.instrument}" on the lab's hosts now` });
          }
          callSteps.push({ visit: v, out, driver, defaults: argDefaults, declared });
        } else if (v.step.kind === 'wait') {
          out.duration_s = { p10: v.step.seconds, p50: v.step.seconds, p90: v.step.seconds };
        } else if (v.step.kind === 'pause') {
          out.reason = 'waits for an operator';
        }
        steps.push(out);
      }
    }

    // what the task uses: each call step's rules (the lab's, or its driver's declaration), over every row of its phase
    for (const c of callSteps) {
      const step = c.visit.step as Extract<Step, { kind: 'call' }>;
      const applicable = rulesFor(rules, { instrument: step.instrument, driver: c.driver, method: step.method }, c.declared);
      if (!applicable.length) continue;
      const phase = c.visit.path.startsWith('main') ? 'main' : 'other';
      const passes = phase === 'main' ? it.count : 1;
      const argOf =
        (row: Record<string, unknown>) =>
        (name: string): Known => {
          const a = step.args?.[name];
          if (a === undefined) return name in c.defaults ? c.defaults[name] : UNKNOWN;
          if ('value' in a) return a.value;
          if ('param' in a) return a.param in row ? row[a.param] : defaults[a.param];
          return UNKNOWN;
        };
      // a workflow run's rows differ; a repeat or a prep step has one shape: count it once, multiply
      const distinctRows = phase === 'main' && kind === 'workflow' && !(payload as WorkflowPayload).repeat ? passes : 1;
      const factor = distinctRows === 1 ? passes * c.visit.mult : c.visit.mult;
      for (let i = 0; i < distinctRows; i++) {
        const row = phase === 'main' ? it.row(i) : defaults;
        const { uses, unknown: u } = usesOf(applicable, { instrument: step.instrument, driver: c.driver, method: step.method }, argOf(row));
        for (const x of u) unknown.add(`${c.visit.path}: ${x}`);
        for (const use of uses) if (use.to === undefined && use.amount > 0) needs.set(use.resource, (needs.get(use.resource) ?? 0) + use.amount * factor);
      }
    }
    const stock = new Map((await this.opts.resources.list()).map((r) => [r.name, r]));
    const resources = [...needs].map(([name, needed]) => ({ name, needed: round(needed), available: stock.get(name)?.quantity ?? 0, unit: stock.get(name)?.unit ?? null }));
    for (const r of resources) {
      const unit = r.unit && r.unit !== 'each' ? ` ${r.unit}` : '';
      if (!stock.has(r.name))
        problems.push({ field: `resources.${r.name}`, message: `the task needs ${r.needed}${unit} of "${r.name}", which is not in the lab's resources (POST /app/resources adds it)` });
      else if (r.needed > r.available) problems.push({ field: `resources.${r.name}`, message: `the task needs ${r.needed}${unit} of "${r.name}"; ${r.available} in stock` });
      const inDoubt = stock.get(r.name)?.inDoubt ?? 0;
      if (inDoubt > 0) problems.push({ field: `resources.${r.name}`, message: `"${r.name}" has ${inDoubt} in-doubt call(s) to settle first: its stock may be off (GET /app/resources/${r.name})` });
    }
    for (const u of unknown) problems.push({ field: u.split(':')[0]!, message: u.slice(u.indexOf(':') + 2) });

    // durations: one band per call step, from the last calls of that method that went well
    const bands = new Map<string, Band | null>();
    for (const c of callSteps) {
      const key = `${c.out.instrument}\u0000${c.out.method}`;
      if (!bands.has(key)) {
        const ds = (await this.opts.store.resources.durations(c.out.instrument!, c.out.method!, SAMPLES)).sort((a, b) => a - b);
        bands.set(key, ds.length ? { p10: round(quantile(ds, 0.1) / 1000), p50: round(quantile(ds, 0.5) / 1000), p90: round(quantile(ds, 0.9) / 1000) } : null);
      }
      c.out.duration_s = bands.get(key)!;
      if (!c.out.duration_s) c.out.reason = `no past call of ${c.out.instrument}.${c.out.method} that went well to learn from`;
    }
    let duration_s: Band | null = { p10: 0, p50: 0, p90: 0 };
    let duration_reason: string | undefined;
    for (const s of steps) {
      if (s.kind === 'call' && !s.duration_s) {
        duration_s = null;
        duration_reason = `${s.path} (${s.instrument}.${s.method}): ${s.reason}`;
        break;
      }
      if (s.duration_s && duration_s) for (const q of ['p10', 'p50', 'p90'] as const) duration_s[q] += s.duration_s[q] * s.times;
    }
    if (duration_s) {
      for (const q of ['p10', 'p50', 'p90'] as const) duration_s[q] = round(duration_s[q]);
      if (steps.some((s) => s.kind === 'pause')) duration_reason = 'operator pauses are not counted';
    }
    if (it.note && resources.length) duration_reason = [duration_reason, it.note].filter(Boolean).join('; ');
    return { ok: problems.length === 0, problems, resources, duration_s, ...(duration_reason ? { duration_reason } : {}), steps, iterations: it.count, deck_version: this.version, safety: null };
  }

  /** Whether a call step of the task is to a method whose driver declares what it consumes. */
  private declares(payload: TaskPayload): boolean {
    const wf = payload.definition;
    return (['prep', 'main', 'cleanup'] as const).some((phase) =>
      visits(wf[phase] as Step[], phase, 1, []).some(({ step }) => {
        if (step.kind !== 'call') return false;
        try {
          return !!this.opts.runner.catalogue.schema(step.instrument).methods.find((m) => m.name === step.method)?.consumes?.length;
        } catch {
          return false;
        }
      }),
    );
  }

  /** The check at queue time: a task that would run out of something is refused with the numbers. */
  private async refuseShort(kind: string, payload: TaskPayload): Promise<void> {
    if ((await this.opts.resources.rules()).length === 0 && !this.declares(payload)) return;
    const r = await this.ofPayload(kind, payload);
    const short = r.resources.filter((x) => x.needed > x.available);
    if (!short.length) return;
    const text = short.map((s) => `${s.name}: needs ${s.needed}, ${s.available} available`).join('; ');
    throw new LabError(
      'conflict',
      `Not queued: the run would run out (${text}). Top up the stock (PATCH /app/resources/{name}) or run fewer iterations; nothing has moved.`,
      short.map((s) => ({ field: `resources.${s.name}`, message: `needs ${s.needed}, ${s.available} available` })),
      { resources: short },
    );
  }
}
