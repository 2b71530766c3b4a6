/**
 * `lab run WORKFLOW [--config CSV | --repeat N] [--json]`: one workflow run on the same runtime and runner
 * as `lab serve`, headless, ending with an exit code (0 completed; 1 failed, stopped or aborted; 2 bad input).
 *
 * WORKFLOW is a saved workflow's name, or a path to a workflow JSON file (anything with a `/`, `\` or `.`
 * in it: names cannot have those). A file is validated against the deck; the runner only runs saved
 * workflows (every run record names a saved version, and the web app's records link to it), so a file
 * whose content differs from the latest saved version of its name is saved as a new version first (saving
 * never overwrites: older versions stay). Running the same file again reuses its version.
 *
 * Three ways to show the run:
 * - a terminal (stdin and stdout are TTYs): a live ink view (cli/run-view.tsx), and the operator at the
 *   keyboard decides what a failed step or a `pause` step does;
 * - `--json`: one JSON object per line on stdout (`start`, the runner's events, `note`, and a final `end`);
 * - anything else (a pipe, a log file): plain lines, one per iteration and per problem.
 * Without a terminal there is no operator: a failed step or a `pause` step aborts the run (its cleanup
 * phase runs) and the exit code is 1.
 *
 * The queue: `lab run` submits its task to the queue of the data folder and runs only that. It refuses a
 * data folder whose queue has unfinished tasks (a server's, or a crashed run's: deal with them in
 * `lab serve`). Beside a running server on the same data folder it is another host of the lab (SHARING).
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { userInfo } from 'node:os';
import type { Command, OptionValues } from '@commander-js/extra-typings';
import { errorText } from '../core/deck/util.js';
import { LabError, isLabError } from '../core/errors.js';
import { parseCsv, type CsvTable } from '../core/files/csv.js';
import { configRowsOf } from '../core/files/store.js';
import { workflowIterations, type WorkflowPayload } from '../core/runner/index.js';
import { done as outcome, systemCaller, type RunControlName, type RunnerEvent } from '../core/operations/index.js';
import { etaText } from '../core/notify/watchdog.js';
import type { Runtime } from '../core/runtime.js';
import { openStore } from '../core/store/index.js';
import type { RunStatus } from '../core/store/types.js';
import { deepEqual } from '../core/workflow/jsonschema.js';
import { Workflow } from '../core/workflow/model.js';
import { instrumentsOf, validateWorkflow } from '../core/workflow/validate.js';
import { EXIT, println, processIO, UsageError, type CliIO, type ExitCode } from './io.js';
// The runtime, ink and React load when the command runs, not when any `lab` command starts.
import type { KeyAction, RunModel } from './run-view.js';
import { inkSink, jsonSink, plainSink, reportError, type Mode, type Sink, type StartInfo } from './run-output.js';

export interface RunOptions {
  /** A config CSV: a header of parameter names (an optional row of types), one row per iteration. */
  config?: string;
  /** Iterations of the parameters' defaults. */
  repeat?: string | number;
  /** One JSON event per line on stdout. */
  json?: boolean;
  /** As for `lab serve`. */
  deck?: string;
  plugins?: string;
  dataDir?: string;
  db?: string;
  python?: string;
}

export interface RunEnv {
  /** Where SIGINT / SIGTERM come from (default: the process). */
  signals?: Pick<NodeJS.EventEmitter, 'on' | 'off'>;
}

/** A saved workflow's name (the model's name rule) vs a file path. */
export const looksLikeFile = (target: string) => /[\\/.]/.test(target);

interface Loaded {
  definition: Workflow;
  version: number;
  /** The path given, for a workflow file. */
  file: string | null;
  /** The file was saved as a new version just now. */
  savedNow: boolean;
}

/** Prefix a LabError's message (with the file it is about), keeping its code and details. */
const about = (what: string, e: unknown): unknown => (isLabError(e) ? new LabError(e.code, `${what}: ${e.message}`, e.details, e.data) : e);

/** Read a file the user named; a missing or unreadable one is a usage error. */
async function readUserFile(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(resolve(path));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read the ${what} ${path}: ${code === 'ENOENT' ? 'no such file' : errorText(e)}`);
  }
}

/** What can be checked before the runtime starts: the files and the options (bad input fails fast). */
interface Inputs {
  /** The document of a workflow file. */
  doc?: unknown;
  repeat?: number;
  table?: CsvTable;
}

async function readInputs(target: string, opts: RunOptions): Promise<Inputs> {
  const inputs: Inputs = {};
  if (opts.config !== undefined && opts.repeat !== undefined) throw new UsageError('give --config CSV or --repeat N, not both');
  if (opts.repeat !== undefined) {
    const n = typeof opts.repeat === 'number' ? opts.repeat : /^\s*\d+\s*$/.test(opts.repeat) ? Number(opts.repeat) : NaN;
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--repeat must be a whole number of iterations, 1 or more (got ${JSON.stringify(opts.repeat)})`);
    inputs.repeat = n;
  }
  if (looksLikeFile(target)) {
    const text = (await readUserFile(target, 'workflow file')).toString('utf8');
    try {
      inputs.doc = JSON.parse(text);
    } catch (e) {
      throw new UsageError(`${target} is not a JSON file: ${errorText(e)}`);
    }
  }
  if (opts.config !== undefined) {
    try {
      inputs.table = parseCsv(await readUserFile(opts.config, 'config file'));
    } catch (e) {
      throw about(opts.config, e);
    }
  }
  return inputs;
}

/** `lab run` through core/operations: no account, the CLI's door. */
const CLI = systemCaller('cli', 'lab run');

async function loadWorkflow(runtime: Runtime, target: string, inputs: Inputs): Promise<Loaded> {
  const { workflows, instruments } = runtime.ops;
  // lab run drives its own deck only: a workflow is checked against it, not against the lab's
  const deck = instruments.deckSchemas;
  if (!looksLikeFile(target)) {
    const saved = await workflows.get(target);
    if (!saved) {
      const names = (await workflows.list()).map((w) => w.name);
      throw new UsageError(
        `there is no saved workflow "${target}" in ${runtime.dataDir} (${names.length ? `saved: ${names.join(', ')}` : 'none saved yet'}); to run a workflow file, give its path (./${target}.json)`,
      );
    }
    try {
      return { definition: validateWorkflow(saved.definition, deck), version: saved.version, file: null, savedNow: false };
    } catch (e) {
      throw about(`workflow "${target}" v${saved.version} does not fit this deck`, e);
    }
  }
  let definition: Workflow;
  try {
    definition = validateWorkflow(inputs.doc, deck);
  } catch (e) {
    throw about(target, e);
  }
  const saved = await workflows.get(definition.name);
  const parsed = saved ? Workflow.safeParse(saved.definition) : null;
  if (saved && parsed?.success && deepEqual(parsed.data, definition)) return { definition, version: saved.version, file: target, savedNow: false };
  const row = await workflows.save(CLI, definition);
  return { definition, version: row.version, file: target, savedNow: true };
}

/** The iterations: the config rows (checked against the parameters, coerced), or a repeat count. */
function iterationsOf(w: Workflow, inputs: Inputs, configFile: string | undefined): { config?: Record<string, unknown>[]; repeat?: number } {
  if (inputs.table) {
    try {
      return { config: configRowsOf(w, inputs.table) };
    } catch (e) {
      throw about(configFile ?? 'config', e);
    }
  }
  if (inputs.repeat !== undefined) return { repeat: inputs.repeat };
  if (w.parameters.length === 0) return { repeat: 1 };
  throw new UsageError(`workflow "${w.name}" has parameters (${w.parameters.map((p) => p.name).join(', ')}): give --config CSV (one row per iteration) or --repeat N (N iterations of the defaults)`);
}

/** Refuse a data folder whose queue has unfinished tasks: checked before the runner starts (it would run them). */
async function checkQueueFree(opts: RunOptions, dataDir: string): Promise<void> {
  const store = await openStore({ url: opts.db, dataDir });
  try {
    const open = await store.queue.open();
    if (open.length) {
      const list = open
        .slice(0, 5)
        .map((t) => `#${t.id} "${t.name}" ${t.status}`)
        .join(', ');
      throw new UsageError(
        `the queue of ${opts.db ?? dataDir} has ${open.length} unfinished task(s) (${list}${open.length > 5 ? ', …' : ''}); lab run runs only its own task: ` +
          `deal with them in the web app (lab serve with the same --data-dir/--db), or give lab run another --data-dir`,
      );
    }
  } finally {
    await store.close();
  }
}

/**
 * One instrument is never driven by two processes: an instrument of the workflow that another labdeck on
 * this database drives (a running `lab serve`) refuses the run, naming that labdeck.
 */
function refuseInstrumentsDrivenElsewhere(runtime: Runtime, workflow: Workflow): void {
  const taken = runtime.ops.instruments.heldElsewhere(instrumentsOf(workflow));
  if (!taken.length) return;
  const hosts = [...new Set(taken.map((t) => t.host))].join(' and ');
  throw new LabError(
    'conflict',
    `${taken.map((t) => t.name).join(', ')} ${taken.length > 1 ? 'are' : 'is'} driven by ${hosts}, another labdeck on this database: ` +
      'lab run never drives an instrument another process drives. Queue the run there (its web app, or POST /app/executions/config), or stop it first.',
    taken.map((t) => ({ field: t.name, message: `driven by ${t.host}` })),
  );
}

/** An error as text on stderr: the message, then every detail (step path, line and column) on its own line. */
export async function runWorkflow(target: string, opts: RunOptions, io: CliIO = processIO(), env: RunEnv = {}): Promise<ExitCode> {
  const mode: Mode = opts.json ? 'json' : io.stdout.isTTY && io.stdin.isTTY ? 'ink' : 'plain';
  const dataDir = resolve(opts.dataDir ?? 'lab-data');
  let runtime: Runtime | null = null;
  try {
    const inputs = await readInputs(target, opts);
    await checkQueueFree(opts, dataDir);
    const { createRuntime } = await import('../core/runtime.js');
    runtime = await createRuntime({
      deck: opts.deck,
      pluginDirs: [opts.plugins ?? 'lab-plugins'],
      dataDir,
      db: opts.db,
      watch: false,
      python: opts.python,
      labHost: { kind: 'run' },
      takes: 'own',
    });
    for (const e of runtime.ops.settings.pluginErrors()) println(io.stderr, `plugin error: ${e.file}: ${e.message}`);
    const loaded = await loadWorkflow(runtime, target, inputs);
    refuseInstrumentsDrivenElsewhere(runtime, loaded.definition);
    const rows = iterationsOf(loaded.definition, inputs, opts.config);
    return await execute(runtime, loaded, rows, mode, io, env.signals ?? process);
  } catch (e) {
    return reportError(io, mode, e);
  } finally {
    await runtime?.close();
  }
}

async function execute(
  runtime: Runtime,
  loaded: Loaded,
  rows: { config?: Record<string, unknown>[]; repeat?: number },
  mode: Mode,
  io: CliIO,
  signals: NonNullable<RunEnv['signals']>,
): Promise<ExitCode> {
  const { runs, records } = runtime.ops;
  /** A control of lab run's own task (none before it is queued: a control without it could reach another labdeck's). */
  const control = (name: RunControlName) => (name === 'release' ? runs.control(CLI, name) : taskId === null ? Promise.resolve(null) : runs.control(CLI, name, taskId));
  const abortTask = () => void control('abortNextTask').catch(() => undefined);
  // A hold left by an earlier aborted run (the queue is empty: checked before the runner started).
  if (runs.status().queue_held && !runs.status().busy) await control('release');

  let taskId: number | null = null;
  let runId: number | null = null;
  let done = 0;
  let sink: Sink | null = null;
  const early: RunnerEvent[] = [];
  let settle!: (r: { status: RunStatus; error?: string; forced?: boolean }) => void;
  const ended = new Promise<{ status: RunStatus; error?: string; forced?: boolean }>((r) => (settle = r));
  let autoAborted: string | null = null; // why lab run aborted the run itself
  let quitting = false;

  const handle = (e: RunnerEvent) => {
    if (e.type === 'run') {
      if (e.task_id !== taskId) return;
      runId = e.run_id;
      // how long it may take, from past runs of the workflow (core/notify); nothing when there are none
      if (e.status === 'running' && runtime) {
        const s = sink;
        void runtime.ops.notifications.runEta(e.run_id).then(
          (eta) => eta && s?.note(etaText(eta)),
          () => undefined,
        );
      }
    } else if ('run_id' in e && runId !== null && e.run_id !== runId) return;
    if (e.type === 'status' && e.status.current_task && e.status.current_task.id !== taskId) return;
    if (e.type === 'iteration') done++;
    sink!.event(e);
    // No operator without a terminal: a failed step or a pause step ends the run (cleanup still runs).
    if (mode !== 'ink' && e.type === 'status' && !autoAborted && (e.status.failed_step || e.status.waiting || e.status.input)) {
      const why = e.status.failed_step
        ? `step ${e.status.failed_step.path} failed`
        : e.status.input
          ? `the input step ${e.status.input.path} asks a person for ${e.status.input.save_as}`
          : `the pause step ${e.status.waiting!.path} needs an operator`;
      autoAborted = `${why} and there was no operator`;
      sink!.note(`${why} and there is no operator (not a terminal): aborting the run; its cleanup phase runs`);
      abortTask();
    }
    if (e.type === 'run' && e.status !== 'running') settle({ status: e.status });
  };
  const onEvent = (e: RunnerEvent) => (sink ? handle(e) : early.push(e));
  const onError = (e: unknown) => settle({ status: 'failed', error: errorText(e) });

  /** First: abort (cleanup runs). Again: stop waiting; the run is left for the web app to resume or end. */
  const quit = () => {
    if (quitting) {
      settle({ status: 'interrupted', forced: true, error: 'quit before the run ended: resume or end it in the web app (lab serve)' });
      return;
    }
    quitting = true;
    if (mode !== 'ink') sink?.note('aborting: the cleanup phase runs, then lab run ends (again to quit at once)');
    abortTask();
  };
  const onAction = (a: KeyAction, model: RunModel) => {
    if (a === 'quit') {
      model.dispatch({ type: 'quitting' });
      return quit();
    }
    model.dispatch({ type: 'notice', text: null });
    if (a === 'give') {
      // the value typed for the waiting input: a value that does not fit says why, and the run keeps waiting
      runs
        .input({ ...CLI, name: `${userInfo().username} at the terminal` }, model.get().typed ?? '', taskId ?? undefined)
        .then(() => model.dispatch({ type: 'typed', text: '' }))
        .catch((e: unknown) => model.dispatch({ type: 'notice', text: errorText(e) }));
      return;
    }
    // each key does one thing (a 409 says why not): a pause pressed as a step fails never skips it
    const act =
      a === 'retry'
        ? control('retry')
        : a === 'skip'
          ? control('skip')
          : a === 'pause'
            ? control('pause')
            : a === 'resume'
              ? control('resume')
              : a === 'continue'
                ? control('continuePauseStep')
                : a === 'stop-iteration'
                  ? control('abortNextIteration').then(() => model.dispatch({ type: 'notice', text: 'stopping after this iteration (cleanup runs)' }))
                  : control('abortNextTask').then(() => model.dispatch({ type: 'notice', text: 'aborting the task: the cleanup phase runs' }));
    act.catch((e: unknown) => model.dispatch({ type: 'notice', text: errorText(e) }));
  };

  const unsubscribe = [runs.subscribe(onEvent), runs.onError(onError)];
  signals.on('SIGINT', quit);
  signals.on('SIGTERM', quit);
  const t0 = performance.now();
  try {
    // The view is loaded before the task is queued: a view that cannot load must not leave a run started.
    const view = await import('./run-view.js');
    const { task } = outcome(await runs.submit(CLI, { workflow: loaded.definition.name, ...rows }));
    taskId = task.id;
    const iterations = workflowIterations(task.payload as WorkflowPayload).total;
    const start: StartInfo = { workflow: loaded.definition.name, version: loaded.version, file: loaded.file, savedNow: loaded.savedNow, taskId: task.id, iterations };
    try {
      sink = mode === 'json' ? jsonSink(io, start) : mode === 'plain' ? plainSink(io, start, view) : await inkSink(io, start, onAction, view);
    } catch (e) {
      // The run has started: end it as an abort does (its cleanup phase runs), never leave it "running".
      sink = plainSink(io, start, view);
      sink.note(`the live view failed (${errorText(e)}): aborting the run; its cleanup phase runs`);
      autoAborted = `the live view failed: ${errorText(e)}`;
      abortTask();
    }
    for (const e of early.splice(0)) handle(e);

    const result = await ended;
    const record = runId !== null ? await records.find(runId) : null;
    const exit = result.status === 'completed' && !result.forced ? EXIT.ok : EXIT.failed;
    // Leave the data folder's queue as it was found: not held by our abort when nothing else waits in it.
    if (!result.forced && runs.status().queue_held && !runs.status().busy && (await runs.queue()).tasks.length === 0) await control('release');
    await sink.end({
      status: result.status,
      error: result.error ?? record?.error ?? (result.status === 'aborted' ? (autoAborted ?? (quitting ? 'aborted by the operator' : null)) : null),
      taskId: task.id,
      runId,
      done,
      iterations,
      seconds: Math.round((performance.now() - t0) / 100) / 10,
      exit,
      forced: result.forced ?? false,
      skipped: record?.skipped ?? 0,
    });
    return exit;
  } finally {
    for (const stop of unsubscribe) stop();
    signals.off('SIGINT', quit);
    signals.off('SIGTERM', quit);
  }
}

/* ------------------------------------------------------------------ registration */

/**
 * What `lab run` does beside a running `lab serve` on the same data folder or database: said the same way
 * here and in docs/deploy.md ("lab run beside lab serve"; test/unit/cli-run.test.ts checks both, and that it is so).
 */
export const SHARING = `The queue: lab run runs only its own task. It may share a data folder (or --db) with a running
lab serve: it refuses a workflow with an instrument that server drives (exit 2, naming it), and a queue
with unfinished tasks; run those in the web app, or give lab run its own --data-dir.`;

const HELP = `
WORKFLOW is the name of a workflow saved in the database (of --data-dir / --db), or a path to a workflow
JSON file (it has a / or a . in it). A file is checked against the deck; when it differs from the latest
saved version of its name it is saved as a new version (older versions stay), so every run record names
a saved version, as in the web app.

Iterations: --config CSV (a header of parameter names, an optional row of type names, then one row per
iteration; errors name the line and column) or --repeat N (N iterations of the parameters' defaults).
A workflow without parameters runs once when neither is given.

In a terminal, a live view shows the progress, the current step, the last outputs and the log. Keys:
  p pause / resume   n stop after this iteration   a abort the task (the cleanup phase runs)
  q or Ctrl-C abort the task and quit
  at a pause step: c continue       on a failed step: r retry the failed step, s skip the failed step
The keys that do something now are shown under the view, in the words of the web page's buttons.
A second q / Ctrl-C quits at once: the run is left unfinished, to resume or end in the web app.

--json writes one JSON object per line on stdout: {"type":"start"}, the runner's events (status, step,
log, iteration, run, queue), {"type":"note"}, and last {"type":"end","status",...,"exit_code"}.
With --json, or when the output is not a terminal, there is no operator: a failed step, or a pause step,
aborts the run (its cleanup phase runs) and lab run exits 1.

${SHARING}

Exit codes: 0 completed; 1 failed, stopped or aborted; 2 bad input (unknown workflow, invalid workflow
or config file, bad options).
Examples:
  lab run dose-and-weigh --repeat 3
  lab run ./workflows/screen.json --config screen.csv --data-dir ./lab-data
  lab run ./ci-check.json --json --data-dir /tmp/lab-ci > events.jsonl
`;

/**
 * Register `lab run`. `common` adds the options it shares with `lab serve` (--deck, --plugins, --data-dir,
 * --db), so both commands read the same folders and database by default.
 */
export function registerRunCommand<O extends OptionValues>(program: Command, common: (c: Command) => Command<[], O>) {
  common(program.command('run'))
    .description('run a workflow headless: live view in a terminal, JSON lines with --json')
    .argument('<workflow>', 'a saved workflow name, or a path to a workflow JSON file')
    .option('--config <csv>', 'parameter rows: one iteration per row of a CSV file')
    .option('--repeat <n>', 'iterations of the parameter defaults')
    .option('--json', 'one JSON event per line on stdout (no live view; a failed step aborts the run)')
    .addHelpText('after', HELP)
    .action(async (workflow, o) => {
      process.exitCode = await runWorkflow(workflow, o as RunOptions);
    });
}
