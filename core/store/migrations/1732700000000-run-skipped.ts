import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ddl } from './ddl.js';

/** runs.skipped counts the failed steps an operator skipped (a run "completed with 1 skipped step"). */
export class RunSkipped1732700000000 implements MigrationInterface {
  name = 'RunSkipped1732700000000';

  async up(q: QueryRunner): Promise<void> {
    await ddl(q, (t) => t.addColumn('runs', 'skipped', { type: 'int', default: 0 }));
  }

  async down(q: QueryRunner): Promise<void> {
    await ddl(q, (t) => t.dropColumn('runs', 'skipped'));
  }
}
