/**
 * The deliverer: takes events from the outbox to the channels (docs/notifications.md). Each pass
 *   1. fans new events out: one delivery row per channel that wants the event (and per user subscribed to
 *      their own run's events), once across the lab;
 *   2. claims due deliveries (one host each), sends them (several for one channel beyond its rate: one
 *      digest), and marks them delivered at once, or puts them back with an exponential back-off.
 * A claim lasts `claimMs`: a host killed between sending and marking leaves the delivery claimed, and once the
 * claim runs out another pass (this host restarted, or another) sends it again. That is the one window in
 * which a message can arrive twice; every message carries `X-Labdeck-Delivery` (the same on a re-send) so a
 * receiver can drop the second copy.
 */
import type { DeliveryRow, Store } from '../store/types.js';
import { messageOf, send, whyFailed, type MailVia, type Message } from './channels.js';
import { onOutboxWrite } from './events.js';
import { EMPTY_SETTINGS, NotificationSettings, SETTINGS_KEY, UserSubscription, userKey, type Channel } from './settings.js';

export interface DelivererOptions {
  store: Store;
  /** This labdeck's host id (the claims name it). */
  hostId: string;
  /** The address people reach this labdeck at, for links, unless the settings say `base_url`. */
  baseUrl?: string | null;
  /** How often to look for work (default 500 ms; a write in this process wakes it sooner). */
  intervalMs?: number;
  /** How long a claim holds (default 60 s, or LABDECK_NOTIFY_CLAIM_MS). */
  claimMs?: number;
  /** The clock (tests). */
  now?: () => Date;
  /** Retry back-off: first wait, cap (default 1 s doubling up to 5 minutes). */
  backoffMs?: { first: number; max: number };
  /** Called when a delivery fails (logs). */
  onError?: (channel: string, error: string) => void;
}

/** A channel name for a user's own subscription. */
const USER_CHANNEL = /^user:(\d+)$/;

export class Deliverer {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private unlisten: (() => void) | null = null;
  /** When each channel sent, within the last minute (its rate limit, per host). */
  private readonly sent = new Map<string, number[]>();
  private readonly now: () => Date;
  private readonly claimMs: number;
  /** See DelivererOptions.baseUrl. */
  baseUrl: string | null;

  constructor(private readonly o: DelivererOptions) {
    this.baseUrl = o.baseUrl ?? null;
    this.now = o.now ?? (() => new Date());
    const env = Number(process.env.LABDECK_NOTIFY_CLAIM_MS);
    this.claimMs = o.claimMs ?? (env > 0 ? env : 60_000);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unlisten = onOutboxWrite(() => this.wake());
    const tick = () => {
      this.wake();
      if (!this.stopped) (this.timer = setTimeout(tick, this.o.intervalMs ?? 500)).unref();
    };
    tick();
  }

  /** Stop looking; a pass in progress finishes (its claims are marked). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unlisten?.();
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Run a pass now (one at a time; a wake during a pass runs another after it). */
  wake(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.pass();
        } catch (e) {
          this.o.onError?.('(outbox)', e instanceof Error ? e.message : String(e));
        }
      } while (this.again && !this.stopped);
    })().finally(() => (this.running = null));
  }

  /** Wait for the pass in progress (tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async settings(): Promise<NotificationSettings> {
    const raw = await this.o.store.settings.get(SETTINGS_KEY);
    if (!raw) return EMPTY_SETTINGS;
    const r = NotificationSettings.safeParse(raw);
    return r.success ? r.data : EMPTY_SETTINGS;
  }

  /** One pass: fan out, claim, send, mark. Returns how many deliveries it sent. */
  async pass(): Promise<number> {
    const settings = await this.settings();
    await this.fanOut(settings);
    const now = this.now();
    const full = settings.channels.filter((c) => this.budget(c, now) === 0).map((c) => c.name);
    const claimed = await this.o.store.outbox.claim(this.o.hostId, now, new Date(now.getTime() + this.claimMs), 500, full);
    const byChannel = new Map<string, DeliveryRow[]>();
    for (const d of claimed) byChannel.set(d.channel, [...(byChannel.get(d.channel) ?? []), d]);
    let sent = 0;
    await Promise.all(
      [...byChannel].map(async ([name, rows]) => {
        sent += await this.deliver(settings, name, rows);
      }),
    );
    return sent;
  }

  private async fanOut(settings: NotificationSettings) {
    const events = await this.o.store.outbox.unfanned(200);
    const subs = new Map<number, UserSubscription | null>();
    for (const e of events) {
      const names = settings.channels.filter((c) => c.events.includes(e.event as never)).map((c) => c.name);
      if (e.userId !== null && settings.channels.some((c) => c.kind === 'email')) {
        if (!subs.has(e.userId)) {
          const r = UserSubscription.safeParse(await this.o.store.settings.get(userKey(e.userId)));
          subs.set(e.userId, r.success ? r.data : null);
        }
        if (subs.get(e.userId)?.events.includes(e.event as never)) names.push(`user:${e.userId}`);
      }
      await this.o.store.outbox.fanOut(e.id, names, this.now());
    }
  }

  /** Messages this channel may still send this minute. */
  private budget(c: Channel, now: Date): number {
    const since = now.getTime() - 60_000;
    const times = (this.sent.get(c.name) ?? []).filter((t) => t > since);
    this.sent.set(c.name, times);
    return Math.max(0, c.rate_per_minute - times.length);
  }

  private async deliver(settings: NotificationSettings, name: string, rows: DeliveryRow[]): Promise<number> {
    const where = { lab: settings.lab ?? 'labdeck', baseUrl: (settings.base_url ?? this.baseUrl ?? null)?.replace(/\/+$/, '') ?? null };
    let target = targetOf(settings, name);
    if (target?.kind === 'mailto') {
      const to = await userTarget(this.o.store, name);
      target = to ? { ...target, to: [to] } : null;
    }
    const store = this.o.store.outbox;
    const host = this.o.hostId;
    if (!target) {
      // the channel was removed (or the user's subscription): nothing to send it to; kept as delivered nowhere
      for (const r of rows) await store.retry(r.id, host, `no channel "${name}" in the settings any more`, new Date(this.now().getTime() + 3_600_000));
      return 0;
    }
    const rate = 'rate_per_minute' in target ? target.rate_per_minute : 20;
    const now = this.now();
    const left = this.budget({ name, rate_per_minute: rate } as Channel, now);
    // within the budget: one message each; a flood beyond it: what the budget allows, the rest in one digest
    // that says so (the budget's last message)
    const singles = rows.length <= left ? rows.length : Math.max(0, left - 1);
    const batches: DeliveryRow[][] = [...rows.slice(0, singles).map((r) => [r]), ...(singles < rows.length ? [rows.slice(singles)] : [])];
    let sent = 0;
    for (const batch of batches) {
      const messages: Message[] = batch.map((r) => messageOf(r.event, where));
      const deliveryId = batch.length === 1 ? `${batch[0]!.event.alertId}.${batch[0]!.event.state}.${name}` : `digest.${batch.map((r) => r.id).join('-')}`;
      try {
        await send(target, messages, deliveryId);
        // marked at once: a kill between the send and this write is the one window for a second copy
        await store.delivered(
          batch.map((r) => r.id),
          host,
          this.now(),
        );
        this.sent.set(name, [...(this.sent.get(name) ?? []), now.getTime()]);
        sent += batch.length;
      } catch (e) {
        const msg = whyFailed(e);
        this.o.onError?.(name, msg);
        for (const r of batch) await store.retry(r.id, host, msg, new Date(this.now().getTime() + this.backoff(r.attempts)));
      }
    }
    return sent;
  }

  private backoff(attempts: number): number {
    const { first, max } = this.o.backoffMs ?? { first: 1000, max: 300_000 };
    return Math.min(max, first * 2 ** Math.max(0, attempts - 1));
  }
}

/** Where a channel's deliveries go: the channel, or a user's mail through the lab's first email channel. */
function targetOf(settings: NotificationSettings, name: string): Channel | { kind: 'mailto'; name: string; to: string[]; via: MailVia; rate_per_minute: number } | null {
  const m = USER_CHANNEL.exec(name);
  if (!m) return settings.channels.find((c) => c.name === name) ?? null;
  const smtp = settings.channels.find((c) => c.kind === 'email');
  if (!smtp || smtp.kind !== 'email') return null;
  return { kind: 'mailto', name, to: [], via: smtp, rate_per_minute: smtp.rate_per_minute };
}

/** A user's subscription address is read when sending (it may have changed since the event). */
export async function userTarget(store: Store, name: string): Promise<string | null> {
  const m = USER_CHANNEL.exec(name);
  if (!m) return null;
  const r = UserSubscription.safeParse(await store.settings.get(userKey(Number(m[1]))));
  return r.success ? r.data.email : null;
}
