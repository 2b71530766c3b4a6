import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ddl } from './ddl.js';

/**
 * users.disabled_at (an admin disabled the account: no log-in, its sessions and tokens refused) and
 * users.deleted_at (an admin deleted it: the row stays so the records, runs and workflows it made keep its
 * name, and the name stays taken).
 */
export class UserState1732800000000 implements MigrationInterface {
  name = 'UserState1732800000000';

  async up(q: QueryRunner): Promise<void> {
    await ddl(q, async (t) => {
      await t.addColumn('users', 'disabled_at', 'ts?');
      await t.addColumn('users', 'deleted_at', 'ts?');
    });
  }

  async down(q: QueryRunner): Promise<void> {
    await ddl(q, async (t) => {
      await t.dropColumn('users', 'deleted_at');
      await t.dropColumn('users', 'disabled_at');
    });
  }
}
