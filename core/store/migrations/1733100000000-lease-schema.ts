import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ddl } from './ddl.js';

/**
 * instrument_leases.schema: the interface schema (JSON) of each leased instrument, so every labdeck on the
 * database knows the lab's instruments, not only its own: a workflow is checked against all of them, and a
 * task queued on one host runs on the host that drives its instruments.
 */
export class LeaseSchema1733100000000 implements MigrationInterface {
  name = 'LeaseSchema1733100000000';

  async up(q: QueryRunner): Promise<void> {
    await ddl(q, (t) => t.addColumn('instrument_leases', 'schema', 'text?'));
  }

  async down(q: QueryRunner): Promise<void> {
    await ddl(q, (t) => t.dropColumn('instrument_leases', 'schema'));
  }
}
