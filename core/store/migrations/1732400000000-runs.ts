import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ddl } from './ddl.js';

/**
 * Workflows, the durable queue, run records (runs, phases, run logs) and uploaded files.
 *
 * steps.run_id gets no foreign key: SQLite can only add one by rebuilding the steps table (every call ever
 * recorded), so on both dialects runs.delete deletes a run's steps itself. Its index becomes (run_id, id) for
 * keyset paging. runs.task_id and queue_tasks.run_id point at each other; both are set to NULL when the other
 * side is deleted.
 */
export class Runs1732400000000 implements MigrationInterface {
  name = 'Runs1732400000000';

  async up(q: QueryRunner): Promise<void> {
    await ddl(q, async (t) => {
      await t.dropIndex('ix_steps_run_id');
      await t.createIndex('ix_steps_run_id_id', 'steps', ['run_id', 'id']);
      await t.createTable(
        'workflows',
        { id: 'id', name: 'text', version: 'int', definition: 'text', created_by: 'int?', created_at: 'ts' },
        {
          unique: { uq_workflows_name_version: ['name', 'version'] },
          foreignKeys: { fk_workflows_user: ['created_by', 'users', 'SET NULL'] },
        },
      );
      await t.createTable(
        'queue_tasks',
        {
          id: 'id',
          name: 'text',
          kind: 'text',
          payload: 'text',
          status: 'text',
          position: 'int',
          run_id: 'int?',
          created_by: 'int?',
          created_at: 'ts',
          started_at: 'ts?',
          ended_at: 'ts?',
        },
        { foreignKeys: { fk_queue_tasks_user: ['created_by', 'users', 'SET NULL'], fk_queue_tasks_run: ['run_id', 'runs', 'SET NULL'] } },
      );
      await t.createIndex('ix_queue_tasks_status_position', 'queue_tasks', ['status', 'position']);
      await t.createIndex('ix_queue_tasks_run_id', 'queue_tasks', ['run_id']);
      await t.createTable(
        'runs',
        {
          id: 'id',
          task_id: 'int?',
          name: 'text',
          workflow_name: 'text',
          workflow_version: 'int?',
          workflow: 'text',
          parameters: 'text',
          status: 'text',
          error: 'text?',
          user_id: 'int?',
          started_at: 'ts',
          ended_at: 'ts?',
        },
        { foreignKeys: { fk_runs_task: ['task_id', 'queue_tasks', 'SET NULL'], fk_runs_user: ['user_id', 'users', 'SET NULL'] } },
      );
      // Covering index of the records list (keyword filter + newest-first order without reading the rows).
      await t.createIndex('ix_runs_search', 'runs', ['id', 'name', 'workflow_name']);
      await t.createIndex('ix_runs_status', 'runs', ['status']);
      await t.createIndex('ix_runs_task_id', 'runs', ['task_id']);
      await t.createTable(
        'phases',
        { id: 'id', run_id: 'int', phase: 'text', iteration: 'int?', params: 'text?', outputs: 'text?', status: 'text', started_at: 'ts', ended_at: 'ts?' },
        { foreignKeys: { fk_phases_run: ['run_id', 'runs', 'CASCADE'] } },
      );
      await t.createIndex('ix_phases_run_id', 'phases', ['run_id']);
      await t.createTable(
        'run_logs',
        { id: 'bigid', run_id: 'int', at: 'ts', level: 'text', message: 'text' },
        {
          foreignKeys: { fk_run_logs_run: ['run_id', 'runs', 'CASCADE'] },
        },
      );
      await t.createIndex('ix_run_logs_run_id', 'run_logs', ['run_id']);
      await t.createTable(
        'files',
        {
          id: 'id',
          kind: 'text',
          stored_name: 'text',
          original_name: 'text',
          workflow: 'text?',
          rows: 'int',
          columns: 'text',
          size: 'bigint',
          created_by: 'int?',
          created_at: 'ts',
        },
        { unique: { uq_files_stored_name: ['stored_name'] }, foreignKeys: { fk_files_user: ['created_by', 'users', 'SET NULL'] } },
      );
      await t.createIndex('ix_files_kind_workflow', 'files', ['kind', 'workflow']);
    });
  }

  async down(q: QueryRunner): Promise<void> {
    await ddl(q, async (t) => {
      if (t.dialect === 'postgres') await t.query(`ALTER TABLE "queue_tasks" DROP CONSTRAINT "fk_queue_tasks_run"`);
      for (const table of ['files', 'run_logs', 'phases', 'runs', 'queue_tasks', 'workflows']) await t.dropTable(table);
      await t.dropIndex('ix_steps_run_id_id');
      await t.createIndex('ix_steps_run_id', 'steps', ['run_id']);
    });
  }
}
