/**
 * Messages between the labdecks on one database (DESIGN.md §12), over the hosts' NOTIFY channel
 * (core/store/signals.ts). PostgreSQL only: on SQLite nothing is relayed (`enabled` false).
 *
 * - **Live events.** What this labdeck's runner emits (step start and end, log lines, iterations, a run's
 *   start and end, and its running tasks' state and progress) goes to every other labdeck, whose event
 *   stream and status show it marked with this host. Sent one message at a time, so they arrive in order,
 *   several events to a message, each message under NOTIFY's 8000 bytes: an event too large is cut (the
 *   run's records keep it whole) and marked `cut`. Messages are numbered: a listener drops one it already had.
 *   At most OUTBOX events wait to be sent (the oldest go first, counted in `dropped`), so a database that
 *   stalls costs bounded memory.
 * - **Requests.** A run control, or a direct call to an instrument, asked of the labdeck that runs the task or
 *   drives the instrument. That host acknowledges at once (else 503 within ACK_MS) and answers when done; the
 *   asker waits as long as that host keeps its lease (503, `in_doubt`, when it goes mid-request). A request is
 *   sent once and done once: never re-sent by this module.
 */
import { randomUUID } from 'node:crypto';
import { LabError, isLabError, type ErrorCode, type ErrorDetail } from '../errors.js';
import type { Store } from '../store/types.js';
import type { HostLease } from './hosts.js';

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more; this leaves room for the envelope. */
export const MESSAGE_LIMIT = 7800;
/** The largest event sent as it is (bigger ones are cut first). */
const EVENT_LIMIT = 6000;
/** A string longer than this is cut when its event is too large. */
const CUT_AT = 1000;
/** Events waiting to be sent, at most. */
const OUTBOX = 500;
/** How long a request waits for the other host to acknowledge it. */
export const ACK_MS = 5_000;
/** How often a waiting request checks that the host asked is still there. */
const WATCH_MS = 1_000;
/** Ids of requests served, kept so a message heard twice is done once. */
const REMEMBER = 1_000;

/** Another labdeck on the database: its id in the hosts table and its name. */
export interface Peer {
  id: string;
  name: string;
}

type ErrorBody = { code: ErrorCode; message: string; details?: ErrorDetail[]; data?: Record<string, unknown> };
type Message =
  | { type: 'live'; from: string; name: string; seq: number; dropped?: number; events: Record<string, unknown>[] }
  | { type: 'ask'; id: string; to: string; from: string; kind: string; body: unknown }
  | { type: 'ack'; id: string; to: string }
  | { type: 'answer'; id: string; to: string; value?: unknown; error?: ErrorBody };

interface Pending {
  to: Peer;
  what: string;
  acked: boolean;
  ackTimer: NodeJS.Timeout;
  /** Give up after this long once acknowledged (the host still there but silent). */
  maxMs: number;
  since: number;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? '');
const cutText = (s: string) => `${s.slice(0, CUT_AT)}… (cut here: the run's records have it all)`;

/** An event small enough for a message: long strings and large values cut when it is too big. */
export function fitEvent(e: Record<string, unknown>): Record<string, unknown> {
  if (bytes(e) <= EVENT_LIMIT) return e;
  const out: Record<string, unknown> = { ...e, cut: true };
  for (const [k, v] of Object.entries(out)) {
    if (typeof v === 'string' && v.length > CUT_AT) out[k] = cutText(v);
    else if (typeof v === 'object' && v !== null && bytes(v) > CUT_AT) out[k] = `(${bytes(v)} bytes: in the run's records)`;
  }
  if (bytes(out) <= EVENT_LIMIT) return out;
  return { type: e.type, run_id: e.run_id, cut: true };
}

export class HostRelay {
  readonly enabled: boolean;
  private readonly signals: Store['signals'];
  private readonly hosts: Store['hosts'];
  private readonly self: HostLease;
  private readonly handlers = new Map<string, (body: unknown) => Promise<unknown>>();
  private onLive: (e: Record<string, unknown>, from: Peer) => void = () => undefined;
  private closed = false;

  constructor(opts: { store: Store; self: HostLease }) {
    this.enabled = opts.store.dialect === 'postgres';
    this.signals = opts.store.signals;
    this.hosts = opts.store.hosts;
    this.self = opts.self;
  }

  /** Listen: `onLive` gets each event another labdeck relays (in its order, once); requests go to handle()'s. */
  async start(onLive: (e: Record<string, unknown>, from: Peer) => void): Promise<void> {
    this.onLive = onLive;
    if (this.enabled) await this.signals.onHostMessage((m) => this.heard(m as Message));
  }

  /** Serve requests of `kind` from other labdecks: `fn`'s value (JSON) is the answer, what it throws the refusal. */
  handle(kind: string, fn: (body: unknown) => Promise<unknown>): void {
    this.handlers.set(kind, fn);
  }

  close(): void {
    this.closed = true;
    this.outbox.length = 0;
    for (const [id, p] of this.pending) this.settle(id, p, new LabError('unavailable', `This labdeck is stopping: ${p.what} on ${p.to.name} was not waited for.`, undefined, { in_doubt: p.acked }));
  }

  /* ------------------------------------------------------------------ live events */

  private outbox: Record<string, unknown>[] = [];
  private dropped = 0;
  private seq = 0;
  private sending = false;
  private lastStatus = '';

  /**
   * Send one of this labdeck's events to the others. A `status` event is sent only when it changed (only its
   * `running` part, this labdeck's own tasks), replacing one not sent yet.
   */
  publish(e: Record<string, unknown>): void {
    if (!this.enabled || this.closed) return;
    if (e.type === 'status') {
      const key = JSON.stringify(e.running);
      if (key === this.lastStatus) return;
      this.lastStatus = key;
      this.outbox = this.outbox.filter((x) => x.type !== 'status');
    }
    this.outbox.push(fitEvent(e));
    if (this.outbox.length > OUTBOX) {
      this.outbox.shift();
      this.dropped++;
    }
    void this.flush();
  }

  private async flush(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    try {
      while (this.outbox.length && !this.closed) {
        const events: Record<string, unknown>[] = [];
        let size = 300; // the envelope
        while (this.outbox.length && (events.length === 0 || size + bytes(this.outbox[0]) + 1 <= MESSAGE_LIMIT)) {
          const e = this.outbox.shift()!;
          size += bytes(e) + 1;
          events.push(e);
        }
        const m: Message = { type: 'live', from: this.self.id, name: this.self.name, seq: ++this.seq, events, ...(this.dropped ? { dropped: this.dropped } : {}) };
        this.dropped = 0;
        // one message at a time: NOTIFYs are delivered in the order they commit
        if (!(await this.signals.tell(m).catch(() => false))) this.dropped += events.length;
      }
    } finally {
      this.sending = false;
    }
  }

  /** The last message number heard from each host (the latest REMEMBER hosts). */
  private readonly seen = new Map<string, number>();

  private heardLive(m: Extract<Message, { type: 'live' }>) {
    if (m.from === this.self.id || typeof m.seq !== 'number' || !Array.isArray(m.events)) return;
    if (m.seq <= (this.seen.get(m.from) ?? 0)) return; // had it already
    this.seen.delete(m.from);
    this.seen.set(m.from, m.seq);
    if (this.seen.size > REMEMBER) this.seen.delete(this.seen.keys().next().value!);
    const from = { id: m.from, name: m.name };
    for (const e of m.events) this.onLive(e, from);
  }

  /* ------------------------------------------------------------------ requests */

  private readonly pending = new Map<string, Pending>();
  private watch: NodeJS.Timeout | null = null;

  /**
   * Ask `to` (another labdeck on the database) for `kind` with `body`; its answer, or its refusal thrown as
   * it gave it. `what` names the request in messages ("counter.inc"). Undefined when the database carries no
   * messages (SQLite). Throws payload_too_large (413) when `body` does not fit in one message, unavailable
   * (503) when `to` does not acknowledge within ACK_MS, goes away before it answers (`in_doubt`: it may
   * have acted), or stays silent for `maxMs` after acknowledging.
   */
  async request<T>(to: Peer, kind: string, body: unknown, what: string, maxMs = 10 * 60_000): Promise<T | undefined> {
    if (!this.enabled || this.closed) return undefined;
    const id = randomUUID();
    const m: Message = { type: 'ask', id, to: to.id, from: this.self.id, kind, body };
    const size = bytes(m);
    if (size > MESSAGE_LIMIT) {
      throw new LabError(
        'payload_too_large',
        `${what} is ${size} bytes to send to ${to.name}; a request to another labdeck carries at most ${MESSAGE_LIMIT} bytes (PostgreSQL NOTIFY's limit): ask it on ${to.name}.`,
        undefined,
        { limit: MESSAGE_LIMIT },
      );
    }
    const answer = new Promise<T>((resolve, reject) => {
      const ackTimer = setTimeout(() => {
        const p = this.pending.get(id);
        if (p && !p.acked)
          this.settle(id, p, new LabError('unavailable', `${to.name} did not answer within ${ACK_MS / 1000} s: ${what} was not done from here (it is not sent again).`, undefined, { in_doubt: true }));
      }, ACK_MS);
      this.pending.set(id, { to, what, acked: false, ackTimer, maxMs, since: Date.now(), resolve: resolve as (v: unknown) => void, reject });
    });
    this.watch ??= setInterval(() => void this.watchPeers(), WATCH_MS);
    let sent: boolean;
    try {
      sent = await this.signals.tell(m);
    } catch (e) {
      this.settle(id, this.pending.get(id)!, null);
      throw e;
    }
    if (!sent) {
      this.settle(id, this.pending.get(id)!, null);
      return undefined;
    }
    return answer;
  }

  /** Settle request `id`: `e` thrown to the asker (null: nobody waits any more). */
  private settle(id: string, p: Pending | undefined, e: unknown, value?: unknown) {
    if (!p) return;
    clearTimeout(p.ackTimer);
    this.pending.delete(id);
    if (e !== null && e !== undefined) p.reject(e);
    else if (e === undefined) p.resolve(value);
    if (this.pending.size === 0 && this.watch) {
      clearInterval(this.watch);
      this.watch = null;
    }
  }

  /** Requests acknowledged by a host that is gone since (or silent too long) end with a 503: it may have acted. */
  private async watchPeers() {
    const waiting = [...this.pending.entries()].filter(([, p]) => p.acked);
    const ids = new Set(waiting.map(([, p]) => p.to.id));
    for (const hostId of ids) {
      const h = await this.hosts.get(hostId).catch(() => undefined);
      if (h === undefined) continue; // the database did not answer: look again next time
      if (h && !h.stoppedAt && !this.self.expired(h)) continue;
      for (const [id, p] of waiting.filter(([, p]) => p.to.id === hostId)) {
        this.settle(
          id,
          p,
          new LabError('unavailable', `${p.to.name} went away during ${p.what}: it may or may not have been done there (see its records); it is not sent again.`, undefined, { in_doubt: true }),
        );
      }
    }
    const now = Date.now();
    for (const [id, p] of waiting) {
      if (this.pending.has(id) && now - p.since > p.maxMs) {
        this.settle(
          id,
          p,
          new LabError('unavailable', `${p.to.name} did not answer ${p.what} within ${Math.round(p.maxMs / 1000)} s: see its records (it is not sent again).`, undefined, { in_doubt: true }),
        );
      }
    }
  }

  /** Ids of requests served here (the latest REMEMBER). */
  private readonly served = new Set<string>();

  private async serve(m: Extract<Message, { type: 'ask' }>) {
    if (this.served.has(m.id)) return;
    this.served.add(m.id);
    if (this.served.size > REMEMBER) this.served.delete(this.served.values().next().value!);
    const reply = (r: Omit<Extract<Message, { type: 'answer' }>, 'type' | 'id' | 'to'>) => this.signals.tell({ type: 'answer', id: m.id, to: m.from, ...r });
    await this.signals.tell({ type: 'ack', id: m.id, to: m.from } satisfies Message).catch(() => undefined);
    let answer: Omit<Extract<Message, { type: 'answer' }>, 'type' | 'id' | 'to'>;
    try {
      const fn = this.handlers.get(m.kind);
      if (!fn) throw new LabError('not_found', `This labdeck (${this.self.name}) does not serve "${m.kind}" requests.`);
      answer = { value: await fn(m.body) };
    } catch (e) {
      const err = isLabError(e) ? e : new LabError('internal', e instanceof Error ? e.message : String(e));
      answer = { error: { code: err.code, message: err.message.length > 2 * CUT_AT ? cutText(err.message) : err.message, details: err.details?.slice(0, 20), data: err.data } };
    }
    if (bytes(answer) > MESSAGE_LIMIT - 300) {
      answer = {
        error: {
          code: 'payload_too_large',
          message: `${this.self.name} did it, but its answer (${bytes(answer)} bytes) is more than a message between labdecks carries (${MESSAGE_LIMIT} bytes).`,
          data: { limit: MESSAGE_LIMIT },
        },
      };
    }
    // the asker waits for this answer: try again through a short database hiccup
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await reply(answer).catch(() => false)) return;
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  private heard(m: Message | null) {
    if (!m || typeof m !== 'object') return;
    if (m.type === 'live') return this.heardLive(m);
    if (m.to !== this.self.id || typeof m.id !== 'string') return;
    if (m.type === 'ask') return void this.serve(m);
    const p = this.pending.get(m.id);
    if (!p) return;
    if (m.type === 'ack') {
      p.acked = true;
      clearTimeout(p.ackTimer);
    } else if (m.type === 'answer') {
      if (m.error) this.settle(m.id, p, new LabError(m.error.code, m.error.message, m.error.details, m.error.data));
      else this.settle(m.id, p, undefined, m.value);
    }
  }
}
