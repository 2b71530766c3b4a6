import type { MigrationInterface, QueryRunner } from 'typeorm';

/** PostgreSQL: runs.skipped counts the failed steps an operator skipped (a run "completed with 1 skipped step"). */
export class RunSkipped1732700000000 implements MigrationInterface {
  name = 'RunSkipped1732700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "runs" ADD COLUMN "skipped" integer NOT NULL DEFAULT 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "runs" DROP COLUMN "skipped"`);
  }
}
