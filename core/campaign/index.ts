/**
 * Bayesian-optimisation campaigns (DESIGN.md §3, §7): a queued task like any other, whose iterations are
 * suggested by an optimizer plugin and whose measurements are told back to it. The optimizer's state is
 * never stored: it is rebuilt from the records (warm-start rows plus the run's finished iterations), so a
 * campaign survives a restart like a workflow run does. Nothing here knows about HTTP.
 *
 * In files at their seams: what a campaign is (./record.ts), planning one (./plan.ts), its run loop
 * (./run.ts), the latest campaign's plot (./plot.ts); campaigns people carry out are ./manual.ts.
 */
import { isOptimizer, optimizerSchema, type Optimizer, type OptimizerSchema } from '../contracts/index.js';
import type { Deck } from '../deck/index.js';
import { LabError } from '../errors.js';
import type { FileStore } from '../files/store.js';
import type { Runner, SourceFactory } from '../runner/index.js';
import type { QueueTaskRow, Store } from '../store/types.js';
import type { CampaignPoints } from './manual.js';
import { planCampaign } from './plan.js';
import { latestPlot, type LatestPlot } from './plot.js';
import { measuredNames, type CampaignInput, type CampaignPayload } from './record.js';
import { campaignSource, type Live } from './run.js';

export { campaignOfRun, campaignRecord, type CampaignInput, type CampaignPayload, type CampaignRecord } from './record.js';
export { parseObjectivesText, parseSpaceText } from './plan.js';
export type { LatestPlot, PlotPoint } from './plot.js';

export interface CampaignsOptions {
  store: Store;
  deck: Deck;
  files: FileStore;
  runner: () => Runner;
  /** The optimizer plugins by name (the plugin host's optimizer registry). */
  optimizers: () => ReadonlyMap<string, { value: unknown; file: string }>;
}

export class Campaigns {
  private live: Live | null = null;
  /** Points people add to campaigns (set by the runtime): a robot campaign takes points measured by hand. */
  points: CampaignPoints | null = null;
  /** Checks a campaign before it is queued, throwing to refuse it (the safety guard's search-space check; set by the runtime). */
  preflight: ((payload: CampaignPayload) => void) | null = null;

  /** The runner's iteration source for campaign tasks. */
  readonly source: SourceFactory;

  constructor(private readonly opts: CampaignsOptions) {
    this.source = campaignSource({
      store: opts.store,
      optimizer: (name) => this.optimizer(name),
      points: () => this.points,
      started: (live) => {
        this.live = live;
      },
    });
  }

  private optimizers(): Map<string, Optimizer> {
    const out = new Map<string, Optimizer>();
    for (const [name, { value }] of this.opts.optimizers()) if (isOptimizer(value)) out.set(name, value);
    return out;
  }

  /** The optimizer plugin of that name (400 naming optimizer_type when none is given, 404 when unknown). */
  optimizer(name: unknown): Optimizer {
    const all = this.optimizers();
    if (typeof name !== 'string' || !name) {
      const message = `is required: one of ${[...all.keys()].join(', ')}`;
      throw new LabError('invalid_input', `optimizer_type: ${message}`, [{ field: 'optimizer_type', message }]);
    }
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
  plan(input: CampaignInput): Promise<CampaignPayload> {
    return planCampaign({ store: this.opts.store, deck: this.opts.deck, files: this.opts.files, optimizer: (name) => this.optimizer(name) }, input);
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

  /** The outputs an observation carries: the objectives, then the outputs with outcome constraints. */
  measuredNames(p: CampaignPayload): string[] {
    return measuredNames(p);
  }

  /** The latest campaign's measurements, best so far and model, for the plot; 404 when none has run. */
  async latestPlot(): Promise<LatestPlot> {
    const task = await this.latestTask();
    if (!task) throw new LabError('not_found', 'No campaign has run yet: start one on the campaign page.');
    return latestPlot(this.opts.store, task, this.live);
  }

  /** The campaign task running now, or else the one queued most recently. */
  private async latestTask(): Promise<QueueTaskRow | null> {
    const id = (await this.opts.store.settings.get<number>('campaign.latest')) ?? this.live?.taskId;
    return id ? this.opts.store.queue.get(id) : null;
  }
}
