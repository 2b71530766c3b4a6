import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SQLite: workflows.deleted_at. Deleting a workflow marks its versions instead of removing them, so a name made
 * again continues its version numbers: a record's "workflow x v3" never names a different document.
 */
export class WorkflowDeleted1732900000000 implements MigrationInterface {
  name = 'WorkflowDeleted1732900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "workflows" ADD COLUMN "deleted_at" datetime`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "workflows" DROP COLUMN "deleted_at"`);
  }
}
