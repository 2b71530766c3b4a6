/**
 * Waiting in tests: for a condition, never for a fixed time. `waitFor` polls a probe until it holds and gives
 * up after a bound (a failure names what it waited for, and the last value seen); `nextEvent` waits for one
 * event from an emitter. These are the only timers a test body uses (test/unit/no-fixed-sleep.test.ts).
 */
import type { EventEmitter } from 'node:events';

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Poll `probe` (every `every` ms) until it gives a truthy value, and return that value; throws after `ms`
 * naming `what`. The bound is a give-up, never the thing tested: a condition that holds returns at once.
 */
export async function waitFor<T>(probe: () => T | Promise<T>, what: string, ms = 10_000, every = 10): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}; last: ${JSON.stringify(v) ?? String(v)}`);
    await pause(every);
  }
}

/** Poll `get` until `ok` holds for its value, and return that value (the last one is in the give-up error). */
export async function waitForValue<T>(get: () => Promise<T> | T, ok: (v: T) => boolean, what: string, ms = 10_000, every = 10): Promise<T> {
  let last: T | undefined;
  try {
    await waitFor(async () => ok((last = await get())), what, ms, every);
  } catch (e) {
    throw new Error(`${(e as Error).message.replace(/; last: .*$/s, '')}; last: ${JSON.stringify(last)}`);
  }
  return last as T;
}

/** The next `name` event of `emitter` whose payload passes `match`; throws after `ms` naming it. */
export function nextEvent<T = unknown>(emitter: EventEmitter, name: string, match: (e: T) => boolean = () => true, ms = 10_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(name, on);
      reject(new Error(`no matching ${name} event within ${ms} ms`));
    }, ms);
    const on = (e: T) => {
      if (!match(e)) return;
      clearTimeout(timer);
      emitter.off(name, on);
      resolve(e);
    };
    emitter.on(name, on);
  });
}

/** Let the event loop run the work already queued (timers due now, I/O callbacks): one macrotask turn. */
export const turn = () => new Promise<void>((r) => setImmediate(r));
