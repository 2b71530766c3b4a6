import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ddl } from './ddl.js';

/**
 * workflows.deleted_at. Deleting a workflow marks its versions instead of removing them, so a name made
 * again continues its version numbers: a record's "workflow x v3" never names a different document.
 */
export class WorkflowDeleted1732900000000 implements MigrationInterface {
  name = 'WorkflowDeleted1732900000000';

  async up(q: QueryRunner): Promise<void> {
    await ddl(q, (t) => t.addColumn('workflows', 'deleted_at', 'ts?'));
  }

  async down(q: QueryRunner): Promise<void> {
    await ddl(q, (t) => t.dropColumn('workflows', 'deleted_at'));
  }
}
