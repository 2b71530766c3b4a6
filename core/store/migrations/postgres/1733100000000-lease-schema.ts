import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * instrument_leases.schema: the interface schema (JSON) of each leased instrument, so every labdeck on the
 * database knows the lab's instruments, not only its own: a workflow is checked against all of them, and a
 * task queued on one host runs on the host that drives its instruments.
 */
export class LeaseSchema1733100000000 implements MigrationInterface {
  name = 'LeaseSchema1733100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "instrument_leases" ADD COLUMN "schema" text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "instrument_leases" DROP COLUMN "schema"`);
  }
}
