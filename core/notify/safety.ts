/**
 * safety_blocked for calls outside a run (docs/notifications.md): the deck tells this of each verdict of the
 * safety guard (core/deck `guardEvents`). A direct call the guard refuses opens one alert per instrument and
 * method (a second refusal while it is open adds nothing: each one is in the audit log); the next call of that
 * method the guard lets through, from any door or a run, resolves it. A safety file that is not valid blocks
 * every call: that is one alert (`safety_blocked:file`), resolved by the next call the guard lets through.
 *
 * A blocked step of a run is the runner's: it waits like a failed step, and its alert is opened and resolved
 * with the run's own writes (core/runner).
 *
 * A refused call changes no state of labdeck's but its audit line (written by the guard), so the alert is
 * written on its own right after the refusal, in the order the verdicts came.
 */
import { isLabError } from '../errors.js';
import type { GuardEvents } from '../deck/index.js';
import type { Store } from '../store/types.js';
import { alertOnly, keys, open, resolve } from './events.js';

const CALL = 'call:';
const FILE = keys.safety('file');
const callKey = (instrument: string, method: string) => keys.safety(`${CALL}${instrument}.${method}`);

export class SafetyAlerts implements GuardEvents {
  /** The keys of the direct-call blocks open now (this labdeck's: its deck is the one whose guard refused them). */
  private readonly opened = new Set<string>();
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly host: string,
  ) {}

  /** The blocks left open by an earlier run of this labdeck (read once at start). */
  async load(): Promise<void> {
    for (const r of await this.store.outbox.open(10_000)) {
      if (r.event === 'safety_blocked' && (r.key.startsWith(keys.safety(CALL)) || r.key === FILE)) this.opened.add(r.key);
    }
  }

  /** Resolves when every write asked for so far is done (tests). */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }

  blocked(c: Parameters<GuardEvents['blocked']>[0]): void {
    if (c.runId !== null) return; // a step of a run: the runner opens it with the run's writes
    const file = isLabError(c.error) && c.error.code === 'safety_file';
    if (!file && !(isLabError(c.error) && c.error.code === 'safety')) return; // a failing reading's own error is the call's
    const key = file ? FILE : callKey(c.instrument, c.method);
    this.opened.add(key);
    const err = c.error as { message: string; details?: unknown };
    const message = file
      ? `The safety file is not valid: every call is blocked (${err.message}). Fix it on the safety page.`
      : `${err.message} (a direct call${c.userId !== null ? ` by user ${c.userId}` : ''}). It is resolved by the next call of ${c.instrument}.${c.method} the guard lets through.`;
    const payload = {
      host: this.host,
      step: `${c.instrument}.${c.method}`,
      instrument: c.instrument,
      method: c.method,
      args: c.args,
      user_id: c.userId,
      problems: err.details ?? [],
      link: '/app/safety',
      message,
    };
    this.write(() => alertOnly(this.store, [open('safety_blocked', key, payload, { userId: c.userId })]));
  }

  allowed(instrument: string, method: string): void {
    if (this.opened.size === 0) return; // the common case: nothing to look up
    const done: string[] = [];
    for (const key of [callKey(instrument, method), FILE]) if (this.opened.delete(key)) done.push(key);
    if (done.length === 0) return;
    const note = `a call of ${instrument}.${method} was let through`;
    this.write(() =>
      alertOnly(
        this.store,
        done.map((k) => resolve(k, note)),
      ),
    );
  }

  private write(fn: () => Promise<void>): void {
    this.tail = this.tail.then(fn).catch(() => undefined);
  }
}
