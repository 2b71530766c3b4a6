/**
 * Wake-ups between the processes on one database (DESIGN.md §12): "the queue changed" sent by one host,
 * heard by every other at once. PostgreSQL: LISTEN/NOTIFY on one connection of its own, opened again after
 * it drops. SQLite: one PC, and processes on one file cannot signal each other through it: nothing is sent,
 * and the hosts' heartbeats (a quarter lease) are the wake-up.
 */
import type { DataSource } from 'typeorm';
import type { Store } from './types.js';

const CHANNEL = 'labdeck_queue';

interface PgClient {
  query(sql: string, values?: unknown[]): Promise<unknown>;
  on(event: 'notification', fn: (msg: { channel: string; payload?: string }) => void): void;
  on(event: 'error' | 'end', fn: (e?: unknown) => void): void;
  release(destroy?: boolean): void;
}

export function signals(ds: DataSource, dialect: 'sqlite' | 'postgres'): Store['signals'] {
  const listeners = new Set<() => void>();
  let client: PgClient | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;

  const connect = async () => {
    if (closed || client) return;
    try {
      const pool = (ds.driver as unknown as { master: { connect(): Promise<PgClient> } }).master;
      const c = await pool.connect();
      const lost = () => {
        if (client !== c) return;
        client = null;
        c.release(true);
        if (!closed) retry = setTimeout(() => void connect(), 1000); // the heartbeats wake hosts meanwhile
        retry?.unref();
      };
      c.on('notification', (msg) => {
        if (msg.channel === CHANNEL) for (const fn of listeners) fn();
      });
      c.on('error', lost);
      c.on('end', lost);
      client = c;
      await c.query(`LISTEN ${CHANNEL}`);
    } catch {
      client = null;
      if (!closed) retry = setTimeout(() => void connect(), 1000);
      retry?.unref();
    }
  };

  return {
    async queueChanged() {
      if (dialect === 'postgres') await ds.query(`SELECT pg_notify('${CHANNEL}', '')`);
    },
    async onQueueChange(fn) {
      listeners.add(fn);
      if (dialect === 'postgres') await connect();
    },
    close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = null;
      c?.release(true);
    },
  };
}
