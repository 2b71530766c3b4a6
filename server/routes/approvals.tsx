/**
 * The approval inbox (core/approvals): what AI agents asked for that waits for a person, the decisions, and
 * the policy an admin sets (which safety levels of which instrument need approval).
 */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { SAFETY_LEVELS, stateOf, type ApprovalPolicy } from '../../core/approvals/index.js';
import type { Safety } from '../../core/contracts/index.js';
import { LabError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import type { ApprovalRow } from '../../core/operations/index.js';
import { callerOf } from '../caller.js';
import { ctxOf } from '../context.js';
import { error, json, pageOrJson, redirect } from '../api-doc.js';
import { statusOf, url } from '../http.js';
import { failed, redirectTo, respond } from '../respond.js';
import { ID, handle, route } from '../route.js';
import { routeGroup } from '../catalogue.js';
import { ApprovalsPage } from '../views/approvals.js';

const SECTION = 'Agents';
const ONE = z.object({ id: ID.describe('The id of an approval request (GET /app/approvals)') });
const DECIDED = { 200: json('The request as decided (JSON)', 'Approval'), 302: redirect('Back to the inbox (forms)') };
const DECIDE_ERRORS = {
  403: error('Not the account the agent acts as nor an admin, or not a person logged in in the browser (a token never decides)'),
  404: error('No such request'),
  409: error('Decided already, expired, or its token was revoked: it will not run'),
};

export const APPROVAL_ROUTES = {
  inbox: route({
    method: 'GET',
    path: '/approvals',
    section: SECTION,
    summary: "The approval inbox: agents' requests waiting for a person, and the decided ones",
    operationId: 'approvalInbox',
    query: z.object({
      format: z.enum(['json', 'html']).optional().describe('json or html: overrides the Accept header'),
      decided: ID.optional().catch(undefined).describe('Say what became of this request (where a decision leads)'),
      saved: z.string().optional().describe('Say that the policy was saved (where saving it leads)'),
    }),
    responses: { 200: pageOrJson('The inbox page, or { pending, done, policy }', 'ApprovalInbox') },
  }),
  one: route({
    method: 'GET',
    path: '/approvals/{id}',
    section: SECTION,
    summary: 'One request: its state and, once approved and run, its outcome (?wait=N waits up to N seconds for it)',
    operationId: 'approvalRequest',
    params: ONE,
    query: z.object({
      format: z.enum(['json', 'html']).optional().describe('json or html: overrides the Accept header'),
      wait: z.coerce.number().min(0).max(55).optional().describe('Wait up to this many seconds (at most 55) for a decision and, once approved, the outcome'),
    }),
    responses: { 200: pageOrJson('The request (the inbox page shows it)', 'Approval'), 404: error('No such request') },
  }),
  approve: route({
    method: 'POST',
    path: '/approvals/{id}/approve',
    section: SECTION,
    summary: "Approve an agent's request: the call is made, the run or campaign queued, on behalf of the agent's account",
    operationId: 'approveRequest',
    params: ONE,
    body: { name: 'ApproveBody', optional: true, schema: z.object({ reason: z.string().max(2000).optional().describe('A note for the agent and the audit log') }) },
    responses: { ...DECIDED, ...DECIDE_ERRORS },
  }),
  reject: route({
    method: 'POST',
    path: '/approvals/{id}/reject',
    section: SECTION,
    summary: "Reject an agent's request with a reason (the agent is told); it never runs",
    operationId: 'rejectRequest',
    params: ONE,
    body: { name: 'RejectBody', schema: z.object({ reason: z.string().max(2000).describe('Why: the agent is told') }) },
    responses: { ...DECIDED, 400: error('No reason given'), ...DECIDE_ERRORS },
  }),
  policy: route({
    method: 'POST',
    path: '/approvals/policy',
    section: SECTION,
    summary: "Which safety levels need a person's approval when an agent calls them: by default and per instrument (admins)",
    operationId: 'setApprovalPolicy',
    access: 'admin',
    description:
      'JSON: { default: ["hazardous"], instruments: { pump: ["idempotent", "hazardous"] } } (an instrument listed replaces the default for it). ' +
      "The page's form sends `default` and `instrument.<name>` (repeated, one per level ticked; an empty value keeps an instrument with none).",
    body: {
      name: 'ApprovalPolicy',
      schema: z.object({
        default: z.array(z.string()).describe(`Safety levels (${SAFETY_LEVELS.join(', ')}) that need approval on instruments not listed`),
        instruments: z.record(z.string(), z.array(z.string())).optional().describe('Per instrument, its own list'),
      }),
      extra: /^instrument\./,
      extraKinds: ['form'],
    },
    responses: { 200: json('The policy as stored', 'ApprovalPolicy'), 302: redirect('Back to the inbox (forms)'), 400: error('A level that is not a safety level (named)') },
  }),
};

/** The levels a form sent for one field: repeated values, empty ones dropped. */
const levels = (v: unknown): string[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]).map(String).filter(Boolean);

export function approvalRoutes(runtime: Runtime): Router {
  const r = Router();
  const { approvals, instruments } = runtime.ops;
  const R = APPROVAL_ROUTES;

  const names = new Map<number, string>();
  const username = async (id: number | null) => {
    if (id === null) return null;
    if (!names.has(id)) names.set(id, (await runtime.ops.accounts.userName(id)) ?? `user ${id}`);
    return names.get(id)!;
  };
  /** A request as the API shows it. */
  const approvalJson = async (a: ApprovalRow) => ({
    id: a.id,
    kind: a.kind,
    state: stateOf(a),
    summary: a.summary,
    request: a.request,
    plan: a.plan,
    user: await username(a.userId),
    token: { id: a.tokenId, name: a.tokenName },
    created_at: a.createdAt.toISOString(),
    expires_at: a.expiresAt.toISOString(),
    decided_by: await username(a.decidedBy),
    decided_at: a.decidedAt?.toISOString() ?? null,
    reason: a.reason,
    outcome: a.outcome,
  });

  type Extra = { error?: LabError; notice?: string; focus?: number };
  /** What the inbox shows, as JSON: the requests the user may see (each account its own, an admin every one), the policy. */
  const listsOf = async (req: Request) => {
    const caller = callerOf(req, 'app');
    const [pending, done, policy] = await Promise.all([approvals.list(caller, 'pending', 100), approvals.list(caller, 'done', 50), approvals.policy()]);
    return { pending: await Promise.all(pending.map(approvalJson)), done: await Promise.all(done.map(approvalJson)), policy };
  };
  const inboxPage = async (req: Request, extra: Extra, lists: Awaited<ReturnType<typeof listsOf>>) => (
    <ApprovalsPage
      ctx={await ctxOf(req)}
      pending={lists.pending}
      done={lists.done}
      policy={lists.policy}
      instruments={instruments.list().map((i) => ({ name: i.name, safeties: [...new Set(i.methods.map((m) => m.safety))] }))}
      error={extra.error}
      notice={extra.notice}
      focus={extra.focus}
    />
  );
  /** The inbox, JSON or the page; `extra` is the page's only (a function: read for the page only). */
  const inbox = async (req: Request, res: Response, extra: Extra | (() => Promise<Extra>) = {}, status = 200) => {
    const lists = await listsOf(req);
    await respond(req, res, { json: lists, html: async () => inboxPage(req, typeof extra === 'function' ? await extra() : extra, lists), htmlStatus: status });
  };

  handle(r, R.inbox, async (req, res, { query }) => {
    await inbox(req, res, async () => {
      const decided = query.decided ? await approvals.get(callerOf(req, 'app'), query.decided).catch(() => null) : null;
      const notice = decided ? `Request ${decided.id} is ${stateOf(decided)}: ${decided.summary}` : query.saved !== undefined ? 'The approval policy is saved.' : undefined;
      return { notice, focus: decided?.id };
    });
  });

  handle(r, R.one, async (req, res, { params, query }) => {
    // 404 unless it is this user's account's, or they are an admin
    const row = await approvals.get(callerOf(req, 'app'), params.id, query.wait ? query.wait * 1000 : undefined);
    await respond(req, res, { json: () => approvalJson(row), html: async () => inboxPage(req, { focus: row.id }, await listsOf(req)) });
  });

  /** Approve or reject: JSON gets the request as decided, a form goes back to the inbox with what happened. */
  const decide =
    (decision: 'approve' | 'reject') =>
    async (req: Request, res: Response, { params, body }: { params: { id: number }; body: { reason?: string } }) => {
      try {
        // a person decides, in the browser: no token (a script's, or an agent's) approves what an agent asked
        const row = await approvals.decide(callerOf(req, 'app'), params.id, decision, body.reason);
        await redirectTo(req, res, url(req, `/approvals?decided=${row.id}`), () => approvalJson(row));
      } catch (e) {
        await failed(req, res, e, (err) => inbox(req, res, { error: err, focus: params.id }, statusOf(err)));
      }
    };
  handle(r, R.approve, decide('approve'));
  handle(r, R.reject, decide('reject'));

  handle(r, R.policy, async (req, res, { body }) => {
    const policy: ApprovalPolicy = { default: levels(body.default) as Safety[], instruments: {} };
    if (req.is('application/json')) policy.instruments = (body.instruments ?? {}) as Record<string, Safety[]>;
    else for (const [k, v] of Object.entries(body)) if (k.startsWith('instrument.')) policy.instruments[k.slice('instrument.'.length)] = levels(v) as Safety[];
    // an instrument whose levels are the default's follows the default (and its later changes)
    const same = (a: string[]) => a.length === policy.default.length && a.every((l) => policy.default.includes(l as Safety));
    for (const [name, ls] of Object.entries(policy.instruments)) if (same(ls)) delete policy.instruments[name];
    try {
      await redirectTo(req, res, url(req, '/approvals?saved'), await approvals.setPolicy(callerOf(req, 'app'), policy));
    } catch (e) {
      await failed(req, res, e, (err) => inbox(req, res, { error: err }, statusOf(err)));
    }
  });

  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const APPROVALS_GROUP = routeGroup({ name: 'approvals', routes: APPROVAL_ROUTES, mount: approvalRoutes });
