/**
 * Operations on notifications (DESIGN.md §17, §15; docs/notifications.md): the lab's channels and watchdog
 * (admins read and replace them, audited `notifications.save`; a test message per channel), what waits for a
 * person now and each channel's health, each user's own subscription, and the timing a status or `lab run`
 * shows (steps overdue, a run's ETA). The outbox and its deliverer (core/notify) do the sending.
 */
import { LabError } from '../errors.js';
import type { OutboxRow } from '../store/types.js';
import type { Caller } from './caller.js';
import { audit, type Lab } from './lab.js';

const admin = (caller: Caller, what: string) => {
  if (caller.role !== 'admin') throw new LabError('forbidden', `Only an admin ${what}.`);
};
const signedIn = (caller: Caller): number => {
  if (caller.userId === null) throw new LabError('unauthenticated', "Log in first: a subscription is an account's.");
  return caller.userId;
};

export function notificationOperations(lab: Pick<Lab, 'notifications' | 'store'>) {
  const n = lab.notifications;
  const ops = {
    /** The settings as an admin reads them (secrets only say whether they are set). */
    view(): Promise<unknown> {
      return n.view();
    },

    /** Per channel: waiting, failing, dead, the last error and delivery. */
    health() {
      return n.health();
    },

    /** What waits for a person now: the open alerts. */
    attention(): Promise<OutboxRow[]> {
      return n.attention();
    },

    /** The latest events and resolutions. */
    recent(limit = 50): Promise<OutboxRow[]> {
      return n.recent(limit);
    },

    /** Replace the settings (admins): validated, secrets left out kept; audited with the channels it names. */
    async save(caller: Caller, doc: unknown): Promise<unknown> {
      admin(caller, 'sets the notification channels');
      const saved = await n.save(doc);
      const channels = ((saved as { channels?: { name: string; kind: string }[] }).channels ?? []).map((c) => `${c.name} (${c.kind})`);
      await audit(lab, caller, 'notifications.save', { channels });
      return saved;
    },

    /** Replace the settings from their JSON text (the page's form): not JSON is a 400 naming `document`. */
    saveText(caller: Caller, text: string): Promise<unknown> {
      let doc: unknown;
      try {
        doc = JSON.parse(text);
      } catch (e) {
        throw new LabError('invalid_input', `The settings are not JSON: ${e instanceof Error ? e.message : String(e)}`, [{ field: 'document', message: 'not JSON' }]);
      }
      return ops.save(caller, doc);
    },

    /** A test message to one channel, now (not through the outbox): once it arrived, or why not. */
    test(caller: Caller, channel: string): Promise<{ channel: string; sent: true }> {
      admin(caller, 'sends a test message');
      return n.test(channel, caller.name);
    },

    /** The caller's own subscription (null: none). */
    subscription(caller: Caller) {
      return n.subscription(signedIn(caller));
    },

    /** Set the caller's subscription: an address and the events of their own runs; an empty address ends it. */
    subscribe(caller: Caller, input: { email: string; events?: string[] }) {
      const email = input.email.trim();
      return n.subscribe(signedIn(caller), email === '' ? null : { email, ...(input.events ? { events: input.events } : {}) });
    },

    /** The running steps' expected ends (overdue or not) and each run's ETA (what the status adds). */
    timing(runIds: number[]) {
      return n.timing(runIds);
    },

    /** A run's ETA from past runs of its workflow (null: none yet). */
    runEta(runId: number) {
      return n.runEta(runId);
    },
  };
  return ops;
}

export type NotificationOperations = ReturnType<typeof notificationOperations>;
