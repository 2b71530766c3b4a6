import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SQLite: users.disabled_at (an admin disabled the account: no log-in, its sessions and tokens refused) and
 * users.deleted_at (an admin deleted it: the row stays so the records, runs and workflows it made keep its
 * name, and the name stays taken).
 */
export class UserState1732800000000 implements MigrationInterface {
  name = 'UserState1732800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "users" ADD COLUMN "disabled_at" datetime`);
    await q.query(`ALTER TABLE "users" ADD COLUMN "deleted_at" datetime`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "users" DROP COLUMN "deleted_at"`);
    await q.query(`ALTER TABLE "users" DROP COLUMN "disabled_at"`);
  }
}
