/** approval_pending: an agent's request waits in the inbox; resolved when a person decides it. */
import type { AlertOp, ApprovalRow } from '../store/types.js';
import { keys, open, resolve } from './events.js';

export function approvalPending(r: ApprovalRow): AlertOp {
  const message = `The agent token "${r.tokenName}" asks for ${r.kind === 'call' ? 'a call' : `a ${r.kind}`}: ${r.summary}. Approve or reject it in the inbox (it expires at ${r.expiresAt.toISOString()}).`;
  return open('approval_pending', keys.approval(r.id), { message, approval_id: r.id, summary: r.summary, link: `/app/approvals/${r.id}` }, { userId: r.userId });
}

export function approvalDecided(id: number, decision: 'approve' | 'reject', by: string): AlertOp {
  return resolve(keys.approval(id), `${decision === 'approve' ? 'approved' : 'rejected'} by ${by}`);
}

export function approvalRevoked(id: number, token: string): AlertOp {
  return resolve(keys.approval(id), `rejected: the token "${token}" that asked was revoked`);
}
