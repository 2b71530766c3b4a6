/**
 * The three channels of the notification tests through a whole labdeck (test/api/notify-*.test.ts): a signed
 * webhook and a Slack-compatible endpoint on an HTTP sink, and mail to a real SMTP server, all on loopback;
 * the settings document that sends every event to all three, and the checks that an event (and its
 * resolution) reached each of them within the 5 s of issue 30, with a link that opens its page.
 */
import { createHmac } from 'node:crypto';
import type { OutboxStore } from '../../core/store/outbox-types.js';
import { startHttpSink, startSmtpSink, type HttpSink, type Mail, type SmtpSink } from './sinks.js';
import { waitFor } from './wait.js';

export type HookBody = { event: string; state: string; id: string; url: string | null; resolution?: string; run_id?: number | null; [k: string]: unknown };

export interface ChannelSinks {
  sink: HttpSink;
  smtp: SmtpSink;
  /** The settings document: all three channels, links to `origin` (plus `extra`, e.g. a watchdog). */
  settings(origin: string, extra?: Record<string, unknown>): Record<string, unknown>;
  hooks(event: string): HookBody[];
  slack(event: string): string[];
  mails(subject: string): Mail[];
  /**
   * The `n`-th open message of `event` on the webhook, Slack and mail (`title`: its mail subject), on all three
   * within 5 s of the state change (its outbox row, written in the change's transaction); its link is under
   * `origin`, in all three, and `get` (which asserts a 200) opens it.
   */
  everywhere(event: string, title: string, n: number, get: (path: string) => Promise<unknown>): Promise<HookBody>;
  /** The resolution of the alert `open` on all three (its mail: "Resolved: <title>") within 5 s of the change. */
  resolved(open: HookBody, title: string): Promise<HookBody>;
  close(): Promise<void>;
}

/** A mail's text with quoted-printable's soft line breaks and `=3D` undone. */
export const textOf = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=3D/gi, '=');

/** Issue 30: every waiting state reaches every channel within this of the state change. */
const WITHIN_MS = 5000;
/** How long the tests wait for a message at all (a give-up: the 5 s are measured from the outbox row). */
const GIVE_UP_MS = 20_000;

/**
 * `outbox`: the outbox of the labdeck under test (a getter: a test may replace its labdeck), where each state
 * change writes its row, with the time of the change, in the change's own transaction.
 */
export async function startChannelSinks(outbox: () => Pick<OutboxStore, 'recent'>): Promise<ChannelSinks> {
  const sink = await startHttpSink();
  const smtp = await startSmtpSink();
  const hooks = (event: string) =>
    sink.received
      .filter((r) => r.path === '/hook')
      .map((r) => r.json as HookBody)
      .filter((b) => b.event === event);
  const slack = (event: string) =>
    sink.received
      .filter((r) => r.path === '/slack')
      .map((r) => (r.json as { text: string }).text)
      .filter((t) => t.includes(` ${event}`));
  const mails = (subject: string) => smtp.mails.filter((m) => m.subject.includes(subject));
  const opens = (event: string) => hooks(event).filter((b) => b.state === 'open');
  /** Seen on all three (now) within 5 s of the state change that wrote `alertId`'s `state` row. */
  const inTime = async (alertId: string, state: 'open' | 'resolved') => {
    const seen = Date.now();
    const row = (await outbox().recent(500)).find((r) => r.alertId === alertId && r.state === state);
    if (!row) throw new Error(`no ${state} outbox row for the alert ${alertId}`);
    expect(seen - row.createdAt.getTime()).toBeLessThanOrEqual(WITHIN_MS);
  };
  return {
    sink,
    smtp,
    hooks,
    slack,
    mails,
    settings: (origin, extra = {}) => ({
      lab: 'Lab 7',
      base_url: origin,
      channels: [
        { name: 'hook', kind: 'webhook', url: `${sink.url}/hook`, secret: 'a-long-secret', rate_per_minute: 600 },
        { name: 'chat', kind: 'slack', url: `${sink.url}/slack`, rate_per_minute: 600 },
        { name: 'mail', kind: 'email', host: '127.0.0.1', port: smtp.port, secure: false, from: 'lab@example.org', to: ['night@example.org'], rate_per_minute: 600 },
      ],
      ...extra,
    }),
    async everywhere(event, title, n, get) {
      const subject = `] ${title}`; // not the "Resolved: …" one
      await waitFor(
        () => opens(event).length >= n && slack(event).filter((t) => !t.includes(`${event} resolved`)).length >= n && mails(subject).length >= n,
        `${event} on all three channels`,
        GIVE_UP_MS,
        20,
      );
      const b = opens(event)[n - 1]!;
      await inTime(b.id, 'open');
      expect(b.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/app\//);
      await get(new URL(b.url!).pathname);
      expect(slack(event).filter((t) => !t.includes(`${event} resolved`))[n - 1]).toContain(b.url!);
      expect(textOf(mails(subject)[n - 1]!.raw)).toContain(b.url!);
      // signed with the channel's secret (docs/notifications.md)
      const raw = sink.received.find((r) => r.path === '/hook' && (r.json as HookBody).id === b.id && (r.json as HookBody).state === 'open')!;
      expect(raw.headers['x-labdeck-signature']).toBe(`sha256=${createHmac('sha256', 'a-long-secret').update(raw.body).digest('hex')}`);
      return b;
    },
    async resolved(open, title) {
      const event = open.event;
      const done = () => hooks(event).filter((b) => b.state === 'resolved');
      const at = () => done().findIndex((b) => b.id === open.id);
      const slackDone = () => slack(event).filter((t) => t.includes(`${event} resolved`));
      await waitFor(() => at() >= 0 && slackDone().length > at() && mails(`Resolved: ${title}`).length > at(), `${event} resolved on all three channels`, GIVE_UP_MS, 20);
      await inTime(open.id, 'resolved');
      expect(slackDone()[at()]).toContain(open.url!);
      return done()[at()]!;
    },
    async close() {
      await sink.close();
      await smtp.close();
    },
  };
}
