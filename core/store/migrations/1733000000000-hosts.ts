import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ddl } from './ddl.js';

/**
 * Several labdeck processes on one database (DESIGN.md §12). `hosts`: every process that touches
 * instruments, with its heartbeat (a lease); `instrument_leases`: which host drives which instrument;
 * runs and queue tasks name the host that executes them; the queue's hold becomes a state of the task that
 * caused it (`holds_queue`), replacing the lab-wide `runner.held` setting any restart could set.
 */
export class Hosts1733000000000 implements MigrationInterface {
  name = 'Hosts1733000000000';

  async up(q: QueryRunner): Promise<void> {
    await ddl(q, async (t) => {
      await t.createTable('hosts', { id: 'text', name: 'text', kind: 'text', machine: 'text', pid: 'int', started_at: 'ts', heartbeat_at: 'ts', stopped_at: 'ts?' }, { primary: 'id' });
      await t.createTable(
        'instrument_leases',
        { name: 'text', host_id: 'text', since: 'ts' },
        {
          primary: 'name',
          foreignKeys: { fk_instrument_leases_host: ['host_id', 'hosts', 'CASCADE'] },
        },
      );
      await t.addColumn('queue_tasks', 'host_id', 'text?');
      await t.addColumn('queue_tasks', 'holds_queue', { type: 'bool', default: false });
      await t.addColumn('runs', 'host_id', 'text?');
      // the old lab-wide hold: an interrupted task holds the queue; else, a held queue was held by the last aborted task
      await t.query(`UPDATE "queue_tasks" SET "holds_queue" = ${t.bool(true)} WHERE "status" = 'interrupted'`);
      await t.query(
        `UPDATE "queue_tasks" SET "holds_queue" = ${t.bool(true)} WHERE "id" = (SELECT MAX("id") FROM "queue_tasks" WHERE "status" = 'aborted') ` +
          `AND EXISTS (SELECT 1 FROM "settings" WHERE "key" = 'runner.held' AND "value" = 'true') ` +
          `AND NOT EXISTS (SELECT 1 FROM "queue_tasks" WHERE "status" = 'interrupted')`,
      );
      await t.query(`DELETE FROM "settings" WHERE "key" = 'runner.held'`);
    });
  }

  async down(q: QueryRunner): Promise<void> {
    await ddl(q, async (t) => {
      await t.query(`INSERT INTO "settings" ("key", "value") SELECT 'runner.held', 'true' WHERE EXISTS (SELECT 1 FROM "queue_tasks" WHERE "holds_queue" = ${t.bool(true)})`);
      await t.dropColumn('runs', 'host_id');
      await t.dropColumn('queue_tasks', 'holds_queue');
      await t.dropColumn('queue_tasks', 'host_id');
      await t.dropTable('instrument_leases');
      await t.dropTable('hosts');
    });
  }
}
