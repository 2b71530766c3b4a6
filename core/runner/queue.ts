/**
 * The runner's queue (DESIGN.md §5): tasks checked and queued (submit, prepare, enqueue), changed while they
 * wait (move, rename, delete), claimed one at a time by the loop, and the leases that keep two tasks here off
 * the same instruments. The queue's hold (after abort next-task, or a crash) is kept here too; releasing it is
 * an operator's control (core/runner/operator.ts).
 */
import { ownerOrAdmin, type PublicUser } from '../accounts/index.js';
import { LabError } from '../errors.js';
import { alerting, keys as alertKeys, open as openAlert } from '../notify/events.js';
import type { QueueTaskRow } from '../store/types.js';
import { checkConfigRows, repeatRow, type RowOptions } from '../workflow/config.js';
import { instrumentsOf, validateWorkflow } from '../workflow/validate.js';
import { placementProblem, type Drivers } from './placement.js';
import { instrumentsOfTask, type SharedState } from './state.js';
import { emitStatus, runningData, runningList, statusOf } from './status.js';
import type { TaskPayload, WorkflowPayload } from './tasks.js';

export type Direction = 'up' | 'down' | 'top' | 'bottom';
export const DIRECTIONS: readonly Direction[] = ['up', 'down', 'top', 'bottom'];

/**
 * Queue a workflow over config rows or a repeat count. The workflow is validated against the live deck and
 * the rows against its parameters now, so a task never starts with a problem that could be seen before.
 */
export async function submit(
  s: SharedState,
  input: { workflow: unknown; config?: unknown; repeat?: unknown; name?: unknown; userId: number | null; rowLabel?: RowOptions['label'] },
): Promise<QueueTaskRow> {
  return enqueue(s, { ...(await prepare(s, input)), createdBy: input.userId });
}

/**
 * The task a run would queue: the saved workflow checked against the lab's instruments, its rows (or repeat)
 * checked against its parameters, and named; nothing is queued (an approval shows it to a person first).
 */
export async function prepare(
  s: SharedState,
  input: { workflow: unknown; config?: unknown; repeat?: unknown; name?: unknown; rowLabel?: RowOptions['label'] },
  opts: { upfront?: boolean } = {},
): Promise<{ name: string; kind: 'workflow'; payload: WorkflowPayload }> {
  if (typeof input.workflow !== 'string' || !input.workflow) {
    throw new LabError('invalid_input', 'Say which workflow to run: "workflow" is required.', [{ field: 'workflow', message: 'required' }]);
  }
  const saved = await s.store.workflows.get(input.workflow);
  if (!saved) throw new LabError('not_found', `There is no workflow "${input.workflow}".`, [{ field: 'workflow', message: 'unknown workflow' }]);
  const definition = validateWorkflow(saved.definition, s.catalogue);
  const hasConfig = input.config !== undefined && input.config !== null && input.config !== '';
  const hasRepeat = input.repeat !== undefined && input.repeat !== null && input.repeat !== '';
  if (hasConfig === hasRepeat) {
    throw new LabError('invalid_input', 'Give either "config" (a list of parameter rows) or "repeat" (a number of iterations).', [
      { field: hasConfig ? 'repeat' : 'config', message: hasConfig ? 'give config or repeat, not both' : 'config or repeat is required' },
    ]);
  }
  const times = hasConfig ? 0 : typeof input.repeat === 'string' ? Number(input.repeat) : (input.repeat as number);
  const iterations: Pick<WorkflowPayload, 'rows' | 'repeat'> = hasConfig
    ? { rows: checkConfigRows(definition, input.config, { label: input.rowLabel }) }
    : { repeat: { times, row: repeatRow(definition, times) } };
  if (input.name !== undefined && (typeof input.name !== 'string' || input.name.length > 200)) {
    throw new LabError('invalid_input', 'name must be text of at most 200 characters.', [{ field: 'name', message: 'invalid' }]);
  }
  const count = iterations.rows?.length ?? times;
  const name = (typeof input.name === 'string' && input.name.trim()) || `${definition.name} × ${count}`;
  const payload: WorkflowPayload = { workflow: definition.name, version: saved.version, definition, ...iterations };
  // the safety guard's up-front check (core/safety/upfront.ts); the preflight asks for its verdict instead
  if (opts.upfront !== false) s.preflight?.(payload);
  return { name, kind: 'workflow', payload };
}

/** Queue a checked task (submit does the checking for workflows; core/campaign for campaigns). */
export async function enqueue(s: SharedState, t: { name: string; kind: QueueTaskRow['kind']; payload: TaskPayload; createdBy: number | null }): Promise<QueueTaskRow> {
  await checkPlacement(s, t.name, t.payload);
  if (s.beforeQueue) await s.beforeQueue(t);
  const task = await s.store.queue.add(t);
  if (s.takesOwnOnly) s.mine.add(task.id);
  s.tellOthers();
  s.emitQueue();
  s.notify();
  return task;
}

/** Refuse (409) a task no one labdeck on the database could start: core/runner/placement.ts. */
async function checkPlacement(s: SharedState, name: string, payload: TaskPayload): Promise<void> {
  let needs: string[];
  try {
    needs = instrumentsOf(payload.definition);
  } catch {
    return; // a payload that cannot be read: the host that takes it records why it failed
  }
  // who drives what, read now (a host that just started or stopped counts); this deck's unleased instruments are its own
  const self = { id: s.host.id, name: s.host.name };
  const drivers: Drivers = new Map((await s.store.hosts.catalogue()).map((i) => [i.name, { id: i.hostId, name: i.host }]));
  for (const n of needs) if (!drivers.has(n) && s.deck.has(n)) drivers.set(n, self);
  const problem = placementProblem(needs, drivers, { self, ownOnly: s.takesOwnOnly, task: `"${name}"` });
  if (problem) throw problem;
}

/**
 * Whether a queued task is running or starts at once: a free place (`parallel`), the queue not paused or
 * held, and no pending task ahead of it that could start instead (one whose instruments are free).
 */
export async function startsNow(s: SharedState, id: number): Promise<boolean> {
  if (s.tasks.some((t) => t.id === id)) return true;
  if (s.paused || s.held || s.leases.size >= s.parallel) return false;
  for (const t of (await s.store.queue.open()).filter((t) => t.status === 'pending')) {
    // free here: this labdeck drives its instruments and none is in use (a task another labdeck runs is "queued" here)
    const free = (await missing(s, t.id)).length === 0 && !clashes(s, await needsOf(s, t.id));
    if (t.id === id) return free;
    if (free) return false; // it would start first
  }
  return false;
}

/** Unfinished tasks in queue order, with the runner's flags; `running_task_ids`: the tasks this labdeck runs. */
export async function queueView(s: SharedState) {
  const tasks = await s.store.queue.open();
  return { tasks, paused: s.paused, queue_held: s.held, current_task_id: s.tasks[0]?.id ?? null, running_task_ids: s.tasks.map((t) => t.id) };
}

export async function getTask(s: SharedState, id: number): Promise<QueueTaskRow> {
  const task = await s.store.queue.get(id);
  if (!task) throw new LabError('not_found', `There is no queued task ${id}.`);
  return task;
}

function checkOwner(s: SharedState, task: QueueTaskRow, by: Pick<PublicUser, 'id' | 'role'> | undefined, what: string): void {
  if (by && !ownerOrAdmin(task.createdBy, by)) {
    throw new LabError('forbidden', `Task ${task.id} was queued by another user: only they or an admin may ${what} it.`, [{ field: 'id', message: 'not yours' }]);
  }
}

/** A task that may still be changed: not_found, then forbidden (`by` is not its owner or an admin), then conflict. */
async function pendingTask(s: SharedState, id: number, what: string, by?: Pick<PublicUser, 'id' | 'role'>): Promise<QueueTaskRow> {
  const task = await getTask(s, id);
  checkOwner(s, task, by, what === 'deleted' ? 'delete' : 'change');
  if (task.status === 'running' || task.status === 'interrupted') {
    throw new LabError('conflict', `Task ${id} is ${task.status === 'running' ? 'running' : 'interrupted'}: it cannot be ${what}. Abort it first.`, undefined, { state: statusOf(s).state });
  }
  if (task.status !== 'pending') throw new LabError('conflict', `Task ${id} has finished (${task.status}).`);
  return task;
}

/** Delete a pending task; `by`: the user asking (its owner or an admin may), none for the lab itself. */
export async function deleteTask(s: SharedState, id: number, by?: Pick<PublicUser, 'id' | 'role'>): Promise<void> {
  await s.serial(async () => {
    await pendingTask(s, id, 'deleted', by);
    await s.store.queue.delete(id);
  });
  s.emitQueue();
}

/**
 * The next pending task, marked running at once. Claims and deletes take turns (`serial`), so a task
 * deleted just as the runner takes it is either gone first or already running (409), never both.
 */
export async function claim(s: SharedState): Promise<QueueTaskRow | null> {
  if (s.host.lost) return null; // another host took this one for gone: it takes no more work
  const pending = (await s.store.queue.pending()).filter((id) => !s.leases.has(id));
  const candidates: number[] = [];
  for (const id of pending) if (await canRun(s, id)) candidates.push(id);
  const open = new Set(pending);
  for (const id of s.needs.keys()) if (!open.has(id)) s.needs.delete(id);
  const task = await s.store.queue.claim(s.host.id, candidates);
  // leased at once: a task the database says runs here is this runner's from its claim (store-fault.ts)
  if (task) s.leases.set(task.id, instrumentsOfTask(task));
  return task;
}

/** The instruments of a task's workflow; null when its payload cannot be read. */
export async function needsOf(s: SharedState, id: number): Promise<string[] | null> {
  if (!s.needs.has(id)) {
    const task = await s.store.queue.get(id);
    let needs: string[] | null = null;
    try {
      needs = instrumentsOf((task?.payload as TaskPayload).definition);
    } catch {
      // a payload that cannot be read: the host that takes it records why it failed
    }
    s.needs.set(id, needs);
  }
  return s.needs.get(id)!;
}

/**
 * A task this host can run now: every instrument of its workflow is in this deck, driven by no other host,
 * and leased by none of the tasks running here.
 */
async function canRun(s: SharedState, id: number): Promise<boolean> {
  if (s.takesOwnOnly && !s.mine.has(id)) return false;
  return (await missing(s, id)).length === 0 && !clashes(s, await needsOf(s, id));
}

/** The first running (or starting) task here that leases one of `instruments`, or null. */
export function clashes(s: SharedState, instruments: string[] | null, except?: number): { task: number; instrument: string } | null {
  for (const [task, leased] of s.leases) {
    if (task === except) continue;
    const shared = (instruments ?? []).find((n) => leased.includes(n));
    if (shared) return { task, instrument: shared };
  }
  return null;
}

/** The instruments a task needs that this host does not drive. */
export async function missing(s: SharedState, id: number): Promise<string[]> {
  return ((await needsOf(s, id)) ?? []).filter((n) => !s.deck.has(n) || s.othersHold.has(n));
}

export async function moveTask(s: SharedState, id: number, direction: unknown): Promise<void> {
  if (!DIRECTIONS.includes(direction as Direction)) {
    throw new LabError('invalid_input', `direction must be one of ${DIRECTIONS.join(', ')}, got ${JSON.stringify(direction)}.`, [{ field: 'direction', message: 'up, down, top or bottom' }]);
  }
  await pendingTask(s, id, 'moved');
  await s.store.queue.move(id, direction as Direction);
  s.emitQueue();
}

export async function renameTask(s: SharedState, id: number, name: unknown, by?: Pick<PublicUser, 'id' | 'role'>): Promise<void> {
  if (typeof name !== 'string' || !name.trim() || name.length > 200) {
    throw new LabError('invalid_input', 'new_name must be 1-200 characters of text.', [{ field: 'new_name', message: 'required, at most 200 characters' }]);
  }
  checkOwner(s, await getTask(s, id), by, 'rename');
  await s.store.queue.update(id, { name: name.trim() });
  const running = s.tasks.find((t) => t.id === id);
  if (running) running.task = { ...running.task, name: name.trim() };
  s.emitQueue();
  emitStatus(s);
}

/** Hold the queue because of this task (aborted, or interrupted): a decision about it, not a lab-wide flag. */
export async function hold(s: SharedState, taskId: number) {
  s.setHeld(true);
  const ctx = {
    host: s.host.name,
    task_id: taskId,
    run_id: s.tasks.find((t) => t.id === taskId)?.run.id ?? null,
    message: `The queue is held after task ${taskId} was aborted: release it to let the next task start.`,
  };
  await alerting(s.store, [openAlert('queue_held', alertKeys.queueHeld(taskId), ctx)], (tx) => tx.queue.update(taskId, { holdsQueue: true }));
  // a read of the database that began while this was being written may have found no hold: it is older
  s.setHeld(true);
}

/** Whether any task holds the queue (set by any host). */
export async function refreshHeld(s: SharedState) {
  const version = s.heldVersion;
  try {
    const held = (await s.store.queue.holding()).length > 0;
    if (version === s.heldVersion) s.held = held; // else this host changed it meanwhile: that is newer
  } catch {
    // the store is failing: the loop reports it
  }
}

/**
 * An interrupted task can go on (retry, skip) or end (abort) here: a free place among the `parallel`
 * tasks, and none of its instruments leased by a running task.
 */
export async function checkPlaceFor(s: SharedState, taskId: number): Promise<void> {
  // a task the store cut off keeps its own place and instruments: they count for it, not against it
  if ([...s.leases.keys()].filter((id) => id !== taskId).length >= s.parallel) {
    throw new LabError(
      'conflict',
      `This labdeck runs ${s.parallel === 1 ? 'one task at a time' : `${s.parallel} tasks at once`} and is running ${runningList(s)}: decide about task ${taskId} when one has ended.`,
      undefined,
      { state: statusOf(s).state, running: runningData(s) },
    );
  }
  const clash = clashes(s, await needsOf(s, taskId), taskId);
  if (clash)
    throw new LabError(
      'conflict',
      `Task ${taskId} needs ${clash.instrument}, which task ${clash.task} is using: decide about it when that task has ended.`,
      [{ field: clash.instrument, message: `in use by task ${clash.task}` }],
      { state: statusOf(s).state },
    );
}
