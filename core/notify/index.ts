/**
 * Telling people when they are needed (DESIGN.md §17, docs/notifications.md): the lab's channels and
 * watchdog settings, each user's own subscription, the attention list (alerts open now), the channels'
 * health, a test message per channel, and this host's deliverer.
 */
import { randomUUID } from 'node:crypto';
import { LabError } from '../errors.js';
import type { ChannelHealth, OutboxRow, Store } from '../store/types.js';
import { messageOf, send, whyFailed } from './channels.js';
import { Deliverer, type DelivererOptions } from './deliverer.js';
import { EMPTY_SETTINGS, NotificationSettings, SETTINGS_KEY, UserSubscription, invalid, parseSettings, publicSettings, userKey } from './settings.js';

export * from './events.js';
export { EVENTS, DEFAULT_EVENTS, type EventName } from './settings.js';
export { Deliverer } from './deliverer.js';
export { Watchdog, overdueBound, runEta, etaText, type CallStats } from './watchdog.js';
import { runEta, type Watchdog } from './watchdog.js';
import type { SafetyAlerts } from './safety.js';

/** Events that tell, without a waiting state: never on the attention list. */
const INFORMATIONAL = new Set(['run_completed', 'campaign_finished']);

export interface NotificationsOptions extends Omit<DelivererOptions, 'store' | 'hostId'> {
  /** Start this host's deliverer (default true; `lab run` and tests may leave it to another host). */
  deliver?: boolean;
}

export class Notifications {
  readonly deliverer: Deliverer;
  /** The watchdog fed by this host's runner (core/notify/wiring.ts); null until wired. */
  watchdog: Watchdog | null = null;
  /** safety_blocked of direct calls, told by the deck (core/notify/safety.ts); null until wired. */
  safety: SafetyAlerts | null = null;
  /** The address this labdeck serves at, for links when the settings name no `base_url` (`lab serve` sets it). */
  set baseUrl(url: string | null) {
    this.deliverer.baseUrl = url;
  }

  constructor(
    private readonly store: Store,
    hostId: string,
    private readonly opts: NotificationsOptions = {},
  ) {
    this.deliverer = new Deliverer({ ...opts, store, hostId });
  }

  start(): void {
    if (this.opts.deliver !== false) this.deliverer.start();
  }

  /**
   * Stop delivering; with the deliverer running, one last pass first, for up to `flushMs` (default 2 s), so a
   * short-lived `lab run` sends what its run raised before it exits (what is left waits for the next labdeck).
   */
  async close(flushMs = 2000): Promise<void> {
    if (this.opts.deliver !== false && flushMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      const last = this.deliverer
        .idle()
        .then(() => this.deliverer.pass())
        .catch(() => 0);
      await Promise.race([last, new Promise((r) => (timer = setTimeout(r, flushMs)))]);
      clearTimeout(timer);
    }
    await this.deliverer.stop();
  }

  /** The stored settings, secrets included (the deliverer's view). */
  settings(): Promise<NotificationSettings> {
    return this.deliverer.settings();
  }

  /** The settings as an admin reads them: secrets only say whether they are set. */
  async view(): Promise<unknown> {
    return publicSettings(await this.settings());
  }

  /** Save a new document (admins): validated, secrets left out kept; returns the public view. */
  async save(input: unknown): Promise<unknown> {
    const stored = await this.store.settings.get(SETTINGS_KEY);
    const before = stored ? NotificationSettings.safeParse(stored) : null;
    const doc = parseSettings(input, before?.success ? before.data : null);
    await this.store.settings.set(SETTINGS_KEY, doc);
    return publicSettings(doc);
  }

  /** Send a test message to one channel now (not through the outbox): resolves when it arrived. */
  async test(channelName: string, by: string): Promise<{ channel: string; sent: true }> {
    const s = await this.settings();
    const channel = s.channels.find((c) => c.name === channelName);
    if (!channel)
      throw new LabError('not_found', `No channel named "${channelName}": the settings have ${s.channels.map((c) => `"${c.name}"`).join(', ') || 'none'}.`, [
        { field: 'channel', message: 'no such channel' },
      ]);
    const row: OutboxRow = {
      id: 0,
      alertId: randomUUID(),
      event: 'test',
      state: 'open',
      key: 'test',
      runId: null,
      taskId: null,
      userId: null,
      payload: { message: `A test message from labdeck, sent by ${by}: this channel works.`, link: '/app/notifications' },
      createdAt: new Date(),
    };
    try {
      await send(channel, [messageOf(row, { lab: s.lab ?? 'labdeck', baseUrl: s.base_url ?? this.deliverer.baseUrl ?? null })], `test.${row.alertId}`);
    } catch (e) {
      const msg = whyFailed(e);
      throw new LabError('instrument_error', `The test message to "${channelName}" failed: ${msg}`, [{ field: 'channel', message: msg }]);
    }
    return { channel: channelName, sent: true };
  }

  /** Per channel: waiting, failing (dead when nothing gets through), the last error and delivery. */
  async health(): Promise<(ChannelHealth & { dead: boolean })[]> {
    const names = (await this.settings()).channels.map((c) => c.name);
    const rows = await this.store.outbox.health();
    const by = new Map(rows.map((r) => [r.channel, r]));
    const all = [...names.map((n) => by.get(n) ?? { channel: n, waiting: 0, failing: 0, lastError: null, lastDeliveredAt: null }), ...rows.filter((r) => !names.includes(r.channel))];
    return all.map((h) => ({ ...h, dead: h.failing > 0 }));
  }

  /**
   * What `GET /executions/status` adds: each running call step of this host with its expected end (null
   * until its instrument and method have min_samples records) and whether it is overdue, and each run's ETA.
   */
  timing(runIds: number[]): { steps: ReturnType<Watchdog['running']>; runs: { run_id: number; eta: ReturnType<Watchdog['eta']> }[] } {
    const w = this.watchdog;
    return { steps: w ? w.running() : [], runs: runIds.map((id) => ({ run_id: id, eta: w ? w.eta(id) : null })) };
  }

  /** A run's ETA from past completed runs of its workflow (P10-P90), as `lab run` notes it; null when none. */
  runEta(runId: number): ReturnType<typeof runEta> {
    return runEta(this.store, runId);
  }

  /** What waits for a person now: open alerts without their resolution. */
  async attention(): Promise<OutboxRow[]> {
    return (await this.store.outbox.open()).filter((r) => !INFORMATIONAL.has(r.event));
  }

  /** The latest events and resolutions. */
  recent(limit = 50): Promise<OutboxRow[]> {
    return this.store.outbox.recent(limit);
  }

  async subscription(userId: number): Promise<UserSubscription | null> {
    const r = UserSubscription.safeParse(await this.store.settings.get(userKey(userId)));
    return r.success ? r.data : null;
  }

  /** Set (or, with null, end) a user's mail about their own runs. */
  async subscribe(userId: number, input: unknown): Promise<UserSubscription | null> {
    if (input === null) {
      await this.store.settings.set(userKey(userId), null);
      return null;
    }
    const r = UserSubscription.safeParse(input);
    if (!r.success) throw invalid(r.error);
    await this.store.settings.set(userKey(userId), r.data);
    return r.data;
  }
}

export { EMPTY_SETTINGS, NotificationSettings, UserSubscription, publicSettings };
