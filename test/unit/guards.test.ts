/**
 * `lab serve`'s process guards (issue 26 item 1): an unhandled rejection or a rare uncaught exception is
 * logged and serving goes on; a burst of exceptions (something broken in a loop) stops the process.
 */
import { jest } from '@jest/globals';
import { faultHandlers, guardProcess, MAX_FAULTS, FAULT_WINDOW_MS } from '../../cli/guards.js';

describe('the process guards of lab serve', () => {
  it('log a rejection nobody handled, and go on', () => {
    const lines: string[] = [];
    const fatal = jest.fn();
    faultHandlers((l) => lines.push(l), fatal).onRejection(new Error('nobody waited'));
    expect(lines[0]).toMatch(/rejected and nobody handled it \(serving goes on\): Error: nobody waited/);
    expect(fatal).not.toHaveBeenCalled();
  });

  it(`go on after up to ${MAX_FAULTS} uncaught exceptions a minute, and stop on more`, () => {
    const lines: string[] = [];
    const fatal = jest.fn();
    let t = 0;
    const h = faultHandlers(
      (l) => lines.push(l),
      fatal,
      () => t,
    );
    for (let i = 0; i < MAX_FAULTS; i++) h.onException(new TypeError(`fault ${i}`));
    expect(fatal).not.toHaveBeenCalled();
    t += FAULT_WINDOW_MS + 1; // the old ones are out of the window: one more is rare again
    h.onException(new TypeError('later'));
    expect(fatal).not.toHaveBeenCalled();
    for (let i = 0; i < MAX_FAULTS; i++) h.onException(new TypeError(`burst ${i}`));
    expect(fatal).toHaveBeenCalledWith('too many uncaught exceptions');
    expect(lines.at(-1)).toMatch(/uncaught exceptions within 60 s, stopping/);
  });

  it('are installed and removed as a pair', () => {
    const before = [process.listenerCount('unhandledRejection'), process.listenerCount('uncaughtException')];
    const off = guardProcess(() => undefined);
    expect([process.listenerCount('unhandledRejection'), process.listenerCount('uncaughtException')]).toEqual(before.map((n) => n + 1));
    off();
    expect([process.listenerCount('unhandledRejection'), process.listenerCount('uncaughtException')]).toEqual(before);
  });
});
