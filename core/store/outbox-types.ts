/** The notification outbox's rows and repository (core/store/outbox-repos.ts; core/notify decides what goes in). */

/** What a state change writes to the outbox, in its own transaction. */
export type AlertOp =
  | {
      op: 'open';
      event: string;
      /** Names the waiting state (`step_failed:run:12`): its resolution finds it by this; one open alert per key. */
      key: string;
      runId?: number | null;
      taskId?: number | null;
      userId?: number | null;
      /** What the message says (host, step, message, …). */
      payload: Record<string, unknown>;
    }
  /** Resolve the open alert with this key, every open alert of a run (but the events in `except`), or of an event. */
  | { op: 'resolve'; key?: string; runId?: number; event?: string; except?: string[]; note?: string };

export interface OutboxRow {
  id: number;
  /** The same for an event and its resolution. */
  alertId: string;
  event: string;
  state: 'open' | 'resolved';
  key: string;
  runId: number | null;
  taskId: number | null;
  userId: number | null;
  /** The open event's payload; a resolution's is the open one's with `resolution` added. */
  payload: Record<string, unknown>;
  createdAt: Date;
}

export interface DeliveryRow {
  id: number;
  channel: string;
  status: 'pending' | 'sending' | 'delivered';
  attempts: number;
  nextAt: Date;
  lastError: string | null;
  event: OutboxRow;
}

export interface ChannelHealth {
  channel: string;
  /** Waiting to be sent (pending, or claimed and not yet marked). */
  waiting: number;
  /** Of those, how many failed at least once; the last error. */
  failing: number;
  lastError: string | null;
  lastDeliveredAt: Date | null;
}

export interface OutboxStore {
  /** Write events and resolutions (inside a state change's transaction: `store.transaction`). */
  write(ops: AlertOp[]): Promise<void>;
  /** Alerts open now (not resolved), oldest first: the attention list. */
  open(limit?: number): Promise<OutboxRow[]>;
  /** The latest events and resolutions, newest first. */
  recent(limit: number): Promise<OutboxRow[]>;
  /** Events not yet given their deliveries, oldest first. */
  unfanned(limit: number): Promise<OutboxRow[]>;
  /** Give an event one delivery per channel, once across the lab; false when another host did it first. */
  fanOut(outboxId: number, channels: string[], now: Date): Promise<boolean>;
  /**
   * Claim due deliveries for `host` until `until` (one host each: FOR UPDATE SKIP LOCKED on PostgreSQL): pending
   * ones due at `now`, and ones claimed by a host whose claim ran out (killed between send and mark).
   */
  claim(host: string, now: Date, until: Date, limit: number, skipChannels?: string[]): Promise<DeliveryRow[]>;
  /** Mark deliveries sent (only while this host's claim holds). */
  delivered(ids: number[], host: string, now: Date): Promise<void>;
  /**
   * Give back every delivery `host` has claimed and not marked (it was found gone: killed mid-delivery), due
   * at `now`, instead of waiting for the claims to run out; how many.
   */
  release(host: string, now: Date): Promise<number>;
  /** Put a delivery back for a retry at `nextAt`, with why it failed. */
  retry(id: number, host: string, error: string, nextAt: Date): Promise<void>;
  /** Per channel: what waits, what fails, when it last delivered. */
  health(): Promise<ChannelHealth[]>;
}
