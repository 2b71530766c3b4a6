import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * PostgreSQL: the notification outbox (DESIGN.md §17, docs/notifications.md). `notify_outbox` holds each
 * event (`open`) and its resolution (`resolved`, the same `alert_id`), written in the transaction of the
 * state change that causes it; `notify_deliveries` one row per event and channel, claimed by one host
 * (`FOR UPDATE SKIP LOCKED`), retried with back-off, marked delivered.
 */
export class Notifications1733400000000 implements MigrationInterface {
  name = 'Notifications1733400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "notify_outbox" ("id" SERIAL NOT NULL, "alert_id" text NOT NULL, "event" text NOT NULL, "state" text NOT NULL, "key" text NOT NULL, ` +
        `"run_id" integer, "task_id" integer, "user_id" integer, "payload" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, ` +
        `"fanned_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "pk_notify_outbox" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "ix_notify_outbox_key" ON "notify_outbox" ("key")`);
    await q.query(`CREATE INDEX "ix_notify_outbox_fanned" ON "notify_outbox" ("fanned_at")`);
    await q.query(`CREATE INDEX "ix_notify_outbox_alert" ON "notify_outbox" ("alert_id")`);
    await q.query(
      `CREATE TABLE "notify_deliveries" ("id" SERIAL NOT NULL, "outbox_id" integer NOT NULL, "channel" text NOT NULL, "status" text NOT NULL, ` +
        `"attempts" integer NOT NULL, "next_at" TIMESTAMP WITH TIME ZONE NOT NULL, "claimed_by" text, "claimed_until" TIMESTAMP WITH TIME ZONE, ` +
        `"delivered_at" TIMESTAMP WITH TIME ZONE, "last_error" text, CONSTRAINT "pk_notify_deliveries" PRIMARY KEY ("id"), ` +
        `CONSTRAINT "uq_notify_deliveries" UNIQUE ("outbox_id", "channel"))`,
    );
    await q.query(`CREATE INDEX "ix_notify_deliveries_due" ON "notify_deliveries" ("status", "next_at")`);
    await q.query(
      `ALTER TABLE "notify_deliveries" ADD CONSTRAINT "fk_notify_deliveries_outbox" FOREIGN KEY ("outbox_id") REFERENCES "notify_outbox"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "notify_deliveries"`);
    await q.query(`DROP TABLE "notify_outbox"`);
  }
}
