import type { MigrationInterface, QueryRunner } from 'typeorm';

/** SQLite: steps.log keeps what an instrument printed or logged during a call (Python drivers). */
export class StepLog1732500000000 implements MigrationInterface {
  name = 'StepLog1732500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "steps" ADD COLUMN "log" text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "steps" DROP COLUMN "log"`);
  }
}
