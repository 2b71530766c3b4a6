import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ddl } from './ddl.js';

/** steps.log keeps what an instrument printed or logged during a call (Python drivers). */
export class StepLog1732500000000 implements MigrationInterface {
  name = 'StepLog1732500000000';

  async up(q: QueryRunner): Promise<void> {
    await ddl(q, (t) => t.addColumn('steps', 'log', 'text?'));
  }

  async down(q: QueryRunner): Promise<void> {
    await ddl(q, (t) => t.dropColumn('steps', 'log'));
  }
}
