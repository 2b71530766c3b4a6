/**
 * Campaigns people carry out and their points (issue 31; campaign-types.ts). Points are numbered per campaign;
 * the unique (campaign_id, n) makes two labdecks adding at once take turns (the loser numbers again).
 */
import type { CampaignRow, CampaignStore, PointRow } from './campaign-types.js';
import { decodeJson, encodeJson, isUniqueViolation, toDate, toDateOrNull, toInt, toIntOrNull, type DbRow, type Sql } from './sql.js';
import { campaignPoints, campaigns } from './tables.js';

const CAMPAIGN_COLS = campaigns.cols();
const POINT_COLS = campaignPoints.cols();

function campaignRow(r: DbRow): CampaignRow {
  return {
    id: toInt(r.id),
    name: String(r.name),
    execution: r.execution === 'robot' ? 'robot' : 'manual',
    taskId: toIntOrNull(r.task_id),
    payload: decodeJson(r.payload),
    createdBy: toIntOrNull(r.created_by),
    createdAt: toDate(r.created_at),
  };
}

function pointRow(r: DbRow): PointRow {
  return {
    id: toInt(r.id),
    campaignId: toInt(r.campaign_id),
    n: toInt(r.n),
    parameters: decodeJson(r.parameters) as Record<string, unknown>,
    state: String(r.state) as PointRow['state'],
    results: decodeJson(r.results) as Record<string, number> | null,
    reason: r.reason === null || r.reason === undefined ? null : String(r.reason),
    suggestedBy: String(r.suggested_by),
    suggestedUser: toIntOrNull(r.suggested_user),
    measuredBy: r.measured_by === null || r.measured_by === undefined ? null : String(r.measured_by),
    measuredUser: toIntOrNull(r.measured_user),
    createdAt: toDate(r.created_at),
    measuredAt: toDateOrNull(r.measured_at),
  };
}

export function createCampaignRepository(sql: Sql): CampaignStore {
  const repo: CampaignStore = {
    exclusive: (campaignId, fn) => sql.exclusive(`campaign:${campaignId}`, (tx) => fn(createCampaignRepository(tx))),
    async create(c) {
      const r = await sql.one(`INSERT INTO "campaigns" ("name", "execution", "task_id", "payload", "created_by", "created_at") VALUES (?, ?, ?, ?, ?, ?) RETURNING ${CAMPAIGN_COLS}`, [
        c.name,
        c.execution,
        c.taskId,
        encodeJson(c.payload, 'campaign')!,
        c.createdBy,
        new Date(),
      ]);
      return campaignRow(r!);
    },
    async get(id) {
      const r = await sql.one(`SELECT ${CAMPAIGN_COLS} FROM "campaigns" WHERE "id" = ?`, [id]);
      return r ? campaignRow(r) : null;
    },
    async ofTask(taskId) {
      const r = await sql.one(`SELECT ${CAMPAIGN_COLS} FROM "campaigns" WHERE "task_id" = ? ORDER BY "id" LIMIT 1`, [taskId]);
      return r ? campaignRow(r) : null;
    },
    async list(limit) {
      return (await sql.rows(`SELECT ${CAMPAIGN_COLS} FROM "campaigns" ORDER BY "id" DESC LIMIT ?`, [limit])).map(campaignRow);
    },
    async points(campaignId) {
      return (await sql.rows(`SELECT ${POINT_COLS} FROM "campaign_points" WHERE "campaign_id" = ? ORDER BY "n"`, [campaignId])).map(pointRow);
    },
    async addPoints(campaignId, points) {
      for (let attempt = 0; ; attempt++) {
        try {
          return await sql.transaction(async (tx) => {
            const last = await tx.one<{ n: unknown }>(`SELECT MAX("n") AS "n" FROM "campaign_points" WHERE "campaign_id" = ?`, [campaignId]);
            let n = toIntOrNull(last?.n) ?? 0;
            const now = new Date();
            const out: PointRow[] = [];
            for (const p of points) {
              const measured = p.results !== undefined;
              const r = await tx.one(
                `INSERT INTO "campaign_points" ("campaign_id", "n", "parameters", "state", "results", "reason", "suggested_by", "suggested_user", "measured_by", "measured_user", "created_at", "measured_at") ` +
                  `VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?) RETURNING ${POINT_COLS}`,
                [
                  campaignId,
                  ++n,
                  encodeJson(p.parameters, 'parameters')!,
                  measured ? 'measured' : 'pending',
                  measured ? encodeJson(p.results, 'results') : null,
                  p.suggestedBy,
                  p.suggestedUser,
                  measured ? (p.measuredBy ?? null) : null,
                  measured ? (p.measuredUser ?? null) : null,
                  now,
                  measured ? now : null,
                ],
              );
              out.push(pointRow(r!));
            }
            return out;
          });
        } catch (e) {
          if (attempt < 5 && isUniqueViolation(e)) continue;
          throw e;
        }
      }
    },
    async settle(campaignId, n, s) {
      const changed = await sql.run(
        `UPDATE "campaign_points" SET "state" = ?, "results" = ?, "reason" = ?, "measured_by" = ?, "measured_user" = ?, "measured_at" = ? WHERE "campaign_id" = ? AND "n" = ? AND "state" = 'pending'`,
        [s.state, s.results ? encodeJson(s.results, 'results') : null, s.reason, s.measuredBy, s.measuredUser, s.at, campaignId, n],
      );
      return changed > 0;
    },
  };
  return repo;
}
