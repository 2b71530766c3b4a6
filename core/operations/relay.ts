/**
 * The relay between labdecks on one database as a door (docs/architecture.md): what another labdeck asks of
 * this one (a run control on a task this one runs, a direct call to an instrument this one drives, the value
 * of an input step a task here waits for) is served by the same operation a door here calls, with a `relay`
 * caller: done here and never sent on, with the checks of the operation and below (the queue's rules, the
 * instrument's lock, its arguments, the safety guard), and no second audit line (the labdeck the request came
 * in through wrote it). The wire shapes stay those of core/runner/relay.ts.
 */
import { LabError } from '../errors.js';
import { MESSAGE_LIMIT } from '../runner/relay.js';
import { OUTPUT_INLINE, RUN_CONTROLS, type RunControlName } from '../runner/index.js';
import { RELAYED, relayCaller } from './caller.js';
import { done, type Lab } from './lab.js';
import type { InstrumentOperations } from './instruments.js';
import type { RunOperations } from './runs.js';

/** Serve the runner's relayed requests through the operations (set once, when the operations are made). */
export function serveRelayed(lab: Pick<Lab, 'runner'>, ops: { runs: RunOperations; instruments: InstrumentOperations }): void {
  const served = lab.runner.served;

  served.control = async (body) => {
    const m = (body ?? {}) as { control?: unknown; task_id?: unknown; by?: unknown; user_id?: unknown };
    if (!RUN_CONTROLS.includes(m.control as RunControlName)) throw new LabError('invalid_input', `No run control "${String(m.control)}".`);
    // an older labdeck sends no `by`: taken for an agent's only when it says so
    const caller = relayCaller({ userId: typeof m.user_id === 'number' ? m.user_id : null, by: m.by === 'agent' ? 'agent' : 'person' });
    return done(await ops.runs.control(caller, m.control as RunControlName, typeof m.task_id === 'number' ? m.task_id : undefined));
  };

  served.call = async (body) => {
    const m = (body ?? {}) as { instrument?: unknown; method?: unknown; args?: unknown; user_id?: unknown };
    if (typeof m.instrument !== 'string' || typeof m.method !== 'string') throw new LabError('invalid_input', 'A call names its instrument and method.');
    const caller = relayCaller({ userId: typeof m.user_id === 'number' ? m.user_id : null });
    const { task_id, output } = done(await ops.instruments.call(caller, { instrument: m.instrument, method: m.method, args: m.args }));
    // a large output stays in its record: the asker reads it there
    return Buffer.byteLength(JSON.stringify(output) ?? '') > Math.min(OUTPUT_INLINE, MESSAGE_LIMIT) ? { task_id, in_record: true } : { task_id, output };
  };

  served.input = async (body) => {
    const m = (body ?? {}) as { task_id?: unknown; value?: unknown; by?: { id?: unknown; username?: unknown } | null };
    const by = m.by && typeof m.by.username === 'string' ? { userId: typeof m.by.id === 'number' ? m.by.id : null, name: m.by.username } : { name: RELAYED };
    return ops.runs.input(relayCaller(by), m.value, typeof m.task_id === 'number' ? m.task_id : undefined);
  };
}
