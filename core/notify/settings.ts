/**
 * The lab's notification settings (DESIGN.md §17, docs/notifications.md): channels and the watchdog, one
 * document in the database's settings table, so every labdeck on one PostgreSQL shares it. Secrets (a
 * webhook's `secret`, an SMTP `password`) are write-only: a read says only whether one is set, and a save
 * that leaves one out keeps the stored one (same channel name).
 */
import { z } from 'zod';
import { LabError } from '../errors.js';

/** Every event a channel may get, as docs/notifications.md lists them. */
export const EVENTS = [
  'step_failed',
  'pause_waiting',
  'input_waiting',
  'approval_pending',
  'safety_blocked',
  'run_interrupted',
  'host_lost',
  'queue_held',
  'step_overdue',
  'campaign_finished',
  'run_completed',
] as const;
export type EventName = (typeof EVENTS)[number];

/** What a channel gets when it names no events: all but `run_completed` (off by default). */
export const DEFAULT_EVENTS: EventName[] = EVENTS.filter((e) => e !== 'run_completed');

const httpUrl = z
  .string()
  .max(2000)
  .refine((u) => /^https?:\/\/[^\s]+$/i.test(u), { message: 'expected an http:// or https:// URL' });
const name = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]*$/, 'letters, digits, space, . _ - (starting with a letter or digit)')
  .describe('How the page and the delivery records name this channel');
const common = {
  name,
  events: z.array(z.enum(EVENTS)).default(DEFAULT_EVENTS).describe('The events this channel gets (default: all but run_completed)'),
  rate_per_minute: z.number().int().min(1).max(600).default(20).describe('Messages a minute at most; beyond that, events wait and go as one digest that says so'),
};

export const WebhookChannel = z
  .object({
    ...common,
    kind: z.literal('webhook'),
    url: httpUrl.describe('Where the JSON POST goes'),
    secret: z.string().min(8).max(500).optional().describe('HMAC-SHA256 key of the X-Labdeck-Signature header (write-only; kept when left out)'),
  })
  .strict();
export const EmailChannel = z
  .object({
    ...common,
    kind: z.literal('email'),
    host: z.string().min(1).max(255).describe('SMTP server'),
    port: z.number().int().min(1).max(65535).default(587),
    secure: z.boolean().default(false).describe('true: TLS from the start (port 465); false: STARTTLS when the server offers it'),
    user: z.string().max(255).optional(),
    password: z.string().max(500).optional().describe('SMTP password (write-only; kept when left out)'),
    from: z.string().min(3).max(255).describe('The From address'),
    to: z.array(z.string().min(3).max(255)).min(1).max(50).describe('Who gets the mail'),
  })
  .strict();
export const SlackChannel = z
  .object({ ...common, kind: z.literal('slack'), url: httpUrl.describe('A Slack-compatible incoming webhook (Mattermost, Rocket.Chat, Teams simple webhooks too)') })
  .strict();
export const Channel = z.discriminatedUnion('kind', [WebhookChannel, EmailChannel, SlackChannel]);
export type Channel = z.infer<typeof Channel>;

export const Watchdog = z
  .object({
    factor: z.number().min(1).max(1000).default(3).describe('Overdue beyond factor × the median duration'),
    mad_factor: z.number().min(0).max(1000).default(5).describe('… or beyond the median + mad_factor × MAD'),
    floor_s: z
      .number()
      .min(0)
      .max(86_400 * 7)
      .default(10)
      .describe('… and never before this many seconds'),
    min_samples: z.number().int().min(1).max(10_000).default(5).describe('Calls of the instrument and method needed before any bound'),
  })
  .strict();
export type Watchdog = z.infer<typeof Watchdog>;

export const NotificationSettings = z
  .object({
    channels: z.array(Channel).max(50).default([]),
    watchdog: Watchdog.default({ factor: 3, mad_factor: 5, floor_s: 10, min_samples: 5 }),
    lab: z.string().max(200).optional().describe("The lab's name in every message (default: labdeck)"),
    base_url: httpUrl.optional().describe('Where people reach this labdeck, for the links (default: the address it serves)'),
  })
  .strict()
  .superRefine((doc, ctx) => {
    const seen = new Set<string>();
    doc.channels.forEach((c, i) => {
      if (seen.has(c.name)) ctx.addIssue({ code: 'custom', path: ['channels', i, 'name'], message: `two channels are named "${c.name}"` });
      seen.add(c.name);
    });
  });
export type NotificationSettings = z.infer<typeof NotificationSettings>;

/** A user's own subscription: mail about their own runs. */
export const UserSubscription = z
  .object({
    email: z
      .string()
      .regex(/^[^\s@]+@[^\s@]+$/, 'an email address')
      .max(255)
      .describe('Where the mail goes'),
    events: z.array(z.enum(EVENTS)).default(DEFAULT_EVENTS).describe('Events of your own runs to be told about'),
  })
  .strict();
export type UserSubscription = z.infer<typeof UserSubscription>;

export const SETTINGS_KEY = 'notifications';
export const userKey = (userId: number) => `notifications.user.${userId}`;

/** The settings as a GET shows them: each secret replaced by whether it is set. */
export function publicSettings(doc: NotificationSettings): unknown {
  return {
    ...doc,
    channels: doc.channels.map((c) => {
      if (c.kind === 'webhook') {
        const { secret, ...rest } = c;
        return { ...rest, secret_set: secret !== undefined };
      }
      if (c.kind === 'email') {
        const { password, ...rest } = c;
        return { ...rest, password_set: password !== undefined };
      }
      return c;
    }),
  };
}

/** Parse a document sent to be saved; secrets left out are taken from `stored` (the channel of that name). */
export function parseSettings(input: unknown, stored: NotificationSettings | null): NotificationSettings {
  const r = NotificationSettings.safeParse(stripFlags(input));
  if (!r.success) throw invalid(r.error);
  const before = new Map((stored?.channels ?? []).map((c) => [c.name, c]));
  const channels = r.data.channels.map((c) => {
    const old = before.get(c.name);
    if (c.kind === 'webhook' && c.secret === undefined && old?.kind === 'webhook' && old.secret !== undefined) return { ...c, secret: old.secret };
    if (c.kind === 'email' && c.password === undefined && old?.kind === 'email' && old.password !== undefined) return { ...c, password: old.password };
    return c;
  });
  return { ...r.data, channels };
}

/** `secret_set` / `password_set` are what a GET shows: sending the document back unchanged is accepted. */
function stripFlags(input: unknown): unknown {
  if (!input || typeof input !== 'object' || !Array.isArray((input as { channels?: unknown }).channels)) return input;
  const doc = input as { channels: unknown[] };
  return {
    ...doc,
    channels: doc.channels.map((c) => {
      if (!c || typeof c !== 'object') return c;
      const { secret_set: _s, password_set: _p, ...rest } = c as Record<string, unknown>;
      return rest;
    }),
  };
}

export function invalid(e: z.ZodError): LabError {
  const details = e.issues.map((i) => ({ field: i.path.join('.') || '(document)', message: i.message }));
  return new LabError('invalid_input', `Invalid notification settings: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`, details);
}

export const EMPTY_SETTINGS: NotificationSettings = NotificationSettings.parse({});
