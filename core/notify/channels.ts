/**
 * Sending to a channel: a signed JSON webhook, a Slack-compatible `{"text"}` webhook, or email over SMTP
 * (nodemailer). One message per event, or one digest for several (a flood, rate-limited), which says so.
 */
import { createHmac } from 'node:crypto';
import type { OutboxRow } from '../store/types.js';
import type { Channel } from './settings.js';

/** The fields every message carries (the webhook body as docs/notifications.md shows it). */
export interface Message {
  event: string;
  state: 'open' | 'resolved';
  id: string;
  lab: string;
  host: string | null;
  task_id: number | null;
  run_id: number | null;
  step: string | null;
  url: string | null;
  time: string;
  message: string;
  resolution?: string;
  [field: string]: unknown;
}

export interface Where {
  lab: string;
  /** The labdeck's address (no trailing slash), for the links; null when none is known. */
  baseUrl: string | null;
}

const TITLES: Record<string, string> = {
  step_failed: 'A step failed and waits for a decision',
  pause_waiting: 'A pause step waits for the operator',
  input_waiting: 'A step waits for input',
  approval_pending: "An agent's request waits for approval",
  safety_blocked: 'The safety guard blocked a call',
  run_interrupted: 'A run was interrupted and waits for a decision',
  host_lost: 'A host or agent was lost',
  queue_held: 'The queue is held',
  step_overdue: 'A step is overdue',
  campaign_finished: 'A campaign finished',
  run_completed: 'A run completed',
  test: 'A test message',
};

export function messageOf(e: OutboxRow, where: Where): Message {
  const p = e.payload;
  const runId = e.runId ?? (typeof p.run_id === 'number' ? p.run_id : null);
  const link = typeof p.link === 'string' ? p.link : runId !== null ? `/app/executions/records/${runId}` : null;
  const { message, resolution, ...rest } = p as { message?: unknown; resolution?: unknown };
  return {
    ...rest,
    event: e.event,
    state: e.state,
    id: e.alertId,
    lab: where.lab,
    host: typeof p.host === 'string' ? p.host : null,
    task_id: e.taskId ?? (typeof p.task_id === 'number' ? p.task_id : null),
    run_id: runId,
    step: typeof p.step === 'string' ? p.step : null,
    url: link && where.baseUrl ? `${where.baseUrl}${link}` : link,
    time: e.createdAt.toISOString(),
    message: typeof message === 'string' ? message : (TITLES[e.event] ?? e.event),
    ...(e.state === 'resolved' ? { resolution: typeof resolution === 'string' ? resolution : 'resolved' } : {}),
  };
}

/** One line: `[lab] RESOLVED step_failed: … (task 3, run 7) <url>`. */
export function lineOf(m: Message): string {
  const what = m.state === 'resolved' ? `Resolved (${m.resolution}): ${m.message}` : m.message;
  const ids = [m.task_id !== null ? `task ${m.task_id}` : '', m.run_id !== null ? `run ${m.run_id}` : '', m.step ? `step ${m.step}` : '', m.host ? `on ${m.host}` : ''].filter(Boolean).join(', ');
  return `[${m.lab}] ${m.event}${m.state === 'resolved' ? ' resolved' : ''}: ${what}${ids ? ` (${ids})` : ''}${m.url ? ` ${m.url}` : ''}`;
}

export function subjectOf(messages: Message[]): string {
  if (messages.length > 1) return `[${messages[0]!.lab}] ${messages.length} events (rate-limited into one digest)`;
  const m = messages[0]!;
  return `[${m.lab}] ${m.state === 'resolved' ? 'Resolved: ' : ''}${TITLES[m.event] ?? m.event}`;
}

/** The JSON a webhook gets: one event, or a digest `{ event: "digest", count, note, events }`. */
export function webhookBody(messages: Message[]): unknown {
  if (messages.length === 1) return messages[0];
  return {
    event: 'digest',
    count: messages.length,
    note: `${messages.length} events arrived faster than this channel's rate limit: they come together in this one digest.`,
    lab: messages[0]!.lab,
    time: new Date().toISOString(),
    events: messages,
  };
}

export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

const TIMEOUT_MS = 10_000;

/** Why a send failed, for the page: the message and its cause (`fetch failed: connect ECONNREFUSED …`). */
export function whyFailed(e: unknown): string {
  const text = (x: unknown) => (x && typeof x === 'object' && 'message' in x ? String((x as { message: unknown }).message) : String(x));
  const cause = e && typeof e === 'object' && 'cause' in e ? (e as { cause: unknown }).cause : undefined;
  return cause ? `${text(e)}: ${text(cause)}` : text(e);
}

/** The SMTP transport a mail goes through: the channel's own, or (a user's subscription) the lab's first email channel's. */
export interface MailVia {
  host: string;
  port: number;
  secure: boolean;
  user?: string;
  password?: string;
  from: string;
}

/** Send messages as one (a digest when several); throws with a message for the page when the channel fails. */
export async function send(channel: Channel | { kind: 'mailto'; name: string; to: string[]; via: MailVia }, messages: Message[], deliveryId: string): Promise<void> {
  if (channel.kind === 'webhook' || channel.kind === 'slack') {
    const body = JSON.stringify(
      channel.kind === 'webhook' ? webhookBody(messages) : { text: messages.length === 1 ? lineOf(messages[0]!) : `${subjectOf(messages)}\n${messages.map(lineOf).join('\n')}` },
    );
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'labdeck', 'x-labdeck-delivery': deliveryId };
    if (channel.kind === 'webhook') {
      headers['x-labdeck-event'] = messages.length === 1 ? messages[0]!.event : 'digest';
      if (channel.secret) headers['x-labdeck-signature'] = signature(channel.secret, body);
    }
    const res = await fetch(channel.url, { method: 'POST', headers, body, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'error' });
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) throw new Error(`${channel.url.replace(/\?.*$/, '')} answered ${res.status}`);
    return;
  }
  const via: MailVia = channel.kind === 'email' ? channel : channel.via;
  const { default: nodemailer } = await import('nodemailer'); // loaded when mail is first sent, not at start
  const transport = nodemailer.createTransport({
    host: via.host,
    port: via.port,
    secure: via.secure,
    ...(via.user ? { auth: { user: via.user, pass: via.password ?? '' } } : {}),
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: 30_000,
  });
  try {
    await transport.sendMail({
      from: via.from,
      to: channel.to,
      subject: subjectOf(messages),
      text: (messages.length > 1 ? `${messages.length} events came faster than this channel's rate limit allows; here they are together.\n\n` : '') + messages.map(lineOf).join('\n\n'),
      headers: { 'X-Labdeck-Delivery': deliveryId },
    });
  } finally {
    transport.close();
  }
}
