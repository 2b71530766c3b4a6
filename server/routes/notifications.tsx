/**
 * Notifications (core/notify, docs/notifications.md): the lab's channels and watchdog (admins), a test
 * message per channel, what waits for a person now and which channel is dead; and each user's own
 * subscription by email to events of their own runs.
 */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { EVENTS } from '../../core/notify/index.js';
import { LabError } from '../../core/errors.js';
import type { OutboxRow } from '../../core/operations/index.js';
import type { Runtime } from '../../core/runtime.js';
import { callerOf } from '../caller.js';
import { ctxOf } from '../context.js';
import { error, json, pageOrJson, redirect } from '../api-doc.js';
import { statusOf, url } from '../http.js';
import { failed, redirectTo, respond } from '../respond.js';
import { handle, route } from '../route.js';
import { routeGroup } from '../catalogue.js';
import { NotificationsPage, SubscriptionPage } from '../views/notifications.js';

const SECTION = 'Notifications';
const FORMAT = z.object({
  format: z.enum(['json', 'html']).optional().describe('json or html: overrides the Accept header'),
  saved: z.string().optional().describe('Say that the settings were saved (where saving leads)'),
  tested: z.string().optional().describe('Say that a test message went to this channel (where the test leads)'),
});

export const NOTIFICATION_ROUTES = {
  page: route({
    method: 'GET',
    path: '/notifications',
    section: SECTION,
    summary: "The lab's notification channels and watchdog (secrets are never shown), what waits for a person now, and each channel's health",
    operationId: 'notifications',
    access: 'admin',
    query: FORMAT,
    responses: { 200: pageOrJson('The page, or { settings, health, attention, recent }', 'Notifications') },
  }),
  put: route({
    method: 'PUT',
    path: '/notifications',
    section: SECTION,
    summary: 'Replace the notification settings: { channels: [{ name, kind: webhook|email|slack, events, …its fields }], watchdog: { factor, mad_factor, floor_s, min_samples } }',
    operationId: 'setNotifications',
    access: 'admin',
    description: "A secret (a webhook's `secret`, an SMTP `password`) left out keeps the one stored for the channel of that name; GET answers `secret_set` / `password_set` instead.",
    body: {
      name: 'NotificationSettingsBody',
      kinds: ['json'],
      schema: z.object({
        channels: z
          .array(z.looseObject({ name: z.unknown(), kind: z.unknown() }))
          .optional()
          .describe('Each { name, kind: webhook | email | slack, events, …its fields } (docs/notifications.md)'),
        watchdog: z.looseObject({}).optional().describe('{ factor, mad_factor, floor_s, min_samples } (defaults 3, 5, 10, 5)'),
        lab: z.unknown().optional().describe("The lab's name in every message"),
        base_url: z.unknown().optional().describe('Where people reach this labdeck, for the links'),
      }),
    },
    responses: { 200: json('The settings as stored (secrets left out)', 'NotificationSettings'), 400: error('A field that does not fit (named) or an unknown one') },
  }),
  save: route({
    method: 'POST',
    path: '/notifications',
    section: SECTION,
    summary: "The page's form: the settings document as JSON text",
    operationId: 'saveNotifications',
    access: 'admin',
    body: { name: 'NotificationSettingsForm', kinds: ['form'], schema: z.object({ document: z.string().max(200_000).describe('The settings document, JSON') }) },
    responses: { 302: redirect('Back to the page'), 400: error('Not JSON, or a field that does not fit (named)') },
  }),
  test: route({
    method: 'POST',
    path: '/notifications/test',
    section: SECTION,
    summary: 'Send a test message to one channel now; answers once it arrived (or why not)',
    operationId: 'testNotification',
    access: 'admin',
    body: { name: 'NotificationTest', schema: z.object({ channel: z.string().min(1).max(64).describe('The channel name') }) },
    responses: {
      200: json('{ channel, sent: true }', 'NotificationTested'),
      302: redirect('Back to the page (forms)'),
      404: error('No such channel'),
      502: error('The channel refused it or did not answer: why'),
    },
  }),
  me: route({
    method: 'GET',
    path: '/notifications/me',
    section: SECTION,
    summary: 'Your own subscription: mail about events of your own runs',
    operationId: 'mySubscription',
    query: FORMAT,
    responses: { 200: pageOrJson('The page, or { subscription: { email, events } | null, events }', 'NotificationSubscription') },
  }),
  subscribe: route({
    method: 'PUT',
    path: '/notifications/me',
    section: SECTION,
    summary: 'Set your subscription: { email, events }; { email: "" } ends it',
    operationId: 'subscribe',
    body: {
      name: 'SubscriptionBody',
      kinds: ['json'],
      schema: z.object({
        email: z.string().max(255).describe('Your address; empty ends the subscription'),
        events: z.array(z.enum(EVENTS)).optional().describe('The events of your own runs (default: all but run_completed)'),
      }),
    },
    responses: { 200: json('Your subscription', 'NotificationSubscription'), 400: error('Not an email address, or an unknown event (named)') },
  }),
  subscribeForm: route({
    method: 'POST',
    path: '/notifications/me',
    section: SECTION,
    summary: "The subscription page's form: email and the events ticked",
    operationId: 'subscribeForm',
    body: { name: 'SubscriptionForm', kinds: ['form'], schema: z.object({ email: z.string().max(255), events: z.array(z.enum(EVENTS)).optional() }) },
    responses: { 302: redirect('Back to the page'), 400: error('Not an email address (named)') },
  }),
};

/** An outbox row as the API shows it. */
const rowJson = (r: OutboxRow) => ({ id: r.alertId, event: r.event, state: r.state, task_id: r.taskId, run_id: r.runId, time: r.createdAt.toISOString(), ...r.payload });

export function notificationRoutes(runtime: Runtime): Router {
  const r = Router();
  const n = runtime.ops.notifications;
  const R = NOTIFICATION_ROUTES;
  const caller = (req: Request) => callerOf(req, 'app');

  const overview = async () => ({
    settings: await n.view(),
    health: (await n.health()).map((h) => ({
      channel: h.channel,
      waiting: h.waiting,
      failing: h.failing,
      dead: h.dead,
      last_error: h.lastError,
      last_delivered_at: h.lastDeliveredAt?.toISOString() ?? null,
    })),
    attention: (await n.attention()).map(rowJson),
    recent: (await n.recent(30)).map(rowJson),
  });

  const page = async (req: Request, res: Response, extra: { error?: LabError; notice?: string; draft?: string } = {}, status = 200) => {
    const o = await overview();
    await respond(req, res, {
      json: o,
      html: async () => <NotificationsPage ctx={await ctxOf(req)} {...o} events={[...EVENTS]} error={extra.error} notice={extra.notice} draft={extra.draft} />,
      htmlStatus: status,
    });
  };

  handle(r, R.page, async (req, res, { query }) => {
    const notice = query.saved !== undefined ? 'The notification settings are saved.' : query.tested ? `A test message went to "${query.tested}".` : undefined;
    await page(req, res, { notice });
  });

  handle(r, R.put, async (req, res, { body }) => {
    res.json(await n.save(caller(req), body));
  });

  handle(r, R.save, async (req, res, { body }) => {
    try {
      await n.saveText(caller(req), body.document);
      res.redirect(302, url(req, '/notifications?saved'));
    } catch (e) {
      await failed(req, res, e, (err) => page(req, res, { error: err, draft: body.document }, statusOf(err)));
    }
  });

  handle(r, R.test, async (req, res, { body }) => {
    try {
      await redirectTo(req, res, url(req, `/notifications?tested=${encodeURIComponent(body.channel)}`), await n.test(caller(req), body.channel));
    } catch (e) {
      await failed(req, res, e, (err) => page(req, res, { error: err }, statusOf(err)));
    }
  });

  const mine = async (req: Request, res: Response, extra: { error?: LabError; notice?: string } = {}, status = 200) => {
    const subscription = await n.subscription(caller(req));
    await respond(req, res, {
      json: { subscription, events: EVENTS },
      html: async () => <SubscriptionPage ctx={await ctxOf(req)} subscription={subscription} events={[...EVENTS]} error={extra.error} notice={extra.notice} />,
      htmlStatus: status,
    });
  };

  handle(r, R.me, async (req, res, { query }) => mine(req, res, { notice: query.saved !== undefined ? 'Your subscription is saved.' : undefined }));
  handle(r, R.subscribe, async (req, res, { body }) => {
    res.json({ subscription: await n.subscribe(caller(req), body), events: EVENTS });
  });
  handle(r, R.subscribeForm, async (req, res, { body }) => {
    try {
      await n.subscribe(caller(req), { email: body.email, events: body.events ?? [] });
      res.redirect(302, url(req, '/notifications/me?saved'));
    } catch (e) {
      await failed(req, res, e, (err) => mine(req, res, { error: err }, statusOf(err)));
    }
  });

  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const NOTIFICATIONS_GROUP = routeGroup({ name: 'notifications', routes: NOTIFICATION_ROUTES, mount: notificationRoutes });
