/**
 * Operations on the approval inbox (DESIGN.md §13, §15): what a person reads and decides, the policy an
 * admin sets, and an agent's reading of its own requests. The inbox itself (core/approvals) checks who may
 * decide; the operation adds what only the door knew: a decision is a person's, logged in in the browser,
 * never a token's.
 */
import type { ApprovalPolicy, ApprovedExecutor } from '../approvals/index.js';
import type { CampaignPayload } from '../campaign/index.js';
import type { WorkflowPayload } from '../runner/index.js';
import { LabError } from '../errors.js';
import type { ApprovalRow } from '../store/types.js';
import { isAgent, type Caller } from './caller.js';
import { done, type Lab } from './lab.js';
import type { CampaignOperations } from './campaigns.js';
import type { InstrumentOperations } from './instruments.js';
import type { RunOperations } from './runs.js';

/** The caller as the inbox knows a reader. */
const reader = (c: Caller) => ({ id: c.userId ?? -1, role: c.role ?? 'operator' });
const userOf = (c: Caller) => ({ id: c.userId ?? -1, username: c.name, role: c.role ?? 'operator' });

/** What an approved request runs through: the same operations a person's call, resume, run or campaign does. */
type Through = { instruments: InstrumentOperations; runs: RunOperations; campaigns: CampaignOperations };

/**
 * An approved request, run through the operations: the call and the run on behalf of the agent's account
 * (through the approver's door, as a person's: never again through the inbox), the resume as the approver's
 * own (with its audit line `runner.resume`).
 */
function executorFor(approver: Caller, ops: Through): ApprovedExecutor {
  const onBehalfOf = (userId: number | null): Caller => ({ userId, name: `approved by ${approver.name}`, role: null, scope: 'none', door: approver.door });
  return {
    async call(plan, userId) {
      const { task_id, output } = done(await ops.instruments.call(onBehalfOf(userId), { instrument: plan.instrument, method: plan.method, args: plan.args }));
      return { task_id, output };
    },
    async resume(plan) {
      done(await ops.runs.control(approver, 'resume', plan.task_id));
    },
    enqueue(plan, userId) {
      return plan.kind === 'campaign'
        ? ops.campaigns.enqueue(onBehalfOf(userId), { name: plan.name, kind: 'campaign', payload: plan.payload as CampaignPayload })
        : ops.runs.enqueue(onBehalfOf(userId), { name: plan.name, payload: plan.payload as WorkflowPayload });
    },
  };
}

export function approvalOperations(lab: Lab, through: Through) {
  const { approvals } = lab;
  return {
    /** Pending or decided requests the caller may read (an admin every one, anyone else their account's), newest first. */
    list(caller: Caller, which: 'pending' | 'done', limit = 100): Promise<ApprovalRow[]> {
      return approvals.list(which, limit, reader(caller));
    },

    /**
     * One request the caller may read (404 for anyone else's); with `waitMs`, once decided or after that
     * long. An agent reads its own account's requests only, whatever its account's role.
     */
    async get(caller: Caller, id: number, waitMs?: number): Promise<ApprovalRow> {
      const row = await approvals.get(id, isAgent(caller) ? undefined : reader(caller));
      if (isAgent(caller) && row.userId !== caller.userId) throw new LabError('not_found', `There is no approval request ${id} of yours.`);
      return waitMs ? approvals.wait(id, waitMs) : approvals.get(id);
    },

    policy(): Promise<ApprovalPolicy> {
      return approvals.policy();
    },

    /** An admin's policy (the inbox refuses a level that is not one, by name; it audits `approvals.policy`). */
    setPolicy(caller: Caller, policy: ApprovalPolicy): Promise<ApprovalPolicy> {
      if (caller.role !== 'admin') throw new LabError('forbidden', 'Only an admin sets the approval policy.');
      return approvals.setPolicy(policy, userOf(caller));
    },

    /**
     * Approve or reject: a person logged in in the browser (no token, a script's or an agent's, approves what
     * an agent asked), the account the agent acts as or an admin; audited `approval.approve|reject`.
     */
    decide(caller: Caller, id: number, decision: 'approve' | 'reject', reason?: string | null): Promise<ApprovalRow> {
      if (caller.scope !== 'session') throw new LabError('forbidden', 'A person decides this, logged in in the browser: requests are not approved or rejected with an API token.');
      return approvals.decide(id, decision, { user: userOf(caller), tokenId: caller.token?.id ?? null }, reason, executorFor(caller, through));
    },

    pendingCount(): Promise<number> {
      return approvals.pendingCount();
    },
  };
}

export type ApprovalOperations = ReturnType<typeof approvalOperations>;
