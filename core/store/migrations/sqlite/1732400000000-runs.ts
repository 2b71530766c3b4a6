import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SQLite: workflows, the durable queue, run records (runs, phases, run logs) and uploaded files.
 *
 * steps.run_id gets no foreign key: SQLite can only add one by rebuilding the steps table (every call ever
 * recorded), so runs.delete deletes a run's steps itself. Its index becomes (run_id, id) for keyset paging.
 * runs.task_id and queue_tasks.run_id point at each other (SQLite resolves the forward reference when rows
 * are written); both are set to NULL when the other side is deleted.
 */
export class Runs1732400000000 implements MigrationInterface {
  name = 'Runs1732400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_steps_run_id"`);
    await q.query(`CREATE INDEX "ix_steps_run_id_id" ON "steps" ("run_id", "id")`);
    await q.query(
      `CREATE TABLE "workflows" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "name" text NOT NULL, ` +
        `"version" integer NOT NULL, "definition" text NOT NULL, "created_by" integer, "created_at" datetime NOT NULL, ` +
        `CONSTRAINT "uq_workflows_name_version" UNIQUE ("name", "version"), ` +
        `CONSTRAINT "fk_workflows_user" FOREIGN KEY ("created_by") REFERENCES "users" ("id") ON DELETE SET NULL ON UPDATE NO ACTION)`,
    );
    await q.query(
      `CREATE TABLE "queue_tasks" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "name" text NOT NULL, ` +
        `"kind" text NOT NULL, "payload" text NOT NULL, "status" text NOT NULL, "position" integer NOT NULL, ` +
        `"run_id" integer, "created_by" integer, "created_at" datetime NOT NULL, "started_at" datetime, "ended_at" datetime, ` +
        `CONSTRAINT "fk_queue_tasks_user" FOREIGN KEY ("created_by") REFERENCES "users" ("id") ON DELETE SET NULL ON UPDATE NO ACTION, ` +
        `CONSTRAINT "fk_queue_tasks_run" FOREIGN KEY ("run_id") REFERENCES "runs" ("id") ON DELETE SET NULL ON UPDATE NO ACTION)`,
    );
    await q.query(`CREATE INDEX "ix_queue_tasks_status_position" ON "queue_tasks" ("status", "position")`);
    await q.query(`CREATE INDEX "ix_queue_tasks_run_id" ON "queue_tasks" ("run_id")`);
    await q.query(
      `CREATE TABLE "runs" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "task_id" integer, "name" text NOT NULL, ` +
        `"workflow_name" text NOT NULL, "workflow_version" integer, "workflow" text NOT NULL, "parameters" text NOT NULL, ` +
        `"status" text NOT NULL, "error" text, "user_id" integer, "started_at" datetime NOT NULL, "ended_at" datetime, ` +
        `CONSTRAINT "fk_runs_task" FOREIGN KEY ("task_id") REFERENCES "queue_tasks" ("id") ON DELETE SET NULL ON UPDATE NO ACTION, ` +
        `CONSTRAINT "fk_runs_user" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE SET NULL ON UPDATE NO ACTION)`,
    );
    // Covering index of the records list (keyword filter + newest-first order without reading the rows).
    await q.query(`CREATE INDEX "ix_runs_search" ON "runs" ("id", "name", "workflow_name")`);
    await q.query(`CREATE INDEX "ix_runs_status" ON "runs" ("status")`);
    await q.query(`CREATE INDEX "ix_runs_task_id" ON "runs" ("task_id")`);
    await q.query(
      `CREATE TABLE "phases" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "run_id" integer NOT NULL, ` +
        `"phase" text NOT NULL, "iteration" integer, "params" text, "outputs" text, "status" text NOT NULL, ` +
        `"started_at" datetime NOT NULL, "ended_at" datetime, ` +
        `CONSTRAINT "fk_phases_run" FOREIGN KEY ("run_id") REFERENCES "runs" ("id") ON DELETE CASCADE ON UPDATE NO ACTION)`,
    );
    await q.query(`CREATE INDEX "ix_phases_run_id" ON "phases" ("run_id")`);
    await q.query(
      `CREATE TABLE "run_logs" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "run_id" integer NOT NULL, ` +
        `"at" datetime NOT NULL, "level" text NOT NULL, "message" text NOT NULL, ` +
        `CONSTRAINT "fk_run_logs_run" FOREIGN KEY ("run_id") REFERENCES "runs" ("id") ON DELETE CASCADE ON UPDATE NO ACTION)`,
    );
    await q.query(`CREATE INDEX "ix_run_logs_run_id" ON "run_logs" ("run_id")`);
    await q.query(
      `CREATE TABLE "files" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "kind" text NOT NULL, ` +
        `"stored_name" text NOT NULL, "original_name" text NOT NULL, "workflow" text, "rows" integer NOT NULL, ` +
        `"columns" text NOT NULL, "size" integer NOT NULL, "created_by" integer, "created_at" datetime NOT NULL, ` +
        `CONSTRAINT "uq_files_stored_name" UNIQUE ("stored_name"), ` +
        `CONSTRAINT "fk_files_user" FOREIGN KEY ("created_by") REFERENCES "users" ("id") ON DELETE SET NULL ON UPDATE NO ACTION)`,
    );
    await q.query(`CREATE INDEX "ix_files_kind_workflow" ON "files" ("kind", "workflow")`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['files', 'run_logs', 'phases', 'runs', 'queue_tasks', 'workflows']) {
      await q.query(`DROP TABLE "${t}"`);
    }
    await q.query(`DROP INDEX "ix_steps_run_id_id"`);
    await q.query(`CREATE INDEX "ix_steps_run_id" ON "steps" ("run_id")`);
  }
}
