/**
 * labdeck's records in the JSON shapes ivoryOS 1.6.11 answers with: the deck snapshot (`deck.<name>` →
 * method → signature), a single call (`SingleStep`), a run (`WorkflowRun`), its phases and steps, the queue.
 * Dates are written as Flask writes them (RFC 1123, `Wed, 25 Nov 2026 07:52:47 GMT`).
 */
import { basename, extname } from 'node:path';
import type { InstrumentSchema, JSONSchema } from '../../core/contracts/index.js';
import type { Runtime } from '../../core/runtime.js';
import type { PhaseRow, QueuedTask as QueueTaskRow, RunRow, CallRecord as StepRow } from '../../core/operations/index.js';

/** The prefix ivoryOS gives the deck's instruments. */
export const DECK_PREFIX = 'deck.';

export const flaskTime = (d: Date | null): string | null => (d ? d.toUTCString() : null);

/** The deck's name as ivoryOS gives it (the deck module's file name without extension); null for no deck. */
export const deckName = (runtime: Runtime): string | null => {
  const file = runtime.ops.settings.deckFile();
  return file ? basename(file, extname(file)) : null;
};

/** A JSON Schema type as the Python annotation ivoryOS prints in a signature. */
function annotation(s: JSONSchema): string {
  if (Array.isArray(s.enum)) return 'str';
  const types = ([] as unknown[]).concat(s.type ?? []).filter((t) => t !== 'null');
  const python: Record<string, string> = { number: 'float', integer: 'int', boolean: 'bool', string: 'str', array: 'list', object: 'dict' };
  const names = types.map((t) => python[String(t)]).filter(Boolean);
  return names.length === 1 ? names[0]! : '';
}

/** A JSON value as a Python literal (a default in a signature). */
function pythonLiteral(v: unknown): string {
  if (v === null) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (Array.isArray(v)) return `[${v.map(pythonLiteral).join(', ')}]`;
  if (typeof v === 'object')
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${pythonLiteral(k)}: ${pythonLiteral(x)}`)
      .join(', ')}}`;
  return String(v);
}

/** `(self, celsius: float, hold: bool = False)`: a method's parameters as `str(inspect.signature(...))` prints them. */
export function signature(params: JSONSchema): string {
  const props = (params.properties ?? {}) as Record<string, JSONSchema>;
  const parts = Object.entries(props).map(([name, s]) => {
    const type = annotation(s);
    const typed = type ? `${name}: ${type}` : name;
    return s.default === undefined ? typed : `${typed}${type ? ' = ' : '='}${pythonLiteral(s.default)}`;
  });
  return `(${['self', ...parts].join(', ')})`;
}

/** The interface schema ivoryOS answers GET /instruments with: `{ "deck.pump": { "dose": { signature, docstring, … } } }`. */
export function snapshot(instruments: InstrumentSchema[]) {
  return Object.fromEntries(
    instruments.map((inst) => [
      `${DECK_PREFIX}${inst.name}`,
      Object.fromEntries(inst.methods.map((m) => [m.name, { signature: signature(m.params), docstring: m.description || null, coroutine: false, has_args: false, has_kwargs: false }])),
    ]),
  );
}

/** A direct call's record as ivoryOS's SingleStep: `end_time` is null while it runs; `run_error` false or the message. */
export function singleStep(s: StepRow) {
  return {
    id: s.id,
    method_name: `${DECK_PREFIX}${s.instrument}.${s.method}`,
    kwargs: s.args,
    start_time: flaskTime(s.startedAt),
    end_time: s.status === 'running' ? null : flaskTime(s.endedAt),
    run_error: s.status === 'ok' || s.status === 'running' ? false : (s.error ?? s.status),
    output: s.output,
    // labdeck's own word on the call (ok, error, running, in-doubt, skipped): ivoryOS has none
    status: s.status,
  };
}

/** ivoryOS's run status: completed, stopped or error (null while it runs). */
const RUN_STATUS: Record<RunRow['status'], string | null> = { running: null, completed: 'completed', failed: 'error', stopped: 'stopped', aborted: 'stopped', interrupted: 'error' };

/** A run record as ivoryOS's WorkflowRun. */
export function workflowInfo(run: RunRow, platform: string | null) {
  const parameters = Array.isArray(run.parameters) ? run.parameters : [];
  return {
    id: run.id,
    name: run.name,
    platform,
    start_time: flaskTime(run.startedAt),
    end_time: flaskTime(run.endedAt),
    data_path: null,
    repeat_mode: parameters.some((p) => p && typeof p === 'object' && Object.keys(p).length > 0) ? 'sweep' : 'static_repeat',
    status: RUN_STATUS[run.status],
    // labdeck's own: the workflow it ran, its status word, and the error that ended it
    workflow_name: run.workflowName,
    labdeck_status: run.status,
    error: run.error,
  };
}

/** A step of a run as ivoryOS's WorkflowStep. */
export const workflowStep = (s: StepRow, phaseId: number | null) => ({
  id: s.id,
  phase_id: phaseId,
  step_index: s.stepIndex ?? 0,
  method_name: `${DECK_PREFIX}${s.instrument}.${s.method}`,
  start_time: flaskTime(s.startedAt),
  end_time: flaskTime(s.endedAt),
  run_error: s.status === 'error' || s.status === 'in-doubt',
  output: s.output,
});

/** A run's phases grouped as ivoryOS's record page: prep and cleanup lists, main iterations by index under `script`. */
export function groupedPhases(phases: PhaseRow[], steps: StepRow[]) {
  const key = (phase: string | null, iteration: number | null) => `${phase}:${iteration ?? ''}`;
  const byPhase = new Map<string, StepRow[]>();
  for (const s of steps) {
    const k = key(s.phase, s.iteration);
    byPhase.set(k, [...(byPhase.get(k) ?? []), s]);
  }
  const out = { prep: [] as unknown[], script: {} as Record<string, unknown[]>, cleanup: [] as unknown[] };
  for (const p of phases) {
    const dict = {
      id: p.id,
      run_id: p.runId,
      name: p.phase,
      repeat_index: p.iteration ?? 0,
      parameters: p.params,
      outputs: p.outputs,
      start_time: flaskTime(p.startedAt),
      end_time: flaskTime(p.endedAt),
      steps: (byPhase.get(key(p.phase, p.iteration)) ?? []).map((s) => workflowStep(s, p.id)),
    };
    if (p.phase === 'main') (out.script[String(p.iteration ?? 0)] ??= []).push(dict);
    else out[p.phase].push(dict);
  }
  return out;
}

/** A waiting task of the queue as ivoryOS lists it. */
export function queueEntry(t: QueueTaskRow) {
  const payload = (t.payload ?? {}) as { rows?: unknown[]; repeat?: { times?: number }; workflow?: string };
  const rows = Array.isArray(payload.rows) ? payload.rows : null;
  return {
    id: t.id,
    name: t.name,
    status: t.status,
    args: rows ? `Config: ${rows.length} entries` : t.kind === 'campaign' ? 'Campaign' : `${payload.repeat?.times ?? 1} iteration(s)`,
    details: {
      Mode: rows ? 'Configuration List' : t.kind === 'campaign' ? 'Campaign' : 'Repeated Execution',
      ...(payload.workflow ? { Workflow: payload.workflow } : {}),
      ...(rows ? { 'Config Entries': rows.length, 'Config Preview (First 5)': rows.slice(0, 5) } : payload.repeat ? { 'Repeat Count': payload.repeat.times } : {}),
    },
  };
}

/**
 * A run's steps as ivoryOS 1.0 grouped them for `/workflow_steps/<id>` (ivoryos-mcp's `load-workflow-data`):
 * `{ prep: [step], script: { "<iteration>": [step] }, cleanup: [step] }`, each step
 * `{ id, workflow_id, phase, repeat_index, step_index, method_name, start_time, end_time, run_error, output }`.
 */
export function legacySteps(runId: number, steps: StepRow[]) {
  const out = { prep: [] as unknown[], script: {} as Record<string, unknown[]>, cleanup: [] as unknown[] };
  for (const s of steps) {
    const phase = s.phase === 'main' ? 'script' : s.phase;
    // ivoryOS 1.0's step: 1.6's WorkflowStep with its run, phase and iteration instead of a phase id
    const { phase_id: _phaseId, ...common } = workflowStep(s, null);
    const step = { ...common, workflow_id: runId, phase, repeat_index: s.iteration ?? 0 };
    if (phase === 'script') (out.script[String(s.iteration ?? 0)] ??= []).push(step);
    else if (phase === 'prep' || phase === 'cleanup') out[phase].push(step);
  }
  return out;
}
