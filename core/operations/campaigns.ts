/**
 * Operations on campaigns (DESIGN.md §15): start one (checked, queued, audited `campaign.start`; an agent's
 * waits for a person), the optimizers and their schemas, and the latest campaign's plot.
 */
import type { CampaignInput, CampaignPayload } from '../campaign/index.js';
import type { QueueTaskRow } from '../store/types.js';
import { isAgent, type Caller } from './caller.js';
import { agentOf, audit, type Lab, type MaybeRequest } from './lab.js';
import type { Queued } from './runs.js';

export function campaignOperations(lab: Lab) {
  const { campaigns, runner } = lab;
  return {
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
