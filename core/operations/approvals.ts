/**
 * Operations on the approval inbox (DESIGN.md §13, §15): what a person reads and decides, the policy an
 * admin sets, and an agent's reading of its own requests. The inbox itself (core/approvals) checks who may
 * decide; the operation adds what only the door knew: a decision is a person's, logged in in the browser,
 * never a token's.
 */
import type { ApprovalPolicy } from '../approvals/index.js';
import { LabError } from '../errors.js';
import type { ApprovalRow } from '../store/types.js';
import { isAgent, type Caller } from './caller.js';
import type { Lab } from './lab.js';

/** The caller as the inbox knows a reader. */
const reader = (c: Caller) => ({ id: c.userId ?? -1, role: c.role ?? 'operator' });
const userOf = (c: Caller) => ({ id: c.userId ?? -1, username: c.name, role: c.role ?? 'operator' });

export function approvalOperations(lab: Lab) {
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
      return approvals.decide(id, decision, { user: userOf(caller), tokenId: caller.token?.id ?? null }, reason);
    },

    pendingCount(): Promise<number> {
      return approvals.pendingCount();
    },
  };
}

export type ApprovalOperations = ReturnType<typeof approvalOperations>;
