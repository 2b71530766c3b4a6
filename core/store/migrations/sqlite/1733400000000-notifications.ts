import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SQLite: the notification outbox (DESIGN.md §17, docs/notifications.md). `notify_outbox` holds each event
 * (`open`) and its resolution (`resolved`, the same `alert_id`), written in the transaction of the state
 * change that causes it; `notify_deliveries` one row per event and channel, claimed by one host, retried with
 * back-off, marked delivered.
 */
export class Notifications1733400000000 implements MigrationInterface {
  name = 'Notifications1733400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "notify_outbox" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "alert_id" text NOT NULL, "event" text NOT NULL, "state" text NOT NULL, ` +
        `"key" text NOT NULL, "run_id" integer, "task_id" integer, "user_id" integer, "payload" text NOT NULL, "created_at" datetime NOT NULL, "fanned_at" datetime)`,
    );
    await q.query(`CREATE INDEX "ix_notify_outbox_key" ON "notify_outbox" ("key")`);
    await q.query(`CREATE INDEX "ix_notify_outbox_fanned" ON "notify_outbox" ("fanned_at")`);
    await q.query(`CREATE INDEX "ix_notify_outbox_alert" ON "notify_outbox" ("alert_id")`);
    await q.query(
      `CREATE TABLE "notify_deliveries" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "outbox_id" integer NOT NULL, "channel" text NOT NULL, "status" text NOT NULL, ` +
        `"attempts" integer NOT NULL, "next_at" datetime NOT NULL, "claimed_by" text, "claimed_until" datetime, "delivered_at" datetime, "last_error" text, ` +
        `CONSTRAINT "uq_notify_deliveries" UNIQUE ("outbox_id", "channel"), ` +
        `CONSTRAINT "fk_notify_deliveries_outbox" FOREIGN KEY ("outbox_id") REFERENCES "notify_outbox" ("id") ON DELETE CASCADE ON UPDATE NO ACTION)`,
    );
    await q.query(`CREATE INDEX "ix_notify_deliveries_due" ON "notify_deliveries" ("status", "next_at")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_notify_deliveries_due"`);
    await q.query(`DROP TABLE "notify_deliveries"`);
    await q.query(`DROP INDEX "ix_notify_outbox_alert"`);
    await q.query(`DROP INDEX "ix_notify_outbox_fanned"`);
    await q.query(`DROP INDEX "ix_notify_outbox_key"`);
    await q.query(`DROP TABLE "notify_outbox"`);
  }
}
