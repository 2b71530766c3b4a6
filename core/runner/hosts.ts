/**
 * This process as one host of the lab (DESIGN.md §12). It registers in the database with a heartbeat, its
 * lease; it leases the instruments of its deck by name, so no two processes drive one instrument; and on
 * each heartbeat it looks for hosts whose lease expired (no heartbeat for `leaseMs`, or, on this computer,
 * a process that is gone): the first host to see one marks it stopped, and the runner then recovers the runs
 * that host left, as after a crash. A host that stops cleanly marks itself stopped.
 *
 * Nothing else is shared between hosts: the queue, the runs and the holds are rows, claimed atomically.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { hostLost, hostBack } from '../notify/hosts.js';
import type { HostKind, HostRow, Store } from '../store/types.js';

/**
 * Without a heartbeat for this long, a host is taken for gone (its runs interrupted, its instruments free):
 * 10 s, or LABDECK_LEASE_MS (a lab on a slow network may want longer; tests want shorter).
 */
export const DEFAULT_LEASE_MS = Number(process.env.LABDECK_LEASE_MS) > 0 ? Number(process.env.LABDECK_LEASE_MS) : 10_000;

export interface HostOptions {
  kind: HostKind;
  /** How people know it (default: `lab <kind> on <machine> (pid N)`). */
  name?: string;
  /** How long a lease lasts without a heartbeat (default 10 s); a heartbeat goes every quarter of it. */
  leaseMs?: number;
}

/** Is process `pid` alive on this computer? (Signal 0 checks without sending anything.) */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // alive, but another user's
  }
}

export class HostLease {
  readonly id = randomUUID();
  readonly name: string;
  readonly kind: HostKind;
  readonly leaseMs: number;
  private readonly machine = hostname();
  private timer: NodeJS.Timeout | null = null;
  /** Another host found this one's lease expired (a long stall) and took over its runs. */
  lost = false;

  constructor(
    private readonly store: Store,
    opts: HostOptions,
  ) {
    this.kind = opts.kind;
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    this.name = opts.name ?? `lab ${opts.kind} on ${this.machine} (pid ${process.pid})`;
  }

  async register(): Promise<void> {
    await hostBack(this.store, { id: this.id, name: this.name, kind: this.kind, machine: this.machine, pid: process.pid });
  }

  /** A host is gone when its lease ran out, or when it ran on this computer and its process has ended. */
  expired(h: HostRow, now = Date.now()): boolean {
    if (h.id === this.id) return false;
    if (now - h.heartbeatAt.getTime() > this.leaseMs) return true;
    return h.machine === this.machine && h.pid !== process.pid && !alive(h.pid);
  }

  /** Mark every expired host stopped (freeing its instruments); true when any was. */
  async sweep(): Promise<boolean> {
    let any = false;
    for (const h of await this.store.hosts.live()) if (this.expired(h) && (await hostLost(this.store, h, this.name))) any = true;
    return any;
  }

  /** Heartbeat every quarter lease; `onBeat` runs after each (the runner's sweep and wake-up). */
  start(onBeat: () => Promise<void>): void {
    const beat = async () => {
      try {
        if (!(await this.store.hosts.beat(this.id))) this.lost = true;
        await onBeat();
      } catch {
        // the database is unreachable for a moment: the next beat tries again (the lease outlasts a few misses)
      }
    };
    this.timer = setInterval(() => void beat(), Math.max(50, Math.floor(this.leaseMs / 4)));
    this.timer.unref();
  }

  /** Lease instruments (with their schemas, for the other hosts); returns those another live host drives. */
  lease(instruments: { name: string; schema: unknown }[]) {
    return this.store.hosts.lease(this.id, instruments);
  }

  /** Stop heartbeating and mark this host stopped: its instruments are free, its unfinished runs recoverable. */
  async stop(): Promise<void> {
    this.halt();
    await this.store.hosts.stop(this.id);
  }

  /** Stop heartbeating only, as a process that was killed (tests). */
  halt(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
