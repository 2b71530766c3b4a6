/**
 * The approval inbox (DESIGN.md §13): what an AI agent may do at once, and what waits for a person.
 *
 * An agent (an MCP client with a `labmcp_` token, acting as its account) calls instruments and queues work
 * through this, never around it. A call whose safety level the lab's policy marks (hazardous, by default),
 * a run and a campaign become requests: checked as they would be when run, shown to a person with what would
 * run (the call with its arguments, the workflow with its rows, the campaign's space), and run only when that
 * person approves, before the request expires. The account the agent acts as or an admin decides, never the
 * token that asked. Everything an agent does, and every decision, is in the audit log with the token's id and
 * name. Nothing here knows about HTTP or MCP.
 */
import type { PublicUser } from '../accounts/index.js';
import type { Campaigns, CampaignInput, CampaignPayload } from '../campaign/index.js';
import type { Safety } from '../contracts/index.js';
import type { Deck } from '../deck/index.js';
import { LabError, isLabError } from '../errors.js';
import type { Runner, RunnerStatus, WorkflowPayload } from '../runner/index.js';
import type { ApprovalKind, ApprovalRow, Store, TxStore } from '../store/types.js';
import { alertingWhen } from '../notify/events.js';
import { approvalDecided, approvalPending, approvalRevoked } from '../notify/approvals.js';

export const SAFETY_LEVELS: readonly Safety[] = ['readonly', 'idempotent', 'hazardous', 'unknown'];

/** Which safety levels of an instrument's methods need a person's approval when an agent calls them. */
export interface ApprovalPolicy {
  /** For every instrument not named below. */
  default: Safety[];
  /** Per instrument, replacing the default. */
  instruments: Record<string, Safety[]>;
}
/** Fail-closed for AI agents (DESIGN.md §16): everything but a read-only method waits for a person. */
export const DEFAULT_POLICY: ApprovalPolicy = { default: ['idempotent', 'hazardous', 'unknown'], instruments: {} };
/** The levels that need approval on one instrument: its own list, else the default. */
export const levelsFor = (p: ApprovalPolicy, instrument: string): Safety[] => (Object.hasOwn(p.instruments, instrument) ? p.instruments[instrument] : p.default);
const POLICY_KEY = 'approvals.policy';

/** How long a request waits for a decision by default (an hour); then it expires and never runs. */
export const DEFAULT_TTL_MS = 3600_000;
/** The longest an agent may wait for a decision in one call. */
export const MAX_WAIT_MS = 55_000;

/** An agent: the account it acts as and the token it came with. */
export interface AgentCaller {
  user: PublicUser;
  token: { id: number; name: string };
}

/** A person deciding: their account, and the token they came with if any (null: a browser session). */
export interface Decider {
  user: PublicUser;
  tokenId: number | null;
}

export interface CallPlan {
  instrument: string;
  method: string;
  args: Record<string, unknown>;
  safety: Safety;
}
export interface TaskPlan {
  name: string;
  kind: 'workflow' | 'campaign';
  payload: WorkflowPayload | CampaignPayload;
}

/** An agent's resume of a task a person paused: which task. */
export interface ResumePlan {
  task_id: number;
}

/**
 * How an approved request runs: through the operations (core/operations/approvals.ts), as the same call,
 * resume, run or campaign asked by a person would, with the approver as the resume's caller.
 */
export interface ApprovedExecutor {
  /** The call as it was shown, on behalf of the agent's account (`userId`). */
  call(plan: CallPlan, userId: number | null): Promise<{ task_id: number; output: unknown }>;
  /** The resume, the approver's: as if they had pressed it. */
  resume(plan: ResumePlan): Promise<void>;
  /** The run or campaign as it was checked, queued on behalf of the agent's account. */
  enqueue(plan: TaskPlan, userId: number | null): Promise<{ id: number }>;
}

/** What came of an approved request: the call's task and output, the queued task, or the error. */
export type Outcome = { task_id: number; output?: unknown } | { error: { code: string; message: string; task_id?: number } };

/** A request as the inbox, the API and the agent see it: `expired` is a pending request past its time. */
export type ApprovalState = 'pending' | 'approved' | 'rejected' | 'expired';
export const stateOf = (a: ApprovalRow, now = new Date()): ApprovalState => (a.status === 'pending' && a.expiresAt <= now ? 'expired' : a.status);

export interface ApprovalsOptions {
  store: Store;
  deck: Deck;
  runner: Runner;
  campaigns: Campaigns;
  /** How long a request waits (default an hour; LABDECK_APPROVAL_TTL_MS). */
  ttlMs?: number;
}

const args = (a: Record<string, unknown>) =>
  Object.entries(a)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(', ');

/** Who may read a request: the account the agent acts as, or an admin. */
const mayRead = (row: ApprovalRow, by: Pick<PublicUser, 'id' | 'role'>) => by.role === 'admin' || row.userId === by.id;

export class Approvals {
  readonly ttlMs: number;

  constructor(private readonly opts: ApprovalsOptions) {
    this.ttlMs = opts.ttlMs ?? DEFAULT_TTL_MS;
  }

  /* ------------------------------------------------------------------ policy */

  async policy(): Promise<ApprovalPolicy> {
    const p = await this.opts.store.settings.get<ApprovalPolicy>(POLICY_KEY);
    return p ? { default: p.default ?? DEFAULT_POLICY.default, instruments: p.instruments ?? {} } : DEFAULT_POLICY;
  }

  /** An admin's decision (the route checks the role); a level that is not one is refused by name. */
  async setPolicy(policy: ApprovalPolicy, by: PublicUser): Promise<ApprovalPolicy> {
    const check = (levels: unknown, field: string): Safety[] => {
      if (!Array.isArray(levels)) throw new LabError('invalid_input', `${field} must be a list of safety levels.`, [{ field, message: 'must be a list' }]);
      const bad = levels.filter((l) => !SAFETY_LEVELS.includes(l as Safety));
      if (bad.length)
        throw new LabError('invalid_input', `${field}: ${bad.map((b) => JSON.stringify(b)).join(', ')} is not a safety level (${SAFETY_LEVELS.join(', ')}).`, [
          { field, message: 'unknown safety level' },
        ]);
      return SAFETY_LEVELS.filter((l) => levels.includes(l));
    };
    const clean: ApprovalPolicy = { default: check(policy.default, 'default'), instruments: {} };
    for (const [name, levels] of Object.entries(policy.instruments ?? {})) clean.instruments[name] = check(levels, `instruments.${name}`);
    await this.opts.store.settings.set(POLICY_KEY, clean);
    await this.audit(by.id, 'approvals.policy', clean);
    return clean;
  }

  async needsApproval(instrument: string, safety: Safety): Promise<boolean> {
    const p = await this.policy();
    return levelsFor(p, instrument).includes(safety);
  }

  /* ------------------------------------------------------------------ what an agent asks */

  /**
   * An agent's call: checked as a call is (unknown instrument or method, arguments that do not fit: the same
   * errors), then made at once, or, when the policy says so, made a request that waits for a person.
   */
  async call(agent: AgentCaller, instrument: string, method: string, callArgs: unknown): Promise<{ ran: { task_id: number; output: unknown } } | { request: ApprovalRow }> {
    const { args: checked, safety } = this.check(instrument, method, callArgs);
    if (await this.needsApproval(instrument, safety)) {
      const plan: CallPlan = { instrument, method, args: checked, safety };
      return { request: await this.request('call', agent, { instrument, method, args: callArgs }, plan, `${instrument}.${method}(${args(checked)}) — ${safety}`) };
    }
    const { taskId, output } = await this.opts.runner.call(instrument, method, checked, { userId: agent.user.id });
    return { ran: { task_id: taskId, output } };
  }

  /**
   * A call checked before it is made or shown to a person: on this deck, its arguments as the method reads
   * them; on an instrument another labdeck drives (the lab's catalogue), that it has the method, with its
   * safety level (that labdeck checks the arguments when it makes the call).
   */
  private check(instrument: string, method: string, callArgs: unknown): { args: Record<string, unknown>; safety: Safety } {
    if (this.opts.deck.has(instrument)) return this.opts.deck.check(instrument, method, callArgs);
    const inst = this.opts.runner.catalogue.schema(instrument);
    const m = inst.methods.find((x) => x.name === method);
    if (!m) throw new LabError('not_found', `${instrument} has no method "${method}"; it has ${inst.methods.map((x) => x.name).join(', ')}.`, [{ field: 'method', message: 'unknown method' }]);
    if (callArgs !== undefined && (typeof callArgs !== 'object' || callArgs === null || Array.isArray(callArgs))) {
      throw new LabError('invalid_input', `Invalid arguments for ${instrument}.${method}`, [{ field: '(arguments)', message: 'must be an object of parameter values' }]);
    }
    return { args: (callArgs ?? {}) as Record<string, unknown>, safety: m.safety };
  }

  /**
   * An agent's resume of a paused task: done at once when an agent (or nothing but the queue's flag) paused
   * it; when a person paused it, a request that waits for a person instead, since a person's pause is undone
   * only by a person (the task stays paused meanwhile).
   */
  async resume(agent: AgentCaller, taskId?: number): Promise<{ status: RunnerStatus } | { request: ApprovalRow }> {
    try {
      return { status: await this.opts.runner.control('resume', taskId, 'agent') };
    } catch (e) {
      if (!(isLabError(e) && e.code === 'forbidden' && e.data?.paused_by === 'person' && typeof e.data.task_id === 'number')) throw e;
      const plan: ResumePlan = { task_id: e.data.task_id };
      return { request: await this.request('resume', agent, { task_id: taskId ?? null }, plan, `resume task ${plan.task_id}, which a person paused`) };
    }
  }

  /** An agent's run of a saved workflow: checked as the execution route checks it, then waits for a person. */
  async run(agent: AgentCaller, input: { workflow: unknown; config?: unknown; repeat?: unknown; name?: unknown }): Promise<ApprovalRow> {
    const plan: TaskPlan = await this.opts.runner.prepare(input);
    const p = plan.payload as WorkflowPayload;
    const iterations = p.rows ? `${p.rows.length} row${p.rows.length === 1 ? '' : 's'}` : `repeat ${p.repeat?.times}`;
    return this.request('run', agent, input, plan, `run ${p.workflow} v${p.version} over ${iterations} ("${plan.name}")`);
  }

  /** An agent's campaign: checked as the campaign route checks it (space, objectives, optimizer), then waits. */
  async campaign(agent: AgentCaller, input: CampaignInput): Promise<ApprovalRow> {
    const plan: TaskPlan = await this.opts.campaigns.prepare(input);
    const p = plan.payload as CampaignPayload;
    return this.request('campaign', agent, input, plan, `campaign on ${p.workflow}: ${p.optimizer} × ${p.budget} over ${p.space.map((s) => s.name).join(', ')} ("${plan.name}")`);
  }

  private async request(kind: ApprovalKind, agent: AgentCaller, request: unknown, plan: CallPlan | TaskPlan | ResumePlan, summary: string): Promise<ApprovalRow> {
    const a = { kind, summary, request, plan, userId: agent.user.id, tokenId: agent.token.id, tokenName: agent.token.name, expiresAt: new Date(Date.now() + this.ttlMs) };
    // the request and its approval_pending alert: one transaction (core/notify)
    const row = await alertingWhen(this.opts.store, async (tx) => {
      const r = await tx.approvals.create(a);
      return { result: r, ops: [approvalPending(r)] };
    });
    await this.audit(agent.user.id, 'agent.request', { token: agent.token, approval: row.id, kind, summary });
    return row;
  }

  /* ------------------------------------------------------------------ what a person sees and decides */

  /**
   * One request; with `by`, only for the account the agent acts as or an admin (anyone else is told there is
   * no such request: its arguments, plan and token name are that account's business).
   */
  async get(id: number, by?: Pick<PublicUser, 'id' | 'role'>): Promise<ApprovalRow> {
    const row = await this.opts.store.approvals.get(id);
    if (!row || (by && !mayRead(row, by))) throw new LabError('not_found', `There is no approval request ${id}${by && row ? ' of yours' : ''}.`, [{ field: 'id', message: 'unknown request' }]);
    return row;
  }

  /** Newest first; with `by`, what that user may read: an admin every request, anyone else their account's. */
  list(which: 'pending' | 'done', limit = 100, by?: Pick<PublicUser, 'id' | 'role'>): Promise<ApprovalRow[]> {
    return this.opts.store.approvals.list(which, new Date(), limit, by && by.role !== 'admin' ? by.id : undefined);
  }

  /** A token was revoked by `by`: its pending requests are rejected, saying so (an approval could never run them). */
  tokenRevoked(token: { id: number; name: string }, by: { id: number }): Promise<number> {
    const decidedAt = new Date();
    // the rejections and the resolutions of their approval_pending alerts: one transaction (core/notify)
    return alertingWhen(this.opts.store, async (tx) => {
      const ids = (await tx.approvals.list('pending', decidedAt, 10_000)).filter((r) => r.tokenId === token.id).map((r) => r.id);
      const n = await tx.approvals.rejectPendingOf(token.id, { reason: `The token "${token.name}" that asked was revoked.`, decidedBy: by.id, decidedAt });
      return { result: n, ops: ids.map((id) => approvalRevoked(id, token.name)) };
    });
  }

  pendingCount(): Promise<number> {
    return this.opts.store.approvals.pending(new Date());
  }

  /**
   * Approve or reject, once: the account the agent acts as or an admin, never with the token that asked; a
   * rejection says why. An approved call is made in the background (it may take minutes; its outcome is
   * written when it ends); an approved run or campaign is queued before this returns.
   */
  async decide(id: number, decision: 'approve' | 'reject', by: Decider, reason: string | null | undefined, executor: ApprovedExecutor): Promise<ApprovalRow> {
    const row = await this.get(id);
    if (by.tokenId !== null && by.tokenId === row.tokenId) throw new LabError('forbidden', "An agent's token cannot decide its own request: a person approves it.");
    if (by.user.role !== 'admin' && by.user.id !== row.userId) throw new LabError('forbidden', 'Only the account the agent acts as, or an admin, may decide this request.');
    const why = reason?.trim() || null;
    if (decision === 'reject' && !why) throw new LabError('invalid_input', 'Say why you reject it: the agent is told.', [{ field: 'reason', message: 'required to reject' }]);
    if (decision === 'approve' && row.tokenId !== null && !(await this.opts.store.tokens.list(row.userId ?? -1)).some((t) => t.id === row.tokenId)) {
      throw new LabError('conflict', `The token "${row.tokenName}" that asked was revoked: this request can no longer run.`);
    }
    const decidedAt = new Date();
    const decide = (tx: TxStore) => tx.approvals.decide(id, { status: decision === 'approve' ? 'approved' : 'rejected', decidedBy: by.user.id, reason: why, decidedAt });
    if (!(await alertingWhen(this.opts.store, async (tx) => ((await decide(tx)) ? { result: true, ops: [approvalDecided(id, decision, by.user.username)] } : { result: false, ops: [] })))) {
      const now = await this.get(id);
      const state = stateOf(now, decidedAt);
      throw new LabError('conflict', state === 'expired' ? `Request ${id} expired at ${now.expiresAt.toISOString()}: it will never run.` : `Request ${id} was ${state} already.`, undefined, { state });
    }
    await this.audit(by.user.id, `approval.${decision}`, { approval: id, kind: row.kind, summary: row.summary, reason: why, agent_token: { id: row.tokenId, name: row.tokenName } });
    if (decision === 'approve') {
      const running = this.execute(row, executor);
      if (row.kind !== 'call') await running;
      // a call goes on after the answer; should its outcome not be stored (the database went away), say so
      else running.catch((e: unknown) => console.error(`labdeck: the outcome of approved request ${id} could not be stored:`, e));
    }
    return this.get(id);
  }

  /** Run what was approved, as it was shown, on behalf of the agent's account (through the operations); its outcome is kept. */
  private async execute(row: ApprovalRow, executor: ApprovedExecutor): Promise<void> {
    let outcome: Outcome;
    try {
      if (row.kind === 'call') {
        const { task_id, output } = await executor.call(row.plan as CallPlan, row.userId);
        outcome = { task_id, output };
      } else if (row.kind === 'resume') {
        // approved by a person: their resume, as if they had pressed it
        const p = row.plan as ResumePlan;
        await executor.resume(p);
        outcome = { task_id: p.task_id };
      } else {
        const task = await executor.enqueue(row.plan as TaskPlan, row.userId);
        outcome = { task_id: task.id };
      }
    } catch (e) {
      const taskId = isLabError(e) ? e.data?.task_id : undefined;
      outcome = { error: { code: isLabError(e) ? e.code : 'internal', message: e instanceof Error ? e.message : String(e), ...(typeof taskId === 'number' ? { task_id: taskId } : {}) } };
    }
    await this.opts.store.approvals.setOutcome(row.id, outcome);
    await this.audit(row.userId, 'agent.outcome', { approval: row.id, token: { id: row.tokenId, name: row.tokenName }, outcome });
  }

  /**
   * Wait (at most `ms`, capped at MAX_WAIT_MS) until the request is decided, has expired, or, once approved,
   * has its outcome; the database is read, so a decision made on another labdeck is seen too.
   */
  async wait(id: number, ms: number, pollMs = 200): Promise<ApprovalRow> {
    const until = Date.now() + Math.min(Math.max(0, ms), MAX_WAIT_MS);
    for (;;) {
      const row = await this.get(id);
      const state = stateOf(row);
      const settled = state === 'rejected' || state === 'expired' || (state === 'approved' && row.outcome !== null);
      if (settled || Date.now() >= until) return row;
      await new Promise((r) => setTimeout(r, Math.min(pollMs, Math.max(1, until - Date.now()))));
    }
  }

  private audit(userId: number | null, action: string, detail: unknown): Promise<void> {
    return this.opts.store.audit.add({ userId, action, detail });
  }
}
