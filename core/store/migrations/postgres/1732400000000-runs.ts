import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * PostgreSQL: workflows, the durable queue, run records (runs, phases, run logs) and uploaded files.
 *
 * steps.run_id gets no foreign key, as on SQLite (which would have to rebuild the steps table for one), so
 * both dialects behave alike: runs.delete deletes a run's steps itself. Its index becomes (run_id, id) for
 * keyset paging. runs.task_id and queue_tasks.run_id point at each other, SET NULL when the other goes.
 */
export class Runs1732400000000 implements MigrationInterface {
  name = 'Runs1732400000000';

  async up(q: QueryRunner): Promise<void> {
    const TS = 'TIMESTAMP WITH TIME ZONE';
    await q.query(`DROP INDEX "ix_steps_run_id"`);
    await q.query(`CREATE INDEX "ix_steps_run_id_id" ON "steps" ("run_id", "id")`);
    await q.query(
      `CREATE TABLE "workflows" ("id" SERIAL NOT NULL, "name" text NOT NULL, "version" integer NOT NULL, ` +
        `"definition" text NOT NULL, "created_by" integer, "created_at" ${TS} NOT NULL, ` +
        `CONSTRAINT "uq_workflows_name_version" UNIQUE ("name", "version"), CONSTRAINT "pk_workflows" PRIMARY KEY ("id"))`,
    );
    await q.query(
      `CREATE TABLE "queue_tasks" ("id" SERIAL NOT NULL, "name" text NOT NULL, "kind" text NOT NULL, ` +
        `"payload" text NOT NULL, "status" text NOT NULL, "position" integer NOT NULL, "run_id" integer, ` +
        `"created_by" integer, "created_at" ${TS} NOT NULL, "started_at" ${TS}, "ended_at" ${TS}, ` +
        `CONSTRAINT "pk_queue_tasks" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "ix_queue_tasks_status_position" ON "queue_tasks" ("status", "position")`);
    await q.query(`CREATE INDEX "ix_queue_tasks_run_id" ON "queue_tasks" ("run_id")`);
    await q.query(
      `CREATE TABLE "runs" ("id" SERIAL NOT NULL, "task_id" integer, "name" text NOT NULL, ` +
        `"workflow_name" text NOT NULL, "workflow_version" integer, "workflow" text NOT NULL, ` +
        `"parameters" text NOT NULL, "status" text NOT NULL, "error" text, "user_id" integer, ` +
        `"started_at" ${TS} NOT NULL, "ended_at" ${TS}, CONSTRAINT "pk_runs" PRIMARY KEY ("id"))`,
    );
    // Covering index of the records list (keyword filter + newest-first order as an index-only scan).
    await q.query(`CREATE INDEX "ix_runs_search" ON "runs" ("id", "name", "workflow_name")`);
    await q.query(`CREATE INDEX "ix_runs_status" ON "runs" ("status")`);
    await q.query(`CREATE INDEX "ix_runs_task_id" ON "runs" ("task_id")`);
    await q.query(
      `CREATE TABLE "phases" ("id" SERIAL NOT NULL, "run_id" integer NOT NULL, "phase" text NOT NULL, ` +
        `"iteration" integer, "params" text, "outputs" text, "status" text NOT NULL, "started_at" ${TS} NOT NULL, ` +
        `"ended_at" ${TS}, CONSTRAINT "pk_phases" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "ix_phases_run_id" ON "phases" ("run_id")`);
    await q.query(
      `CREATE TABLE "run_logs" ("id" BIGSERIAL NOT NULL, "run_id" integer NOT NULL, "at" ${TS} NOT NULL, ` +
        `"level" text NOT NULL, "message" text NOT NULL, CONSTRAINT "pk_run_logs" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "ix_run_logs_run_id" ON "run_logs" ("run_id")`);
    await q.query(
      `CREATE TABLE "files" ("id" SERIAL NOT NULL, "kind" text NOT NULL, "stored_name" text NOT NULL, ` +
        `"original_name" text NOT NULL, "workflow" text, "rows" integer NOT NULL, "columns" text NOT NULL, ` +
        `"size" bigint NOT NULL, "created_by" integer, "created_at" ${TS} NOT NULL, ` +
        `CONSTRAINT "uq_files_stored_name" UNIQUE ("stored_name"), CONSTRAINT "pk_files" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "ix_files_kind_workflow" ON "files" ("kind", "workflow")`);

    const fk = (table: string, name: string, column: string, target: string, onDelete: string) =>
      q.query(
        `ALTER TABLE "${table}" ADD CONSTRAINT "${name}" FOREIGN KEY ("${column}") REFERENCES "${target}"("id") ` +
          `ON DELETE ${onDelete} ON UPDATE NO ACTION`,
      );
    await fk('workflows', 'fk_workflows_user', 'created_by', 'users', 'SET NULL');
    await fk('queue_tasks', 'fk_queue_tasks_user', 'created_by', 'users', 'SET NULL');
    await fk('queue_tasks', 'fk_queue_tasks_run', 'run_id', 'runs', 'SET NULL');
    await fk('runs', 'fk_runs_task', 'task_id', 'queue_tasks', 'SET NULL');
    await fk('runs', 'fk_runs_user', 'user_id', 'users', 'SET NULL');
    await fk('phases', 'fk_phases_run', 'run_id', 'runs', 'CASCADE');
    await fk('run_logs', 'fk_run_logs_run', 'run_id', 'runs', 'CASCADE');
    await fk('files', 'fk_files_user', 'created_by', 'users', 'SET NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "queue_tasks" DROP CONSTRAINT "fk_queue_tasks_run"`);
    for (const t of ['files', 'run_logs', 'phases', 'runs', 'queue_tasks', 'workflows']) {
      await q.query(`DROP TABLE "${t}"`);
    }
    await q.query(`DROP INDEX "ix_steps_run_id_id"`);
    await q.query(`CREATE INDEX "ix_steps_run_id" ON "steps" ("run_id")`);
  }
}
