/**
 * Input steps in the runner (issue 31): a run waits in the state `waiting_input` until a person gives the
 * value its step asks for (`POST /executions/input`, the run page's form, `lab run`'s prompt).
 *
 * Recorded as a step of the run (the steps table, like a call): `instrument` is INPUT_INSTRUMENT, `method`
 * the variable, `args` the prompt and schema. While it waits the record is `running` (so the attention list
 * of every labdeck on the database sees it, and a crash leaves it in-doubt); once given it is `ok`, its
 * output the value, its user the person who gave it and `ended_at` when. After a restart the runner resumes
 * such a run by itself (nothing was touched: asking again is safe), replaying its recorded steps, and it waits
 * for the same input again.
 *
 * Events: `{ type: 'input', state: 'waiting' | 'given', … }`. The notification `input_waiting` is written
 * with the waiting record and its log line, in one transaction (core/notify); its resolution with the record
 * that ends the wait (the value given, or none: the run aborted). A restart leaves it open: the resumed wait
 * opens the same key again, which adds nothing (one open alert per key).
 */
import type { PublicUser } from '../accounts/index.js';
import { LabError } from '../errors.js';
import { alerting, keys, open as openAlert, resolve as resolveAlert } from '../notify/events.js';
import type { AlertOp, StepRow, Store, TxStore } from '../store/types.js';
import { checkInputValue, describeInput, type InputSchema } from '../workflow/input.js';
import type { StepAt } from '../workflow/interpreter.js';
import type { Step } from '../workflow/model.js';
import { isStoreFault } from '../errors.js';
import { CallRecorder } from '../deck/recorder.js';
import { Shutdown, waiter, type TaskRun, type Waiter } from './execution.js';
import type { WaitingInput } from './status-schema.js';

/** The `instrument` of an input step's record: a name no instrument can have. */
export const INPUT_INSTRUMENT = '(input)';

export type InputStep = Extract<Step, { kind: 'input' }>;

/** Who gave a value. */
export type GivenBy = { id: PublicUser['id'] | null; username: string };

/** An input a run waits for, as the status shows it (declared once, as zod: status-schema.ts). */
export type { WaitingInput } from './status-schema.js';

/** A waiting input in a TaskRun: resolved with the value a person gave. */
export type InputWaiter = Waiter<{ value: unknown; by: GivenBy | null }> & { view: WaitingInput; step: InputStep };

/** What the runner hands this module: its store, its events and its log. */
export interface InputContext {
  store: Store;
  emit(e: InputEvent | StepEvent): void;
  /** A line of the run's log; `alerts` and `change` are written with it, in one transaction. */
  log(runId: number, level: 'info' | 'warn' | 'error', message: string, alerts?: AlertOp[], change?: (tx: TxStore) => Promise<void>): Promise<void>;
  emitStatus(): void;
  /** The labdeck running it, named in the alert. */
  host: string;
}

export type InputEvent = {
  type: 'input';
  state: 'waiting' | 'given';
  task_id: number;
  run_id: number;
  path: string;
  prompt: string;
  save_as: string;
  schema: InputSchema;
  value?: unknown;
  by?: string | null;
  at: string;
};
type StepEvent = {
  type: 'step';
  run_id: number;
  phase: StepAt['phase'];
  iteration: number | null;
  path: string;
  index: number;
  state: 'start' | 'ok' | 'error';
  kind: 'input';
  output?: unknown;
  error?: string;
  step_id?: number;
};

const show = (v: unknown) => (JSON.stringify(v) ?? String(v)).slice(0, 200);

/**
 * Wait for a person's value for the input step at `at` of the run of `c`; `doubt`: its record left in-doubt
 * by a restart (used again, so the record keeps one row for it). Resolves with the checked value.
 */
export async function waitForInput(ctx: InputContext, c: TaskRun, at: StepAt, step: InputStep, doubt: StepRow | null): Promise<unknown> {
  const runId = c.run.id;
  const since = new Date();
  const record = {
    runId,
    phase: at.phase,
    iteration: at.iteration,
    stepIndex: at.index,
    instrument: INPUT_INSTRUMENT,
    method: step.save_as,
    args: { prompt: step.prompt, schema: step.schema },
    userId: c.task.createdBy,
    startedAt: since,
  };
  // the one writer of step records (core/deck/recorder.ts), on the transaction each write is part of
  const recorder = (tx: TxStore) => new CallRecorder(tx.steps);
  const expects = describeInput(step.schema);
  const key = keys.input(runId, at.path);
  const alert = openAlert(
    'input_waiting',
    key,
    {
      host: ctx.host,
      task_id: c.id,
      run_id: runId,
      step: at.path,
      phase: at.phase,
      iteration: at.iteration,
      workflow: c.run.workflowName,
      prompt: step.prompt,
      save_as: step.save_as,
      expects,
      // where the value is given (the run page's form)
      link: '/app/executions/config',
      message: `Input waits at ${at.path}: ${step.prompt} (${step.save_as}: ${expects}). Give it on the run page.`,
    },
    { userId: c.task.createdBy },
  );
  let id = doubt?.id ?? 0;
  // the waiting record, its log line and input_waiting: one transaction
  await ctx.log(runId, 'info', `Waiting for input at ${at.path}: ${step.prompt} (${step.save_as}: ${expects}).`, [alert], async (tx) => {
    if (doubt) await recorder(tx).reopen(id);
    else id = await recorder(tx).begin(record);
  });
  const view: WaitingInput = {
    task_id: c.id,
    run_id: runId,
    path: at.path,
    prompt: step.prompt,
    save_as: step.save_as,
    schema: step.schema,
    expects,
    step_id: id,
    since: (doubt?.startedAt ?? since).toISOString(),
  };
  c.waitingInput = Object.assign(waiter<{ value: unknown; by: GivenBy | null }>(), { view, step });
  const base = { run_id: runId, phase: at.phase, iteration: at.iteration, path: at.path, index: at.index, kind: 'input' as const, step_id: id };
  ctx.emit({ type: 'step', ...base, state: 'start' });
  ctx.emit({ type: 'input', state: 'waiting', task_id: c.id, run_id: runId, path: at.path, prompt: step.prompt, save_as: step.save_as, schema: step.schema, at: view.since });
  ctx.emitStatus();
  try {
    const { value, by } = await c.waitingInput.promise;
    const at2 = new Date();
    const who = by?.username ?? 'an unknown person';
    await ctx.log(runId, 'info', `${step.save_as} = ${show(value)}, given by ${who}.`, [resolveAlert(key, `the value was given by ${who}`)], (tx) =>
      recorder(tx).complete(id, { output: value, status: 'ok', userId: by?.id ?? null, endedAt: at2 }),
    );
    ctx.emit({ type: 'step', ...base, state: 'ok', output: value });
    ctx.emit({
      type: 'input',
      state: 'given',
      task_id: c.id,
      run_id: runId,
      path: at.path,
      prompt: step.prompt,
      save_as: step.save_as,
      schema: step.schema,
      value,
      by: by?.username ?? null,
      at: at2.toISOString(),
    });
    return value;
  } catch (e) {
    // an abort ends the wait (its record says so); a shutdown leaves it running, to be asked again after the restart
    if (!(e instanceof Shutdown) && !isStoreFault(e)) {
      const why = e instanceof Error ? e.message : String(e);
      // the record that ends the wait and the resolution: one transaction (the run's end resolves it too)
      await alerting(ctx.store, [resolveAlert(key, `no value was given: ${why}`)], (tx) => recorder(tx).complete(id, { status: 'error', error: `no value given: ${why}` })).catch(() => undefined);
      ctx.emit({ type: 'step', ...base, state: 'error', error: e instanceof Error ? e.message : String(e) });
    }
    throw e;
  } finally {
    c.waitingInput = null;
    ctx.emitStatus();
  }
}

/**
 * Give the value an input of one of `tasks` waits for: `taskId` names the task (needed while several wait).
 * A value that does not fit is a 400 naming the field, and the run keeps waiting. Resolves with the value.
 */
export function giveInput(tasks: readonly TaskRun[], raw: unknown, opts: { taskId?: number; by: GivenBy | null; field?: string }): { task: TaskRun; value: unknown } {
  const waiting = tasks.filter((t) => t.waitingInput);
  let t: TaskRun | undefined;
  if (opts.taskId !== undefined) {
    t = tasks.find((x) => x.id === opts.taskId);
    if (t && !t.waitingInput) {
      throw new LabError('conflict', `Task ${t.id} waits for no input (it is ${t.state()}).`, [{ field: 'task_id', message: 'waits for no input' }], { state: t.state() });
    }
  } else if (waiting.length > 1) {
    throw new LabError(
      'conflict',
      `${waiting.length} tasks wait for input (${waiting.map((x) => `task ${x.id}: ${x.waitingInput!.view.prompt}`).join('; ')}): say which with task_id.`,
      [{ field: 'task_id', message: 'required while several tasks wait for input' }],
      {
        waiting: waiting.map((x) => x.waitingInput!.view),
      },
    );
  } else t = waiting[0];
  if (!t) return { task: undefined as unknown as TaskRun, value: undefined };
  const w = t.waitingInput!;
  const value = checkInputValue(w.step.schema, raw, { field: opts.field ?? (w.step.schema.type === 'file' ? 'file' : 'value'), name: w.step.save_as });
  w.resolve({ value, by: opts.by });
  return { task: t, value };
}

/** Whether a recorded step is an input step's. */
export const isInputRecord = (s: Pick<StepRow, 'instrument'>) => s.instrument === INPUT_INSTRUMENT;

/**
 * Whether a cut-off run's only in-doubt step is an input's wait (the last record of each step position):
 * nothing was in flight, asking again is safe, and the runner does so by itself, so its interruption waits
 * for no decision and raises no alert (core/notify/runs.ts `inputNotAskedAgain` when it cannot ask).
 */
export async function onlyInputInDoubt(store: Pick<TxStore, 'runSteps'>, runId: number | null): Promise<boolean> {
  if (runId === null) return false;
  const last = new Map<string, StepRow>();
  for (const s of await store.runSteps.list(runId, 1)) last.set(`${s.phase}|${s.iteration}|${s.stepIndex}`, s);
  const doubt = [...last.values()].filter((s) => s.status === 'in-doubt');
  return doubt.length > 0 && doubt.every(isInputRecord);
}
