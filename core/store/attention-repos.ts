/**
 * What the attention list reads from the database (issue 31, core/attention): the open steps of unfinished
 * runs, whichever labdeck runs them. One query, so every labdeck on one PostgreSQL sees the same list.
 */
import { stepRow } from './codec.js';
import { toIntOrNull, type Sql } from './sql.js';
import type { Store } from './types.js';
import { steps } from './tables.js';

export function createAttentionRepository(sql: Sql): Store['attention'] {
  const cols = steps.cols({ as: 's' });
  return {
    async openSteps() {
      // the last record of each step position of a running or interrupted run, when it is not done: an input
      // waiting (running), a failed call waiting for a decision (error), an in-doubt step (interrupted run)
      const rows = await sql.rows(
        `SELECT ${cols}, r."task_id" AS "task_id", r."name" AS "run_name", r."host_id" AS "host_id", r."status" AS "run_status" FROM "steps" s JOIN "runs" r ON r."id" = s."run_id" ` +
          `WHERE r."status" IN ('running', 'interrupted') AND s."status" IN ('running', 'error', 'in-doubt') ` +
          `AND NOT EXISTS (SELECT 1 FROM "steps" t WHERE t."run_id" = s."run_id" AND t."id" > s."id" AND t."phase" = s."phase" ` +
          `AND COALESCE(t."iteration", -1) = COALESCE(s."iteration", -1) AND COALESCE(t."step_index", -1) = COALESCE(s."step_index", -1)) ` +
          `ORDER BY s."id" LIMIT 500`,
        [],
      );
      return rows.map((r) => ({
        ...stepRow(r),
        taskId: toIntOrNull(r.task_id),
        runName: String(r.run_name),
        hostId: r.host_id === null || r.host_id === undefined ? null : String(r.host_id),
        runStatus: String(r.run_status),
      }));
    },
  };
}
