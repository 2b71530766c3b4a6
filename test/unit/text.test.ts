/** No page says "..": a message built from another message ends its sentence once (core/text.ts). */
import { statusAlerts } from '../../core/runner/controls.js';
import { sentence } from '../../core/text.js';

describe('sentence', () => {
  it('adds a period only where the value does not already end a sentence', () => {
    expect(sentence('no cell')).toBe('no cell.');
    expect(sentence('ValueError: no cell.')).toBe('ValueError: no cell.');
    expect(sentence('Is it on?')).toBe('Is it on?');
    expect(sentence('{"steps":0,"last…')).toBe('{"steps":0,"last…'); // a value cut short
    expect(sentence('it said "stop."')).toBe('it said "stop."');
    expect(sentence('trailing space.  ')).toBe('trailing space.');
  });

  it('the failed-step and pause alerts of the run page never say ".."', () => {
    const alerts = statusAlerts({ busy: true, failed_step: { path: 'main[0]', error: 'The pump is jammed.' }, waiting: { message: 'Check the vial.' }, interrupted: null });
    expect(alerts.map((a) => a.text)).toEqual(['Step main[0] failed: The pump is jammed. Retry it, skip it, or abort the task.', 'Waiting at a pause step: Check the vial. Continue when it is done.']);
    const plain = statusAlerts({ busy: true, failed_step: { path: 'main[0]', error: 'jammed' }, waiting: null, interrupted: null });
    expect(plain[0]!.text).toBe('Step main[0] failed: jammed. Retry it, skip it, or abort the task.');
  });
});
