/**
 * The live view of `lab run` (ink): what the runner is doing, drawn from its events. Everything here is
 * pure — a reducer folds runner events into a `RunViewState`, the components draw a state, `keyAction`
 * maps a key to an operator action — so tests render any state to a string with ink's `renderToString`.
 * The one stateful piece, `LiveRun`, only subscribes to a `RunModel` and forwards keys.
 */
import { Box, render, Text, useInput, type Key } from 'ink';
import { useSyncExternalStore } from 'react';
import { availableControls, CONTROL_LABEL, liveFlags, SITUATION, situationOf, statusAlerts, type Situation } from '../core/runner/controls.js';
import type { RunnerEvent, RunnerStatus } from '../core/runner/index.js';
import type { RunStatus } from '../core/store/types.js';

/** How many iterations' outputs and log lines the view keeps. */
export const KEEP_ITERATIONS = 5;
export const KEEP_LOG = 6;

export interface RunViewState {
  workflow: string;
  version: number | null;
  /** Where the workflow came from: a file path, or null for a saved workflow. */
  file: string | null;
  /** Whether an operator is at the keyboard (keys are shown and read). */
  interactive: boolean;
  taskId: number | null;
  runId: number | null;
  iterations: number;
  status: RunnerStatus | null;
  /** The last step event. */
  step: Extract<RunnerEvent, { type: 'step' }> | null;
  /** Iterations finished so far. */
  done: number;
  /** The last few iterations, oldest first. */
  last: { iteration: number; params: Record<string, unknown>; outputs: Record<string, unknown>; skipped?: true }[];
  log: { level: 'info' | 'warn' | 'error'; message: string; at: string }[];
  /** Set when the operator asked to quit: the run is being aborted, its cleanup runs. */
  quitting: boolean;
  /** A one-line answer to the operator's last key (e.g. "nothing to retry"). */
  notice: string | null;
  outcome: RunStatus | null;
  error: string | null;
  /** Failed steps skipped in this run (a completed run with some is not a clean success). */
  skipped: number;
  /** What the operator has typed for a waiting input step (Enter gives it). */
  typed?: string;
}

/** Events of this view that do not come from the runner. */
export type LocalEvent = { type: 'notice'; text: string | null } | { type: 'quitting' } | { type: 'typed'; text: string } | { type: 'end'; status: RunStatus; error: string | null };

export type ViewEvent = RunnerEvent | LocalEvent;

export function initialState(init: Pick<RunViewState, 'workflow' | 'version' | 'file' | 'iterations' | 'interactive'> & Partial<RunViewState>): RunViewState {
  return { taskId: null, runId: null, status: null, step: null, done: 0, last: [], log: [], quitting: false, notice: null, outcome: null, error: null, skipped: 0, ...init };
}

const keepLast = <T,>(list: T[], item: T, n: number) => [...list, item].slice(-n);

/** Fold one event into the state (a new object; the old one is untouched). */
export function reduceRun(s: RunViewState, e: ViewEvent): RunViewState {
  switch (e.type) {
    case 'status':
      return { ...s, status: e.status };
    case 'step':
      return { ...s, step: e };
    case 'log':
      return { ...s, log: keepLast(s.log, { level: e.level, message: e.message, at: e.at }, KEEP_LOG) };
    case 'iteration':
      return { ...s, done: s.done + 1, last: keepLast(s.last, { iteration: e.iteration, params: e.params, outputs: e.outputs, ...(e.skipped ? { skipped: true as const } : {}) }, KEEP_ITERATIONS) };
    case 'run':
      return { ...s, runId: e.run_id, taskId: e.task_id, outcome: e.status === 'running' ? s.outcome : e.status, skipped: e.skipped ?? s.skipped };
    case 'queue':
    case 'input': // the status carries the waiting input; `lab run` asks for it (cli/run.ts)
      return s;
    case 'notice':
      return { ...s, notice: e.text };
    case 'quitting':
      return { ...s, quitting: true };
    case 'typed':
      return { ...s, typed: e.text };
    case 'end':
      return { ...s, outcome: e.status, error: e.error };
  }
}

/* ------------------------------------------------------------------ keys */

export type KeyAction = 'pause' | 'resume' | 'continue' | 'retry' | 'skip' | 'stop-iteration' | 'abort' | 'quit' | 'give';

/**
 * While an input step waits, keys type its value (issue 31): the text so far, or 'give' on Enter; Ctrl-C
 * still quits. Null when no input waits (keys are the controls then).
 */
export function typeKey(input: string, key: Pick<Key, 'ctrl' | 'return' | 'backspace' | 'delete'>, state: Pick<RunViewState, 'status' | 'outcome' | 'typed'>): { text: string } | 'give' | null {
  if (state.outcome || !state.status?.input || key.ctrl) return null;
  const typed = state.typed ?? '';
  if (key.return) return 'give';
  if (key.backspace || key.delete) return { text: typed.slice(0, -1) };
  return input ? { text: typed + input } : null;
}

/**
 * What a key means in the current state: only what does something now (core/runner/controls.ts, as the
 * web page's buttons). `p` pauses, or resumes when paused; `c` continues after a pause step; `r` retries and
 * `s` skips the failed step; `n` stops after this iteration; `a` aborts the task (the cleanup phase runs);
 * `q` and Ctrl-C abort and quit.
 */
export function keyAction(input: string, key: Pick<Key, 'ctrl'>, state: Pick<RunViewState, 'status' | 'outcome'>): KeyAction | null {
  if (state.outcome) return null;
  if (key.ctrl && input === 'c') return 'quit';
  if (key.ctrl) return null;
  const on = state.status ? availableControls(state.status) : null;
  switch (input.toLowerCase()) {
    case 'p':
      return on?.resume ? 'resume' : on?.pause ? 'pause' : null;
    case 'c':
      return on?.continue ? 'continue' : null;
    case 'r':
      return on?.retry ? 'retry' : null;
    case 's':
      return on?.skip ? 'skip' : null;
    case 'n':
      return on && !on['stop-iteration'] ? null : 'stop-iteration';
    case 'a':
      return 'abort';
    case 'q':
      return 'quit';
    default:
      return null;
  }
}

/* ------------------------------------------------------------------ formatting */

/** A value in one short line: numbers and text as they are, anything else as JSON, cut at `max`. */
export function shortValue(v: unknown, max = 40): string {
  let s: string;
  if (typeof v === 'string') s = v;
  else if (typeof v === 'number' && !Number.isInteger(v)) s = String(Number(v.toPrecision(6)));
  else s = JSON.stringify(v) ?? String(v);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** `a=1 b=water`: the pairs of a record in one line. */
export function pairs(o: Record<string, unknown>): string {
  return Object.entries(o)
    .map(([k, v]) => `${k}=${shortValue(v)}`)
    .join(' ');
}

const STATE_COLOR: Record<Situation, string> = {
  running: 'green',
  pausing: 'yellow',
  paused: 'yellow',
  waiting: 'yellow',
  waiting_input: 'yellow',
  failed: 'red',
  stopping: 'yellow',
  idle: 'gray',
  held: 'yellow',
  interrupted: 'red',
};
const OUTCOME_COLOR: Record<RunStatus, string> = { running: 'green', completed: 'green', failed: 'red', stopped: 'yellow', aborted: 'red', interrupted: 'red' };

/* ------------------------------------------------------------------ components */

export function ProgressBar({ done, total, width = 30 }: { done: number; total: number; width?: number }) {
  const frac = total > 0 ? Math.min(1, done / total) : 0;
  const full = Math.round(frac * width);
  return (
    <Text>
      <Text color="green">{'█'.repeat(full)}</Text>
      <Text color="gray">{'░'.repeat(width - full)}</Text>
      {` ${done}/${total} iteration${total === 1 ? '' : 's'} (${Math.round(frac * 100)}%)`}
    </Text>
  );
}

export function Header({ s }: { s: RunViewState }) {
  // the runner's state in the page's words: paused, waiting at a pause step, failed step waiting for a decision…
  const where = s.status ? situationOf(s.status) : null;
  const state = s.outcome ?? (where ? SITUATION[where].label : 'starting');
  const color = s.outcome ? OUTCOME_COLOR[s.outcome] : where ? STATE_COLOR[where] : 'white';
  const flags = s.status && where && !s.outcome ? liveFlags(s.status, where) : '';
  return (
    <Text>
      <Text bold>{s.workflow}</Text>
      {s.version !== null ? ` v${s.version}` : ''}
      {s.file ? <Text color="gray">{` (${s.file})`}</Text> : null}
      {s.taskId !== null ? ` · task ${s.taskId}` : ''}
      {s.runId !== null ? ` · run ${s.runId}` : ''}
      {' · '}
      <Text color={color} bold>
        {state}
      </Text>
      {flags ? <Text color="yellow">{` (${flags})`}</Text> : null}
    </Text>
  );
}

/** Where the run is: phase, iteration, step number, and the last step's path and call. */
export function StepLine({ s }: { s: RunViewState }) {
  const p = s.status?.progress;
  const step = s.step;
  if (!p?.phase && !step) return <Text color="gray">waiting for the runner…</Text>;
  // step events come more often than status events: the last step's index is the fresher count
  const at = step && step.phase === p?.phase ? step.index : (p?.step ?? 0);
  const where = [p?.phase ?? step?.phase, p?.phase === 'main' ? `iteration ${p.iteration}/${p.iterations}` : null, p && p.steps ? `step ${Math.min(at + 1, p.steps)}/${p.steps}` : null]
    .filter(Boolean)
    .join(' · ');
  const call = step ? (step.kind === 'call' ? `${step.instrument}.${step.method}` : step.kind) : '';
  const mark = step?.state === 'start' ? '…' : step?.state === 'ok' ? '✓' : step?.state === 'error' ? '✗' : '';
  return (
    <Text>
      {where}
      {step ? (
        <Text>
          {'  '}
          <Text color="cyan">{step.path}</Text> {call} <Text color={step.state === 'error' ? 'red' : step.state === 'ok' ? 'green' : 'yellow'}>{mark}</Text>
          {step.state === 'ok' && step.output !== undefined ? <Text color="gray">{` → ${shortValue(step.output)}`}</Text> : null}
        </Text>
      ) : null}
    </Text>
  );
}

/** The outputs of the last few iterations, one line each. */
export function Outputs({ last }: { last: RunViewState['last'] }) {
  if (last.length === 0) return null;
  return (
    <Box flexDirection="column">
      <Text bold>Last outputs</Text>
      {last.map((it) => (
        <Text key={it.iteration}>
          {`  #${it.iteration + 1}  `}
          {it.skipped ? <Text color="yellow">skipped (a failed step was skipped: not data)</Text> : Object.keys(it.outputs).length ? pairs(it.outputs) : <Text color="gray">(no outputs)</Text>}
          {Object.keys(it.params).length ? <Text color="gray">{`   (${pairs(it.params)})`}</Text> : null}
        </Text>
      ))}
    </Box>
  );
}

const LEVEL_COLOR = { info: 'gray', warn: 'yellow', error: 'red' } as const;

export function LogTail({ log }: { log: RunViewState['log'] }) {
  if (log.length === 0) return null;
  return (
    <Box flexDirection="column">
      <Text bold>Log</Text>
      {log.map((l, i) => (
        <Text key={i} color={LEVEL_COLOR[l.level]} wrap="truncate-end">
          {`  ${l.at.slice(11, 19)} ${l.message}`}
        </Text>
      ))}
    </Box>
  );
}

/** The keys that apply now, in the web page's words for the same controls. */
export function keyHelp(s: Pick<RunViewState, 'status' | 'quitting'>): string {
  if (s.quitting) return 'q quit at once (the run is left unfinished)';
  if (s.status?.input) return 'type the value, Enter gives it · Ctrl-C abort and quit';
  const on = s.status ? availableControls(s.status) : null;
  const word = (c: keyof typeof CONTROL_LABEL) => CONTROL_LABEL[c].toLowerCase();
  const keys = [
    on?.resume ? `p ${word('resume')}` : on?.pause ? `p ${word('pause')}` : '',
    on?.continue ? `c ${word('continue')}` : '',
    on?.retry ? `r ${word('retry')}` : '',
    on?.skip ? `s ${word('skip')}` : '',
    !on || on['stop-iteration'] ? `n ${word('stop-iteration')}` : '',
    `a ${word('abort-task')} (cleanup runs)`,
    'q quit',
  ];
  return keys.filter(Boolean).join(' · ');
}

/** What the operator can do now: the failed-step prompt, a pause step's message, or the key help. */
export function Prompt({ s }: { s: RunViewState }) {
  if (s.outcome) {
    return (
      <Text color={s.skipped ? 'yellow' : OUTCOME_COLOR[s.outcome]} bold>
        {`Run ${s.outcome}${s.skipped ? ` with ${s.skipped} skipped step${s.skipped === 1 ? '' : 's'}` : ''}${s.error ? `: ${s.error}` : ''}`}
      </Text>
    );
  }
  return (
    <Box flexDirection="column">
      {/* what waits for the operator, as the web page says it */}
      {s.status
        ? statusAlerts(s.status).map((a) => (
            <Text key={a.text} color={a.tone === 'danger' ? 'red' : 'yellow'} bold>
              {a.text}
            </Text>
          ))
        : null}
      {s.quitting ? <Text color="yellow">Aborting: the cleanup phase runs, then lab run ends.</Text> : null}
      {s.notice ? <Text color="yellow">{s.notice}</Text> : null}
      {s.status?.input && s.interactive ? (
        <Text
          bold
        >{`${s.status.input.save_as}${s.status.input.schema.type === 'number' || s.status.input.schema.type === 'integer' ? (s.status.input.schema.unit ? ` (${s.status.input.schema.unit})` : '') : ''}> ${s.typed ?? ''}`}</Text>
      ) : null}
      {s.interactive ? <Text color="gray">{keyHelp(s)}</Text> : null}
    </Box>
  );
}

/** The whole view: props in, elements out. */
export function RunView({ state: s }: { state: RunViewState }) {
  return (
    <Box flexDirection="column">
      <Header s={s} />
      <ProgressBar done={s.done} total={s.iterations} />
      <StepLine s={s} />
      <Outputs last={s.last} />
      <LogTail log={s.log} />
      <Prompt s={s} />
    </Box>
  );
}

/* ------------------------------------------------------------------ live */

/** The view's state with subscribers: `lab run` dispatches events into it, `LiveRun` draws it. */
export class RunModel {
  private listeners = new Set<() => void>();
  constructor(private state: RunViewState) {}
  get = (): RunViewState => this.state;
  subscribe = (fn: () => void): (() => void) => {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  };
  dispatch(e: ViewEvent): void {
    const next = reduceRun(this.state, e);
    if (next === this.state) return;
    this.state = next;
    for (const fn of this.listeners) fn();
  }
}

/** The live view: draws the model, turns keys into actions. */
export function LiveRun({ model, onAction }: { model: RunModel; onAction(a: KeyAction): void }) {
  const state = useSyncExternalStore(model.subscribe, model.get);
  useInput((input, key) => {
    const typing = typeKey(input, key, state);
    if (typing === 'give') return onAction('give');
    if (typing) return model.dispatch({ type: 'typed', text: typing.text });
    const a = keyAction(input, key, state);
    if (a) onAction(a);
  });
  return <RunView state={state} />;
}

/**
 * Draw the live view on a terminal until `unmount`. JSX and ink's `render` are imported here, statically: the
 * `lab` bundle turns a dynamic `import('react')` of a CommonJS package into a namespace with only `default`,
 * so a caller destructuring `createElement` from it got undefined there (and only there).
 */
export function mountLive(model: RunModel, onAction: (a: KeyAction) => void, streams: { stdout: NodeJS.WriteStream; stdin: NodeJS.ReadStream; stderr: NodeJS.WriteStream }) {
  return render(<LiveRun model={model} onAction={onAction} />, { ...streams, exitOnCtrlC: false });
}
