/**
 * Wires notifications into a runtime: this host's deliverer, and the watchdog fed by the runner's step and
 * run events (it reads them; it writes only its own alerts and log lines).
 */
import type { Deck } from '../deck/index.js';
import type { Runner, RunnerEvent } from '../runner/index.js';
import type { Store } from '../store/types.js';
import { Notifications } from './index.js';
import { SafetyAlerts } from './safety.js';
import { Watchdog } from './watchdog.js';

/** With `deck`, its safety guard's refusals of direct calls raise safety_blocked (core/notify/safety.ts). */
export function startNotifications(o: { store: Store; runner: Runner; deck?: Deck; deliver?: boolean }): Notifications {
  const n = new Notifications(o.store, o.runner.host.id, { deliver: o.deliver, onError: () => undefined });
  const watchdog = new Watchdog({ store: o.store, host: o.runner.host.name, settings: async () => (await n.settings()).watchdog });
  n.watchdog = watchdog;
  const tasks = new Map<number, { taskId: number; userId: number | null }>();
  const quiet = (p: Promise<unknown>) => void p.catch(() => undefined);
  o.runner.on('event', (e: RunnerEvent) => {
    if (e.host) return; // another labdeck's run, relayed: its own watchdog watches it
    if (e.type === 'run') {
      if (e.status === 'running') {
        tasks.set(e.run_id, { taskId: e.task_id, userId: null });
        quiet(watchdog.runStarted(e.run_id));
      } else {
        tasks.delete(e.run_id);
        watchdog.runEnded(e.run_id);
      }
    } else if (e.type === 'step' && e.kind === 'call' && e.step_id !== undefined) {
      if (e.state === 'start') {
        const t = tasks.get(e.run_id);
        quiet(watchdog.stepStarted({ stepId: e.step_id, runId: e.run_id, taskId: t?.taskId ?? null, path: e.path, instrument: e.instrument ?? '', method: e.method ?? '' }));
      } else quiet(watchdog.stepEnded(e.step_id));
    }
  });
  if (o.deck) {
    const safety = new SafetyAlerts(o.store, o.runner.host.name);
    n.safety = safety;
    o.deck.guardEvents = safety;
    void safety.load().catch(() => undefined);
  }
  watchdog.start();
  n.start();
  const close = n.close.bind(n);
  n.close = async (flushMs?: number) => {
    watchdog.stop();
    if (o.deck?.guardEvents === n.safety) o.deck!.guardEvents = null;
    await n.safety?.idle();
    await close(flushMs);
  };
  return n;
}
