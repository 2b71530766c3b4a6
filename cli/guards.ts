/**
 * Process-level guards of `lab serve` (issue 26 item 1): a fault nobody caught must not take the lab down
 * where going on is safe. What "safe" means here:
 *
 * - An unhandled promise rejection is logged and serving goes on. A rejection is a value nobody waited for:
 *   whatever the failed operation changed, it changed before rejecting, and it would be the same had someone
 *   waited; its request or connection has its own error path (or a timeout) and its database writes are
 *   transactions, so nothing half-written is left for others.
 * - An uncaught exception is logged and serving goes on too, as long as such exceptions are rare: the code
 *   that threw was one event handler (one request's, one connection's), and every shared structure labdeck
 *   keeps (the deck, the runner, the store) is changed in steps that are each whole. When more than
 *   MAX_FAULTS come within FAULT_WINDOW_MS, something is broken in a loop and the process is no longer taken
 *   to be sound: it stops with exit code 1, for the service manager to start it again; a run it was doing is
 *   then recovered on start as an interrupted one (DESIGN.md §5), its in-flight step in doubt.
 * - Out of memory is not a JavaScript exception and is not caught: the process ends (and is restarted).
 */
export const MAX_FAULTS = 5;
export const FAULT_WINDOW_MS = 60_000;

const text = (e: unknown) => (e instanceof Error ? (e.stack ?? `${e.name}: ${e.message}`) : String(e));

/** What the guards do with a rejection and an exception (guardProcess installs them). */
export function faultHandlers(log: (line: string) => void, fatal: (reason: string) => void, now: () => number = Date.now) {
  const faults: number[] = [];
  const onRejection = (reason: unknown) => log(`labdeck: a promise was rejected and nobody handled it (serving goes on): ${text(reason)}`);
  const onException = (e: unknown) => {
    const t = now();
    faults.push(t);
    while (faults.length && t - faults[0] > FAULT_WINDOW_MS) faults.shift();
    if (faults.length > MAX_FAULTS) {
      log(`labdeck: ${faults.length} uncaught exceptions within ${FAULT_WINDOW_MS / 1000} s, stopping (the last: ${text(e)})`);
      fatal('too many uncaught exceptions');
      return;
    }
    log(`labdeck: an uncaught exception (serving goes on): ${text(e)}`);
  };
  return { onRejection, onException };
}

/** Install the guards; returns their removal. `fatal` is what happens after a burst (default: exit 1). */
export function guardProcess(log: (line: string) => void, fatal: (reason: string) => void = () => process.exit(1)): () => void {
  const { onRejection, onException } = faultHandlers(log, fatal);
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return () => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  };
}
