/** The notification outbox's entities (the migrations 1733400000000-notifications make these tables). */
import { EntitySchema } from 'typeorm';

type Dialect = 'sqlite' | 'postgres';

interface OutboxEntity {
  id: number;
  alertId: string;
  event: string;
  state: string;
  key: string;
  runId: number | null;
  taskId: number | null;
  userId: number | null;
  payload: string;
  createdAt: Date;
  fannedAt: Date | null;
}

interface DeliveryEntity {
  id: number;
  outboxId: number;
  channel: string;
  status: string;
  attempts: number;
  nextAt: Date;
  claimedBy: string | null;
  claimedUntil: Date | null;
  deliveredAt: Date | null;
  lastError: string | null;
}

export function notifyEntitySchemas(dialect: Dialect): EntitySchema[] {
  const ts = dialect === 'postgres' ? ('timestamptz' as const) : ('datetime' as const);
  const Outbox = new EntitySchema<OutboxEntity>({
    name: 'NotifyOutbox',
    tableName: 'notify_outbox',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_notify_outbox', generated: 'increment' },
      alertId: { type: 'text', name: 'alert_id' },
      event: { type: 'text' },
      state: { type: 'text' },
      key: { type: 'text' },
      runId: { type: 'integer', name: 'run_id', nullable: true },
      taskId: { type: 'integer', name: 'task_id', nullable: true },
      userId: { type: 'integer', name: 'user_id', nullable: true },
      payload: { type: 'text' },
      createdAt: { type: ts, name: 'created_at' },
      fannedAt: { type: ts, name: 'fanned_at', nullable: true },
    },
    indices: [
      { name: 'ix_notify_outbox_key', columns: ['key'] },
      { name: 'ix_notify_outbox_fanned', columns: ['fannedAt'] },
      { name: 'ix_notify_outbox_alert', columns: ['alertId'] },
    ],
  });
  const Delivery = new EntitySchema<DeliveryEntity>({
    name: 'NotifyDelivery',
    tableName: 'notify_deliveries',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_notify_deliveries', generated: 'increment' },
      outboxId: { type: 'integer', name: 'outbox_id' },
      channel: { type: 'text' },
      status: { type: 'text' },
      attempts: { type: 'integer' },
      nextAt: { type: ts, name: 'next_at' },
      claimedBy: { type: 'text', name: 'claimed_by', nullable: true },
      claimedUntil: { type: ts, name: 'claimed_until', nullable: true },
      deliveredAt: { type: ts, name: 'delivered_at', nullable: true },
      lastError: { type: 'text', name: 'last_error', nullable: true },
    },
    uniques: [{ name: 'uq_notify_deliveries', columns: ['outboxId', 'channel'] }],
    indices: [{ name: 'ix_notify_deliveries_due', columns: ['status', 'nextAt'] }],
    foreignKeys: [{ name: 'fk_notify_deliveries_outbox', target: 'NotifyOutbox', columnNames: ['outboxId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
  });
  return [Outbox, Delivery] as EntitySchema[];
}
