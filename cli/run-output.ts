/**
 * Where `lab run` tells the run's story (cli/run.ts): the live ink view in a terminal, one JSON object per line
 * (`--json`), or plain lines; and how an error is reported in each.
 */
import { errorText } from '../core/deck/util.js';
import { isLabError } from '../core/errors.js';
import type { RunnerEvent } from '../core/operations/index.js';
import type { RunStatus } from '../core/store/types.js';
import { exitCodeFor, println, UsageError, type CliIO, type ExitCode } from './io.js';
import type { KeyAction, RunModel } from './run-view.js';

export type View = typeof import('./run-view.js');
export type Mode = 'ink' | 'json' | 'plain';

export function reportError(io: CliIO, mode: Mode, e: unknown): ExitCode {
  const details = isLabError(e) ? (e.details ?? []) : [];
  println(io.stderr, `lab: ${errorText(e)}`);
  if (details.length > 1) for (const d of details) println(io.stderr, `  ${d.field ? `${d.field}: ` : ''}${d.message}`);
  const exit = exitCodeFor(e);
  if (mode === 'json') {
    const code = isLabError(e) ? e.code : e instanceof UsageError ? 'invalid_input' : 'internal';
    println(io.stdout, JSON.stringify({ type: 'error', code, message: errorText(e), details, exit_code: exit }));
  }
  return exit;
}

/* ------------------------------------------------------------------ output sinks */

export interface StartInfo {
  workflow: string;
  version: number;
  file: string | null;
  savedNow: boolean;
  taskId: number;
  iterations: number;
}

export interface EndInfo {
  status: RunStatus;
  error: string | null;
  taskId: number;
  runId: number | null;
  done: number;
  iterations: number;
  seconds: number;
  exit: ExitCode;
  /** The operator quit before the run ended: it is left to be resumed or ended in the web app. */
  forced: boolean;
  /** Failed steps the operator skipped. */
  skipped: number;
}

/** Where the run's story goes: the live view, JSON lines, or plain lines. */
export interface Sink {
  event(e: RunnerEvent): void;
  /** Something lab run itself did or decided. */
  note(text: string): void;
  end(info: EndInfo): Promise<void>;
}

export function jsonSink(io: CliIO, start: StartInfo): Sink {
  const line = (o: unknown) => println(io.stdout, JSON.stringify(o));
  line({ type: 'start', task_id: start.taskId, workflow: start.workflow, version: start.version, file: start.file, saved_version: start.savedNow, iterations: start.iterations });
  return {
    event: line,
    note: (message) => line({ type: 'note', message }),
    async end(i) {
      line({
        type: 'end',
        task_id: i.taskId,
        run_id: i.runId,
        status: i.status,
        skipped_steps: i.skipped,
        error: i.error,
        iterations: i.iterations,
        iterations_done: i.done,
        seconds: i.seconds,
        exit_code: i.exit,
      });
    },
  };
}

export function plainSink(io: CliIO, start: StartInfo, { pairs }: View): Sink {
  const out = (s: string) => println(io.stdout, s);
  const from = start.file ? ` from ${start.file}${start.savedNow ? ` (saved as version ${start.version})` : ''}` : '';
  out(`running ${start.workflow} v${start.version}${from}: ${start.iterations} iteration(s), task ${start.taskId}`);
  let failure = '';
  return {
    event(e) {
      if (e.type === 'iteration') {
        const outputs = e.skipped ? 'skipped (a failed step was skipped: not data)' : Object.keys(e.outputs).length ? pairs(e.outputs) : '(no outputs)';
        out(`iteration ${e.iteration + 1}/${start.iterations}: ${outputs}${Object.keys(e.params).length ? `  (${pairs(e.params)})` : ''}`);
      } else if (e.type === 'status' && e.status.failed_step) {
        const f = e.status.failed_step;
        const key = `${f.path}|${f.iteration}|${f.error}`;
        if (key !== failure) out(`step ${f.path}${f.iteration !== null ? ` (iteration ${f.iteration + 1})` : ''} failed: ${f.error}`);
        failure = key;
      } else if (e.type === 'log' && e.level === 'warn' && !e.message.startsWith('Run ')) {
        out(`warning: ${e.message}`);
      }
    },
    note: out,
    async end(i) {
      const what = i.status === 'completed' ? `${i.done} iteration(s)` : `after ${i.done} of ${i.iterations} iteration(s)`;
      const skipped = i.skipped ? ` with ${i.skipped} skipped step${i.skipped === 1 ? '' : 's'}` : '';
      out(`run ${i.runId ?? '-'} ${i.forced ? 'left unfinished (quit)' : i.status}${skipped}: ${what} in ${i.seconds} s${i.error ? `: ${i.error}` : ''}`);
    },
  };
}

export async function inkSink(io: CliIO, start: StartInfo, onAction: (a: KeyAction, model: RunModel) => void, { initialState, mountLive, RunModel }: View): Promise<Sink> {
  const model = new RunModel(initialState({ workflow: start.workflow, version: start.version, file: start.file, iterations: start.iterations, interactive: true, taskId: start.taskId }));
  const app = mountLive(model, (a: KeyAction) => onAction(a, model), {
    stdout: io.stdout as NodeJS.WriteStream,
    stdin: io.stdin as NodeJS.ReadStream,
    stderr: io.stderr as NodeJS.WriteStream,
  });
  if (start.savedNow) model.dispatch({ type: 'notice', text: `${start.file} saved as version ${start.version} of ${start.workflow}` });
  return {
    event: (e) => model.dispatch(e),
    note: (text) => model.dispatch({ type: 'notice', text }),
    async end(i) {
      model.dispatch({ type: 'end', status: i.status, error: i.error });
      await new Promise((r) => setTimeout(r, 20)); // let React commit the last state
      app.unmount();
      await app.waitUntilExit().catch(() => undefined);
    },
  };
}

/* ------------------------------------------------------------------ the command */

/** `lab run WORKFLOW`: returns the exit code (0 completed, 1 failed/stopped/aborted, 2 bad input). */
