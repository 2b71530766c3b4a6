import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SQLite: several labdeck processes on one database (DESIGN.md §12). `hosts`: every process that touches
 * instruments, with its heartbeat (a lease); `instrument_leases`: which host drives which instrument;
 * runs and queue tasks name the host that executes them; the queue's hold becomes a state of the task that
 * caused it (`holds_queue`), replacing the lab-wide `runner.held` setting any restart could set.
 */
export class Hosts1733000000000 implements MigrationInterface {
  name = 'Hosts1733000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "hosts" ("id" text NOT NULL, "name" text NOT NULL, "kind" text NOT NULL, "machine" text NOT NULL, "pid" integer NOT NULL, ` +
        `"started_at" datetime NOT NULL, "heartbeat_at" datetime NOT NULL, "stopped_at" datetime, CONSTRAINT "pk_hosts" PRIMARY KEY ("id"))`,
    );
    await q.query(
      `CREATE TABLE "instrument_leases" ("name" text NOT NULL, "host_id" text NOT NULL, "since" datetime NOT NULL, ` +
        `CONSTRAINT "pk_instrument_leases" PRIMARY KEY ("name"), ` +
        `CONSTRAINT "fk_instrument_leases_host" FOREIGN KEY ("host_id") REFERENCES "hosts" ("id") ON DELETE CASCADE)`,
    );
    await q.query(`ALTER TABLE "queue_tasks" ADD COLUMN "host_id" text`);
    await q.query(`ALTER TABLE "queue_tasks" ADD COLUMN "holds_queue" integer NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE "runs" ADD COLUMN "host_id" text`);
    // the old lab-wide hold: an interrupted task holds the queue; else, a held queue was held by the last aborted task
    await q.query(`UPDATE "queue_tasks" SET "holds_queue" = 1 WHERE "status" = 'interrupted'`);
    await q.query(
      `UPDATE "queue_tasks" SET "holds_queue" = 1 WHERE "id" = (SELECT MAX("id") FROM "queue_tasks" WHERE "status" = 'aborted') ` +
        `AND EXISTS (SELECT 1 FROM "settings" WHERE "key" = 'runner.held' AND "value" = 'true') ` +
        `AND NOT EXISTS (SELECT 1 FROM "queue_tasks" WHERE "status" = 'interrupted')`,
    );
    await q.query(`DELETE FROM "settings" WHERE "key" = 'runner.held'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`INSERT INTO "settings" ("key", "value") SELECT 'runner.held', 'true' WHERE EXISTS (SELECT 1 FROM "queue_tasks" WHERE "holds_queue" = 1)`);
    await q.query(`ALTER TABLE "runs" DROP COLUMN "host_id"`);
    await q.query(`ALTER TABLE "queue_tasks" DROP COLUMN "holds_queue"`);
    await q.query(`ALTER TABLE "queue_tasks" DROP COLUMN "host_id"`);
    await q.query(`DROP TABLE "instrument_leases"`);
    await q.query(`DROP TABLE "hosts"`);
  }
}
