/**
 * The runner among the other labdecks on its database (DESIGN.md §12): the instruments each host drives (this
 * deck's leased, the others' catalogued, the ones another host holds offline here), the tasks the others run
 * (`elsewhere`, with the state they relay), their live events heard here and this one's sent to them, and what
 * is relayed to the labdeck that owns a task or an instrument: a run control, an input's value, a direct call.
 * The wire is core/runner/relay.ts.
 */
import type { InstrumentSchema } from '../contracts/index.js';
import { LabError } from '../errors.js';
import { MESSAGE_LIMIT, type Peer } from './relay.js';
import type { GivenBy } from './input.js';
import type { ControlBy, ElsewhereTask, LiveTask, RunControlName, RunnerEvent, RunnerStatus, SharedState } from './state.js';
import { emitStatus, emitStatusSoon } from './status.js';

/** How long a control sent to the host that runs the task waits for its answer once that host has it. */
const CONTROL_MS = 30_000;
/** A direct call's output larger than this comes back from the host that made it through its record. */
export const OUTPUT_INLINE = 4_000;

/** This labdeck's live events go to the others (its status as its own running tasks' state). */
export function publishLive(s: SharedState, e: RunnerEvent): void {
  if (e.host !== undefined || e.type === 'queue') return;
  if (e.type !== 'status') return s.relay.publish(e);
  const running: (LiveTask & { task_id: number })[] = e.status.running.map((t) => ({
    task_id: t.id,
    state: t.state,
    paused: t.paused,
    progress: t.progress,
    failed_step: t.failed_step,
    waiting: t.waiting,
    input: t.input,
  }));
  s.relay.publish({ type: 'status', running });
}

/**
 * Lease the deck's instruments; the ones another live host drives go offline here, naming that host, and
 * come back when it lets them go. Runs one at a time (the deck's change events call it too).
 */
export function syncInstruments(s: SharedState): Promise<void> {
  const run = async () => {
    const mine = s.deck.list().map(({ offline: _offline, ...schema }) => ({ name: schema.name, schema: { ...schema, host: schema.host ?? s.host.name } }));
    const taken = await s.host.lease(mine);
    const holds = new Map(taken.map((t) => [t.name, t.host.name]));
    const freed = [...s.othersHold.keys()].filter((n) => !holds.has(n) && s.deck.has(n));
    s.othersHold = holds;
    for (const host of new Set(holds.values())) {
      s.deck.setOffline(
        [...holds].filter(([, h]) => h === host).map(([n]) => n),
        `driven by ${host}, another labdeck on this database (not by this one, ${s.host.name})`,
      );
    }
    if (freed.length) s.deck.setOffline(freed, null);
    // instruments this labdeck has just taken: a direct call left running on them by a labdeck that stopped
    // during it is in doubt (taken from another labdeck: any of its calls; else one begun before this one started)
    const ours = mine.map((i) => i.name).filter((n) => !holds.has(n));
    const gained = ours.filter((n) => !s.drivenHere.has(n) && !freed.includes(n));
    s.drivenHere = new Set(ours);
    await directCallsInDoubt(s, freed);
    await directCallsInDoubt(s, gained, s.since);
    const others = (await s.store.hosts.catalogue()).filter((i) => i.hostId !== s.host.id);
    s.drivers = new Map(others.map((i) => [i.name, { id: i.hostId, name: i.host }]));
    s.remote = new Map(others.filter((i) => !s.deck.has(i.name)).map((i) => [i.name, { ...(i.schema as InstrumentSchema), host: (i.schema as InstrumentSchema).host ?? i.host }]));
  };
  s.syncing = s.syncing.then(run, run);
  return s.syncing;
}

/** What a direct call left `running` by a labdeck that stopped during it says (its record, in-doubt). */
export const DIRECT_CALL_IN_DOUBT = 'labdeck stopped during this call: it may or may not have reached the instrument (it is not sent again by itself)';

/**
 * Direct calls (no run) to `instruments`, which this labdeck has just taken (at its start, from a labdeck that
 * stopped, or connected since), left `running` (begun before `before`): the process that made them stopped
 * during them, so they are in-doubt, as a run's in-flight step is.
 */
async function directCallsInDoubt(s: SharedState, instruments: string[], before?: Date): Promise<void> {
  if (instruments.length) await s.store.steps.markInDoubt(instruments, DIRECT_CALL_IN_DOUBT, before);
}

/** Instruments among `names` that another labdeck drives, with the host that does. */
export function heldElsewhere(s: SharedState, names: string[]): { name: string; host: string }[] {
  return names.filter((n) => s.othersHold.has(n)).map((n) => ({ name: n, host: s.othersHold.get(n)! }));
}

export async function refreshElsewhere(s: SharedState) {
  const running = (await s.store.queue.open()).filter((t) => t.status === 'running' && t.hostId !== null && t.hostId !== s.host.id);
  const names = running.length ? new Map((await s.store.hosts.live()).map((h) => [h.id, h.name])) : new Map<string, string>();
  const elsewhere = running.map((t) => ({ task_id: t.id, name: t.name, run_id: t.runId, host: names.get(t.hostId!) ?? 'a labdeck that has stopped' }));
  s.elsewhereHost = new Map(running.map((t) => [t.id, t.hostId!]));
  // what stopped hosts relayed is let go (the others replace theirs with each status they send)
  for (const id of s.liveElsewhere.keys()) if (names.size && !names.has(id)) s.liveElsewhere.delete(id);
  if (JSON.stringify(elsewhere) === JSON.stringify(s.elsewhere)) return;
  s.elsewhere = elsewhere;
  emitStatus(s);
}

/** Send a control to the host running `task`; its answer, or undefined when the database carries no messages. */
export function askControl(s: SharedState, task: ElsewhereTask, control: RunControlName, by: ControlBy): Promise<RunnerStatus | undefined> {
  const to = { id: s.elsewhereHost.get(task.task_id)!, name: task.host };
  // the task is named, so a labdeck running several acts on that one
  return s.relay.request<RunnerStatus>(to, 'control', { control, task_id: task.task_id, by }, `${control} of task ${task.task_id}`, CONTROL_MS);
}

/** Another labdeck's live event: its run's events go to this one's listeners marked with that host; its status updates `elsewhere`. */
export function heardLive(s: SharedState, e: Record<string, unknown>, from: Peer) {
  if (s.closed) return;
  if (e.type === 'status') {
    const running = Array.isArray(e.running) ? (e.running as (LiveTask & { task_id: number })[]) : [];
    if (running.length) s.liveElsewhere.set(from.id, new Map(running.map(({ task_id, ...t }) => [task_id, t])));
    else s.liveElsewhere.delete(from.id);
    if (s.elsewhere.length) emitStatusSoon(s);
    return;
  }
  s.emit({ ...e, host: from.name } as RunnerEvent);
}

/**
 * A direct call to one of the lab's instruments (the web app's and the API's): made here when this deck drives
 * it; when another labdeck on the database drives it (PostgreSQL), asked of that labdeck, which makes and
 * records it and whose answer comes back (the output and task_id, or its refusal as it gave it). On SQLite,
 * or when nobody drives it, as a call to this deck (an instrument another labdeck drives is offline here).
 */
export async function call(s: SharedState, instrument: string, method: string, args: unknown, opts: { userId: number | null }): Promise<{ taskId: number; output: unknown; host?: string }> {
  const there = s.drivers.get(instrument);
  if (there) {
    const answer = await s.relay.request<{ task_id: number; output?: unknown; in_record?: true }>(there, 'call', { instrument, method, args, user_id: opts.userId }, `${instrument}.${method}`);
    if (answer) {
      const output = answer.in_record ? ((await s.store.steps.get(answer.task_id))?.output ?? null) : answer.output;
      return { taskId: answer.task_id, output, host: there.name };
    }
    if (!s.deck.has(instrument)) {
      throw new LabError('unavailable', `${instrument} is driven by ${there.name}, another labdeck on this database: call it there.`, undefined, { instrument, host: there.name });
    }
  }
  return s.deck.call(instrument, method, args, opts);
}

/** A call another labdeck asks this one to make on its deck: made and recorded here; a large output stays in its record. */
export async function callAsked(s: SharedState, body: unknown): Promise<{ task_id: number; output?: unknown; in_record?: true }> {
  const m = (body ?? {}) as { instrument?: unknown; method?: unknown; args?: unknown; user_id?: unknown };
  if (typeof m.instrument !== 'string' || typeof m.method !== 'string') throw new LabError('invalid_input', 'A call names its instrument and method.');
  const { taskId, output } = await s.deck.call(m.instrument, m.method, m.args, { userId: typeof m.user_id === 'number' ? m.user_id : null });
  return Buffer.byteLength(JSON.stringify(output) ?? '') > Math.min(OUTPUT_INLINE, MESSAGE_LIMIT) ? { task_id: taskId, in_record: true } : { task_id: taskId, output };
}

/** Send an input step's value to the host running task `t`; its answer, or undefined when the database carries no messages. */
export function askInput(s: SharedState, t: ElsewhereTask, value: unknown, by: GivenBy | null): Promise<{ task_id: number; value: unknown; status: RunnerStatus } | undefined> {
  const to = { id: s.elsewhereHost.get(t.task_id)!, name: t.host };
  return s.relay.request<{ task_id: number; value: unknown; status: RunnerStatus }>(to, 'input', { task_id: t.task_id, value, by }, `input of task ${t.task_id}`, CONTROL_MS);
}
