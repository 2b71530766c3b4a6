/**
 * Campaigns people carry out (issue 31): `execution: "manual"` campaigns, whose optimizer suggests points that
 * people measure and enter later (days later, across restarts: every point is a row of the database), and the
 * points people add to any campaign (staff points, and, on a robot campaign, points measured by hand).
 *
 * The optimizer's state is never kept: each suggestion rebuilds it from the records (the warm start, the
 * measured points, a robot campaign's finished iterations), then tells it what is pending or discarded
 * (OptimizerInstance.restore), so a pending point is never suggested again; for an optimizer without
 * `restore` a suggestion that repeats a pending point is dropped and asked again. Nothing here knows HTTP.
 */
import type { Observation, OptimizerInstance } from '../contracts/index.js';
import { LabError } from '../errors.js';
import { parseCsv, toCsv } from '../files/csv.js';
import type { CampaignRow, PointRow, Store } from '../store/types.js';
import type { Campaigns } from './index.js';
import { campaignOfRun, type CampaignInput, type CampaignPayload } from './record.js';
import { checkResults, checkStaffPoint, freshSuggestions, pointKey, spaceValues } from './points.js';
import { campaignPlot, type CampaignPlot } from './progress.js';

/** Who acts: an account's id and name (`person:<name>` in the records). */
export interface Who {
  userId: number | null;
  name: string;
}

export interface PointView {
  n: number;
  parameters: Record<string, unknown>;
  state: PointRow['state'];
  results: Record<string, number> | null;
  reason: string | null;
  /** `optimizer:<name>` or `person:<username>`. */
  suggested_by: string;
  /** `person:<username>` once measured or discarded (`run:<id>` for a robot campaign's own iterations). */
  measured_by: string | null;
  suggested_at: string;
  measured_at: string | null;
}

export interface CampaignView {
  campaign_id: number;
  name: string;
  execution: 'manual' | 'robot';
  workflow: string;
  optimizer: string;
  task_id: number | null;
  /** The search space. */
  parameters: CampaignPayload['space'];
  objectives: CampaignPayload['objectives'];
  /** What a point's results hold: the objectives, then the outputs with outcome constraints. */
  measures: string[];
  batch_size: number;
  counts: { pending: number; measured: number; discarded: number };
  points: PointView[];
  /** A robot campaign's own iterations, measured by its workflow. */
  iterations: PointView[];
  created_by: string | null;
  created_at: string;
}

const MAX_SUGGEST = 100;

function pointView(p: PointRow): PointView {
  return {
    n: p.n,
    parameters: p.parameters,
    state: p.state,
    results: p.results,
    reason: p.reason,
    suggested_by: p.suggestedBy,
    measured_by: p.measuredBy,
    suggested_at: p.createdAt.toISOString(),
    measured_at: p.measuredAt?.toISOString() ?? null,
  };
}

const person = (who: Who) => `person:${who.name}`;

export class CampaignPoints {
  constructor(private readonly opts: { store: Store; campaigns: Campaigns }) {}

  private get store() {
    return this.opts.store;
  }

  /** Set up a manual campaign (checked as any campaign is) and suggest its first `batch_size` points. */
  async create(input: CampaignInput, who: Who): Promise<CampaignView> {
    // a manual campaign has no iterations to run: `repeat` is only how many points it aims at
    const payload = await this.opts.campaigns.plan({ ...input, repeat: input.repeat === undefined || input.repeat === '' ? 1 : input.repeat });
    const name = typeof input.name === 'string' && input.name.trim() ? input.name.trim().slice(0, 200) : `${payload.workflow} · ${payload.optimizer} by hand`;
    const row = await this.store.campaigns.create({ name, execution: 'manual', taskId: null, payload, createdBy: who.userId });
    await this.suggest(row.id, payload.batch_size);
    return this.view(row.id);
  }

  /** The campaign record a robot campaign's task gets, so that people can add points to it. */
  async forTask(taskId: number, name: string, payload: CampaignPayload, createdBy: number | null): Promise<CampaignRow> {
    return (await this.store.campaigns.ofTask(taskId)) ?? this.store.campaigns.create({ name, execution: 'robot', taskId, payload, createdBy });
  }

  private async campaign(id: number): Promise<CampaignRow & { payload: CampaignPayload }> {
    const row = Number.isSafeInteger(id) ? await this.store.campaigns.get(id) : null;
    if (!row) throw new LabError('not_found', `There is no campaign ${id}.`);
    return row as CampaignRow & { payload: CampaignPayload };
  }

  async list(limit = 100): Promise<{ campaign_id: number; name: string; execution: string; workflow: string; optimizer: string; task_id: number | null; created_at: string }[]> {
    return (await this.store.campaigns.list(limit)).map((c) => {
      const p = c.payload as CampaignPayload;
      return { campaign_id: c.id, name: c.name, execution: c.execution, workflow: p.workflow, optimizer: p.optimizer, task_id: c.taskId, created_at: c.createdAt.toISOString() };
    });
  }

  /** The campaign with its points (and a robot campaign's iterations). */
  async view(id: number): Promise<CampaignView> {
    const c = await this.campaign(id);
    const p = c.payload;
    const points = (await this.store.campaigns.points(id)).map(pointView);
    const iterations = c.taskId ? await this.iterations(c) : [];
    const creator = c.createdBy ? await this.store.users.byId(c.createdBy) : null;
    const count = (s: PointRow['state']) => points.filter((x) => x.state === s).length;
    return {
      campaign_id: c.id,
      name: c.name,
      execution: c.execution,
      workflow: p.workflow,
      optimizer: p.optimizer,
      task_id: c.taskId,
      parameters: p.space,
      objectives: p.objectives,
      measures: this.opts.campaigns.measuredNames(p),
      batch_size: p.batch_size,
      counts: { pending: count('pending'), measured: count('measured'), discarded: count('discarded') },
      points,
      iterations,
      created_by: creator ? `person:${creator.username}` : null,
      created_at: c.createdAt.toISOString(),
    };
  }

  /** The campaign's progress plot: its measured points (who suggested and measured each) and the best so far. */
  async plot(id: number): Promise<CampaignPlot> {
    const c = await this.campaign(id);
    return campaignPlot(c.payload, await this.view(id));
  }

  /** A robot campaign's finished iterations, as points its workflow measured. */
  private async iterations(c: CampaignRow & { payload: CampaignPayload }): Promise<PointView[]> {
    const task = await this.store.queue.get(c.taskId!);
    if (!task?.runId) return [];
    const run = await this.store.runs.get(task.runId);
    if (!run || !campaignOfRun(run.parameters)) return [];
    const measures = this.opts.campaigns.measuredNames(c.payload);
    return (await this.store.phases.list(task.runId))
      .filter((ph) => ph.phase === 'main' && ph.status === 'ok')
      .map((ph) => {
        const outputs = (ph.outputs ?? {}) as Record<string, unknown>;
        return {
          n: (ph.iteration ?? 0) + 1,
          parameters: spaceValues(c.payload.space, (ph.params ?? {}) as Record<string, unknown>),
          state: 'measured' as const,
          results: Object.fromEntries(measures.map((m) => [m, outputs[m] as number])),
          reason: null,
          suggested_by: `optimizer:${c.payload.optimizer}`,
          measured_by: `run:${task.runId}`,
          suggested_at: (ph.startedAt ?? run.startedAt ?? c.createdAt).toISOString(),
          measured_at: ph.endedAt?.toISOString() ?? null,
        };
      });
  }

  /**
   * The campaign's optimizer rebuilt from the records: the warm start, `extra` observations (a robot run's
   * iterations), the measured points; then told what is pending and discarded.
   */
  async rebuild(p: CampaignPayload, points: PointRow[], extra: Observation[] = []): Promise<OptimizerInstance> {
    const opt = this.opts.campaigns.optimizer(p.optimizer);
    const instance = opt.create({ space: p.space, objectives: p.objectives, config: p.config, seed: p.seed, constraints: p.constraints, outcomeConstraints: p.outcome_constraints });
    const measured = points.filter((x) => x.state === 'measured' && x.results).map((x) => ({ params: spaceValues(p.space, x.parameters), values: x.results! }));
    const history = [...p.existing, ...extra, ...measured];
    if (history.length) await instance.observe(history);
    const pending = points.filter((x) => x.state === 'pending').map((x) => spaceValues(p.space, x.parameters));
    const discarded = points.filter((x) => x.state === 'discarded').map((x) => spaceValues(p.space, x.parameters));
    if ((pending.length || discarded.length) && instance.restore) await instance.restore({ pending, discarded });
    return instance;
  }

  /** Add `n` suggestions (pending points) to a campaign; one suggestion at a time per campaign, lab-wide. */
  async suggest(id: number, n: unknown): Promise<PointView[]> {
    const count = typeof n === 'string' && n.trim() ? Number(n) : n;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_SUGGEST) {
      throw new LabError('invalid_input', `n: must be a whole number from 1 to ${MAX_SUGGEST}, got ${JSON.stringify(n)}`, [{ field: 'n', message: `must be a whole number from 1 to ${MAX_SUGGEST}` }]);
    }
    const c = await this.campaign(id);
    const p = c.payload;
    return this.store.campaigns.exclusive(id, async (repo) => {
      const points = await repo.points(id);
      const extra = c.taskId
        ? (await this.iterations(c))
            .map((x) => ({ params: x.parameters as Record<string, number | string>, values: x.results! }))
            .filter((o) => Object.values(o.values).every((v) => typeof v === 'number'))
        : [];
      const instance = await this.rebuild(p, points, extra);
      const taken = new Set(points.filter((x) => x.state === 'pending').map((x) => pointKey(p.space, x.parameters)));
      let next: Record<string, number | string>[];
      try {
        next = await freshSuggestions(instance, p, count, taken);
      } catch (e) {
        const err = e as Partial<LabError>;
        if (err?.name === 'LabError' && typeof err.code === 'string') throw new LabError(err.code, String(err.message), err.details);
        throw e;
      }
      if (!next.length) throw new LabError('conflict', `The optimizer ${p.optimizer} has no new point to suggest (it repeats the pending ones).`);
      return (
        await repo.addPoints(
          id,
          next.map((parameters) => ({ parameters, suggestedBy: `optimizer:${p.optimizer}`, suggestedUser: null })),
        )
      ).map(pointView);
    });
  }

  /** A person's own point (pending, or measured at once when `results` come with it). */
  async addPoint(id: number, body: { parameters?: unknown; results?: unknown }, who: Who): Promise<PointView> {
    const c = await this.campaign(id);
    const parameters = checkStaffPoint(c.payload, body.parameters);
    const results = body.results === undefined || body.results === null ? undefined : checkResults(this.opts.campaigns.measuredNames(c.payload), body.results);
    const [row] = await this.store.campaigns.addPoints(id, [
      { parameters, suggestedBy: person(who), suggestedUser: who.userId, ...(results ? { results, measuredBy: person(who), measuredUser: who.userId } : {}) },
    ]);
    return pointView(row!);
  }

  /** Enter a pending point's results, or discard it with a reason. */
  async enter(id: number, n: number, body: { results?: unknown; discarded?: unknown; reason?: unknown }, who: Who): Promise<PointView> {
    const c = await this.campaign(id);
    const points = await this.store.campaigns.points(id);
    const point = points.find((x) => x.n === n);
    if (!point) throw new LabError('not_found', `Campaign ${id} has no point ${n} (its points: 1 to ${points.length}).`);
    const discard = body.discarded === true || body.discarded === 'true' || body.discarded === 'on';
    if (body.discarded !== undefined && body.discarded !== false && body.discarded !== 'false' && !discard) {
      throw new LabError('invalid_input', 'discarded: must be true or false', [{ field: 'discarded', message: 'must be true or false' }]);
    }
    let results: Record<string, number> | null = null;
    let reason: string | null = null;
    if (discard) {
      if (body.results !== undefined) throw new LabError('invalid_input', 'results: a discarded point has no results', [{ field: 'results', message: 'a discarded point has no results' }]);
      if (typeof body.reason !== 'string' || !body.reason.trim())
        throw new LabError('invalid_input', 'reason: say why the point is discarded', [{ field: 'reason', message: 'is required when a point is discarded' }]);
      reason = body.reason.trim().slice(0, 1000);
    } else {
      if (body.reason !== undefined && body.reason !== '')
        throw new LabError('invalid_input', 'reason: only a discarded point takes a reason', [{ field: 'reason', message: 'only a discarded point takes a reason (send discarded: true)' }]);
      results = checkResults(this.opts.campaigns.measuredNames(c.payload), body.results);
    }
    if (point.state !== 'pending') throw new LabError('conflict', `Point ${n} of campaign ${id} is ${point.state} already (${point.measuredBy ?? ''}), and a point is entered once.`);
    const ok = await this.store.campaigns.settle(id, n, { state: discard ? 'discarded' : 'measured', results, reason, measuredBy: person(who), measuredUser: who.userId, at: new Date() });
    if (!ok) throw new LabError('conflict', `Point ${n} of campaign ${id} was entered meanwhile by someone else.`);
    return pointView((await this.store.campaigns.points(id)).find((x) => x.n === n)!);
  }

  /** The points as CSV: the pending ones to fill in (`pending`), or every point with who suggested and measured it (`all`). */
  async csv(id: number, which: 'pending' | 'all'): Promise<{ name: string; text: string }> {
    const v = await this.view(id);
    const names = v.parameters.map((s) => s.name);
    if (which === 'pending') {
      const rows = v.points.filter((x) => x.state === 'pending').map((x) => ({ n: x.n, ...x.parameters, suggested_by: x.suggested_by }));
      return { name: `campaign-${id}-pending.csv`, text: toCsv(rows, ['n', ...names, ...v.measures, 'discarded_reason', 'suggested_by']) };
    }
    const rows = [...v.iterations.map((x) => ({ ...x, n: '' })), ...v.points].map((x) => ({
      n: x.n,
      state: x.state,
      ...x.parameters,
      ...(x.results ?? {}),
      reason: x.reason,
      suggested_by: x.suggested_by,
      measured_by: x.measured_by,
      suggested_at: x.suggested_at,
      measured_at: x.measured_at,
    }));
    return { name: `campaign-${id}-data.csv`, text: toCsv(rows, ['n', 'state', ...names, ...v.measures, 'reason', 'suggested_by', 'measured_by', 'suggested_at', 'measured_at']) };
  }

  /**
   * Results uploaded as CSV (the pending table filled in): a column `n` and one per measured output; a row
   * with results enters them, a row with a `discarded_reason` discards the point, a row with neither stays
   * pending. All rows are checked before any is entered; a problem names its line and column.
   */
  async upload(id: number, file: Buffer | string, who: Who): Promise<{ measured: number[]; discarded: number[]; unchanged: number[] }> {
    const c = await this.campaign(id);
    const measures = this.opts.campaigns.measuredNames(c.payload);
    const table = parseCsv(file);
    const missing = ['n', ...measures].filter((m) => !table.columns.includes(m));
    if (missing.length)
      throw new LabError(
        'invalid_input',
        `The file has no column ${missing.map((m) => `"${m}"`).join(', ')} (download the pending points to fill them in).`,
        missing.map((m) => ({ field: `column ${m}`, message: 'is missing' })),
      );
    const points = new Map((await this.store.campaigns.points(id)).map((x) => [x.n, x]));
    const plan: { n: number; results: Record<string, number> | null; reason: string | null }[] = [];
    const unchanged: number[] = [];
    table.rows.forEach((row, i) => {
      const line = table.lines[i];
      const n = Number(row.n);
      const point = points.get(n);
      if (!Number.isInteger(n) || !point)
        throw new LabError('invalid_input', `line ${line}, column n: campaign ${id} has no point "${row.n}"`, [{ field: `line ${line}, column n`, message: `no point "${row.n}"` }]);
      const reason = (row.discarded_reason ?? '').trim();
      const given = measures.filter((m) => (row[m] ?? '').trim() !== '');
      if (!given.length && !reason) return void unchanged.push(n);
      if (point.state !== 'pending') {
        // the same file uploaded again: what is in stays, and is not entered twice
        return void unchanged.push(n);
      }
      if (reason && given.length)
        throw new LabError('invalid_input', `line ${line}: a point is measured or discarded, not both`, [
          { field: `line ${line}, column discarded_reason`, message: 'a discarded point has no results' },
        ]);
      if (reason) return void plan.push({ n, results: null, reason });
      try {
        plan.push({ n, results: checkResults(measures, Object.fromEntries(measures.map((m) => [m, row[m]])), 'column'), reason: null });
      } catch (e) {
        const d = (e as LabError).details ?? [];
        throw new LabError(
          'invalid_input',
          `line ${line}: ${d.map((x) => `${x.field!.replace('column.', 'column ')}: ${x.message}`).join('; ')}`,
          d.map((x) => ({ field: `line ${line}, ${x.field!.replace('column.', 'column ')}`, message: x.message })),
        );
      }
    });
    const out = { measured: [] as number[], discarded: [] as number[], unchanged };
    for (const step of plan) {
      const ok = await this.store.campaigns.settle(id, step.n, {
        state: step.reason ? 'discarded' : 'measured',
        results: step.results,
        reason: step.reason,
        measuredBy: person(who),
        measuredUser: who.userId,
        at: new Date(),
      });
      (ok ? (step.reason ? out.discarded : out.measured) : out.unchanged).push(step.n);
    }
    return out;
  }
}
