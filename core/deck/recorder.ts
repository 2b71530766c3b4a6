/**
 * The one writer of call records (issue 27 item 5): every record of an instrument call, a direct call from any
 * door (the `/app` routes, ivoryOS, MCP, a call relayed from another labdeck) and a run's step alike, and a
 * run's input step, is begun here before the driver is touched (`running`, no end) and completed here after,
 * in place. So a call to a driver that hangs has its record while it hangs, and a process killed during a call
 * leaves it `running`, which recovery reads as in-doubt. Below the deck and the runner: it knows only the
 * steps table's writes (`Store['steps']`, or a transaction's), never HTTP.
 */
import type { NewStep, StepRow } from '../store/types.js';

/** The writes of the steps table the recorder needs (the store's `steps`, a transaction's, or memoryRecords). */
export interface StepWrites {
  insert(step: NewStep): Promise<number>;
  update(id: number, patch: Partial<NewStep>): Promise<void>;
  /** Remove a record (a call refused before anything acted on it); false when there was none. */
  delete(id: number): Promise<boolean>;
}

/** A call as it begins: who calls what, with which arguments, and where in a run (null for a direct call). */
export interface CallStart {
  instrument: string;
  method: string;
  args: unknown;
  userId: number | null;
  runId?: number | null;
  phase?: string | null;
  iteration?: number | null;
  stepIndex?: number | null;
  startedAt?: Date;
}

/** How a call ended (`endedAt` defaults to now; `args`, `startedAt`, `userId` set again when given). */
export interface CallEnd {
  status: Exclude<StepRow['status'], 'running'>;
  /** The call's instrument and method, when known (with `args`, the store then knows what it used without reading the record). */
  instrument?: string;
  method?: string;
  output?: unknown;
  error?: string | null;
  args?: unknown;
  userId?: number | null;
  startedAt?: Date;
  endedAt?: Date;
  log?: string | null;
}

export class CallRecorder {
  constructor(private readonly steps: StepWrites) {}

  /** The record of a call about to be made: `running`, no output, no end. Returns its id (the call's task_id). */
  begin(call: CallStart): Promise<number> {
    return this.steps.insert({
      runId: call.runId ?? null,
      phase: call.phase ?? null,
      iteration: call.iteration ?? null,
      stepIndex: call.stepIndex ?? null,
      instrument: call.instrument,
      method: call.method,
      args: call.args,
      output: null,
      status: 'running',
      error: null,
      userId: call.userId,
      startedAt: call.startedAt ?? new Date(),
      endedAt: null,
    });
  }

  /** The call's end, written into its record in place. */
  complete(id: number, end: CallEnd): Promise<void> {
    const patch: Partial<NewStep> = { status: end.status, error: end.error ?? null, endedAt: end.endedAt ?? new Date() };
    if (end.output !== undefined) patch.output = end.output;
    if (end.args !== undefined) patch.args = end.args;
    if (end.instrument !== undefined) patch.instrument = end.instrument;
    if (end.method !== undefined) patch.method = end.method;
    if (end.userId !== undefined) patch.userId = end.userId;
    if (end.startedAt !== undefined) patch.startedAt = end.startedAt;
    if (end.log !== undefined) patch.log = end.log;
    return this.steps.update(id, patch);
  }

  /** A record asked again after an interruption (an input step): `running` once more, its end cleared. */
  reopen(id: number): Promise<void> {
    return this.steps.update(id, { status: 'running', error: null, endedAt: null });
  }

  /** A failed step the operator skipped: its record says so (its error stays). */
  skipped(id: number): Promise<void> {
    return this.steps.update(id, { status: 'skipped' });
  }

  /** A call refused before anything acted on it (the PC that drives the instrument refused it): no record. */
  async discard(id: number): Promise<void> {
    await this.steps.delete(id);
  }
}

/** Records kept in memory, in `rows` (a deck with no store: tests, and docs' examples). Ids from 1. */
export function memoryRecords(): StepWrites & { readonly rows: (NewStep & { id: number })[] } {
  const rows: (NewStep & { id: number })[] = [];
  let next = 0;
  return {
    rows,
    async insert(step) {
      const id = ++next;
      rows.push({ ...step, id });
      return id;
    },
    async update(id, patch) {
      const row = rows.find((r) => r.id === id);
      if (row) Object.assign(row, patch);
    },
    async delete(id) {
      const i = rows.findIndex((r) => r.id === id);
      if (i >= 0) rows.splice(i, 1);
      return i >= 0;
    },
  };
}

/** No records at all (a lab agent's deck: the lab server that asked records the call; `lab plugins`). Ids are 0. */
export const NO_RECORDS: StepWrites = {
  insert: async () => 0,
  update: async () => undefined,
  delete: async () => false,
};
