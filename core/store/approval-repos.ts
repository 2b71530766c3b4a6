/**
 * The approval inbox's table (core/approvals decides what goes in it). A decision is one conditional UPDATE,
 * so two people (or two labdecks on one database) approving at once decide it once.
 */
import { Sql, decodeJson, encodeJson, toDate, toDateOrNull, toInt, toIntOrNull, type DbRow } from './sql.js';
import type { ApprovalRow, Store } from './types.js';
import { approvals } from './tables.js';

const COLS = approvals.cols();

function approvalRow(r: DbRow): ApprovalRow {
  return {
    id: toInt(r.id),
    kind: r.kind as ApprovalRow['kind'],
    status: r.status as ApprovalRow['status'],
    summary: String(r.summary),
    request: decodeJson(r.request),
    plan: decodeJson(r.plan),
    userId: toIntOrNull(r.user_id),
    tokenId: toIntOrNull(r.token_id),
    tokenName: String(r.token_name),
    createdAt: toDate(r.created_at),
    expiresAt: toDate(r.expires_at),
    decidedBy: toIntOrNull(r.decided_by),
    decidedAt: toDateOrNull(r.decided_at),
    reason: r.reason === null || r.reason === undefined ? null : String(r.reason),
    outcome: decodeJson(r.outcome),
  };
}

export function createApprovalRepository(sql: Sql): Store['approvals'] {
  return {
    async create(a) {
      const r = await sql.one(
        `INSERT INTO "approvals" ("kind", "status", "summary", "request", "plan", "user_id", "token_id", "token_name", "created_at", "expires_at") ` +
          `VALUES (?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${COLS}`,
        [a.kind, a.summary, encodeJson(a.request, 'request'), encodeJson(a.plan, 'plan'), a.userId, a.tokenId, a.tokenName, new Date(), a.expiresAt],
      );
      return approvalRow(r!);
    },
    async get(id) {
      const r = await sql.one(`SELECT ${COLS} FROM "approvals" WHERE "id" = ?`, [id]);
      return r ? approvalRow(r) : null;
    },
    async list(which, now, limit, userId) {
      const where = which === 'pending' ? `"status" = 'pending' AND "expires_at" > ?` : `("status" <> 'pending' OR "expires_at" <= ?)`;
      const mine = userId === undefined ? '' : ` AND "user_id" = ?`;
      const params = userId === undefined ? [now, limit] : [now, userId, limit];
      return (await sql.rows(`SELECT ${COLS} FROM "approvals" WHERE ${where}${mine} ORDER BY "id" DESC LIMIT ?`, params)).map(approvalRow);
    },
    async pending(now) {
      const r = await sql.one(`SELECT COUNT(*) AS "n" FROM "approvals" WHERE "status" = 'pending' AND "expires_at" > ?`, [now]);
      return toInt(r?.n ?? 0);
    },
    async decide(id, d) {
      const n = await sql.run(`UPDATE "approvals" SET "status" = ?, "decided_by" = ?, "decided_at" = ?, "reason" = ? WHERE "id" = ? AND "status" = 'pending' AND "expires_at" > ?`, [
        d.status,
        d.decidedBy,
        d.decidedAt,
        d.reason,
        id,
        d.decidedAt,
      ]);
      return n === 1;
    },
    rejectPendingOf(tokenId, d) {
      return sql.run(`UPDATE "approvals" SET "status" = 'rejected', "decided_by" = ?, "decided_at" = ?, "reason" = ? WHERE "token_id" = ? AND "status" = 'pending' AND "expires_at" > ?`, [
        d.decidedBy,
        d.decidedAt,
        d.reason,
        tokenId,
        d.decidedAt,
      ]);
    },
    async setOutcome(id, outcome) {
      await sql.run(`UPDATE "approvals" SET "outcome" = ? WHERE "id" = ?`, [encodeJson(outcome, 'outcome'), id]);
    },
  };
}
