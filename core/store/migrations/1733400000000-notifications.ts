import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ddl } from './ddl.js';

/**
 * The notification outbox (DESIGN.md §17, docs/notifications.md). `notify_outbox` holds each event (`open`)
 * and its resolution (`resolved`, the same `alert_id`), written in the transaction of the state change that
 * causes it; `notify_deliveries` one row per event and channel, claimed by one host (PostgreSQL:
 * `FOR UPDATE SKIP LOCKED`), retried with back-off, marked delivered.
 */
export class Notifications1733400000000 implements MigrationInterface {
  name = 'Notifications1733400000000';

  async up(q: QueryRunner): Promise<void> {
    await ddl(q, async (t) => {
      await t.createTable('notify_outbox', {
        id: 'id',
        alert_id: 'text',
        event: 'text',
        state: 'text',
        key: 'text',
        run_id: 'int?',
        task_id: 'int?',
        user_id: 'int?',
        payload: 'text',
        created_at: 'ts',
        fanned_at: 'ts?',
      });
      await t.createIndex('ix_notify_outbox_key', 'notify_outbox', ['key']);
      await t.createIndex('ix_notify_outbox_fanned', 'notify_outbox', ['fanned_at']);
      await t.createIndex('ix_notify_outbox_alert', 'notify_outbox', ['alert_id']);
      await t.createTable(
        'notify_deliveries',
        {
          id: 'id',
          outbox_id: 'int',
          channel: 'text',
          status: 'text',
          attempts: 'int',
          next_at: 'ts',
          claimed_by: 'text?',
          claimed_until: 'ts?',
          delivered_at: 'ts?',
          last_error: 'text?',
        },
        { unique: { uq_notify_deliveries: ['outbox_id', 'channel'] }, foreignKeys: { fk_notify_deliveries_outbox: ['outbox_id', 'notify_outbox', 'CASCADE'] } },
      );
      await t.createIndex('ix_notify_deliveries_due', 'notify_deliveries', ['status', 'next_at']);
    });
  }

  async down(q: QueryRunner): Promise<void> {
    await ddl(q, async (t) => {
      await t.dropIndex('ix_notify_deliveries_due');
      await t.dropTable('notify_deliveries');
      for (const ix of ['ix_notify_outbox_alert', 'ix_notify_outbox_fanned', 'ix_notify_outbox_key']) await t.dropIndex(ix);
      await t.dropTable('notify_outbox');
    });
  }
}
