/**
 * Operations on campaigns (DESIGN.md §15): start one (checked, queued, audited `campaign.start`; an agent's
 * waits for a person), the optimizers and their schemas, and the latest campaign's plot; and campaigns people
 * carry out (issue 31): a manual campaign, its suggestions, the points people add, measure and discard.
 */
import type { CampaignInput, CampaignPayload } from '../campaign/index.js';
import type { CampaignPoints, CampaignView, PointView } from '../campaign/manual.js';
import { LabError } from '../errors.js';
import type { QueueTaskRow } from '../store/types.js';
import { isAgent, type Caller } from './caller.js';
import { agentOf, audit, type Lab, type MaybeRequest } from './lab.js';
import type { Queued } from './runs.js';

/** A person, for what only people do: set up a manual campaign, enter what they measured (an agent reads, a person measures). */
function personOf(caller: Caller, what: string): { userId: number | null; name: string } {
  if (isAgent(caller)) throw new LabError('forbidden', `An agent cannot ${what}: a person does, on the campaign's page.`);
  return { userId: caller.userId, name: caller.name };
}

export function campaignOperations(lab: Lab) {
  const { campaigns, runner } = lab;
  const points = (): CampaignPoints => {
    if (!campaigns.points) throw new LabError('internal', 'Campaign points are not set up.');
    return campaigns.points;
  };
  return {
    /** Set up a campaign people carry out (`execution: "manual"`): checked, its first points suggested, audited `campaign.manual`. */
    async startManual(caller: Caller, input: CampaignInput): Promise<CampaignView> {
      const view = await points().create(input, personOf(caller, 'set up a campaign carried out by hand'));
      await audit(lab, caller, 'campaign.manual', { campaign_id: view.campaign_id, workflow: view.workflow, optimizer: view.optimizer });
      return view;
    },

    /** Every campaign people can add points to (manual ones, and robot ones), newest first. */
    list() {
      return points().list();
    },

    /** One campaign with its points. */
    get(id: number): Promise<CampaignView> {
      return points().view(id);
    },

    /** Its progress plot: the measured points with who suggested and measured each, and the best so far. */
    plot(id: number) {
      return points().plot(id);
    },

    /** n more suggestions (pending points), audited `campaign.suggest`. */
    async suggest(caller: Caller, id: number, n: unknown): Promise<PointView[]> {
      const added = await points().suggest(id, n);
      await audit(lab, caller, 'campaign.suggest', { campaign_id: id, points: added.map((x) => x.n) });
      return added;
    },

    /** A person's own point (a staff point), pending or with its results; audited `campaign.point.add`. */
    async addPoint(caller: Caller, id: number, body: { parameters?: unknown; results?: unknown }): Promise<PointView> {
      const point = await points().addPoint(id, body, personOf(caller, 'add a point'));
      await audit(lab, caller, 'campaign.point.add', { campaign_id: id, n: point.n, parameters: point.parameters, results: point.results });
      return point;
    },

    /** Enter a point's results, or discard it with a reason; audited `campaign.point.enter`. */
    async enter(caller: Caller, id: number, n: number, body: { results?: unknown; discarded?: unknown; reason?: unknown }): Promise<PointView> {
      const point = await points().enter(id, n, body, personOf(caller, 'enter what was measured'));
      await audit(lab, caller, 'campaign.point.enter', { campaign_id: id, n, state: point.state, results: point.results, reason: point.reason });
      return point;
    },

    /** The pending points as a CSV to fill in, or every point with who suggested and measured it. */
    csv(id: number, which: 'pending' | 'all') {
      return points().csv(id, which);
    },

    /** Results uploaded as the filled-in pending CSV; audited `campaign.upload`. */
    async upload(caller: Caller, id: number, file: Buffer | string) {
      const out = await points().upload(id, file, personOf(caller, 'enter what was measured'));
      await audit(lab, caller, 'campaign.upload', { campaign_id: id, ...out });
      return out;
    },

    /**
     * Start a campaign: its space, objectives and optimizer checked, the task queued, and the audit line
     * (`asked`: the optimizer the caller named, when labdeck answers it with another).
     */
    async start(caller: Caller, input: CampaignInput, opts: { asked?: unknown } = {}): Promise<MaybeRequest<Queued>> {
      if (isAgent(caller)) return { request: await lab.approvals.campaign(agentOf(caller), input) };
      const task = await campaigns.submit(input, caller.userId);
      await audit(lab, caller, 'campaign.start', { task_id: task.id, workflow: input.workflow, optimizer: input.optimizer_type, ...(opts.asked === undefined ? {} : { asked: opts.asked }) });
      return { done: { task, status: (await runner.startsNow(task.id)) ? 'running' : 'queued' } };
    },

    /** Queue a campaign already checked (an approved request's plan) on behalf of `caller`'s account. */
    enqueue(caller: Caller, plan: { name: string; kind: 'campaign'; payload: CampaignPayload }): Promise<QueueTaskRow> {
      return campaigns.enqueue(plan, caller.userId);
    },

    /** Every optimizer's JSON Schema and capabilities. */
    schemas() {
      return campaigns.schemas();
    },

    /** One optimizer's (or, for none named, every one's). */
    schema(name: unknown) {
      return campaigns.schema(name);
    },

    latestPlot() {
      return campaigns.latestPlot();
    },
  };
}

export type CampaignOperations = ReturnType<typeof campaignOperations>;
