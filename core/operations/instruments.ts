/**
 * Operations on the lab's instruments (DESIGN.md §15): the list every door shows, a direct call (checked,
 * made by the labdeck that drives the instrument, recorded there; an agent's waits for a person when the
 * approval policy says so), a call answered before it ends (ivoryOS's `hidden_wait: false`), the console,
 * and a user's method order and hidden flags. The doors translate shapes only.
 */
import type { InstrumentSchema, MethodSchema } from '../contracts/index.js';
import { runConsole, type ConsoleResult } from '../console.js';
import { LabError, isLabError } from '../errors.js';
import type { MethodPrefs, StepRow } from '../store/types.js';
import type { DeckSchemas } from '../workflow/validate.js';
import type { LabwareView } from '../hosts/remote.js';
import { unitOf } from '../workflow/units.js';
import { isAgent, isRelayed, type Caller } from './caller.js';
import { agentOf, audit, type Lab, type MaybeRequest } from './lab.js';

export interface CallInput {
  instrument: string;
  method: string;
  args: unknown;
}

/** A call made: its record's id, the output, and the labdeck that made it when another one did. */
export interface Called {
  task_id: number;
  output: unknown;
  host?: string;
}

/** A call started and answered before it ends: its record (written before the driver is touched) and its end. */
export interface Started {
  task_id: number;
  /** Settles when the call ends; never rejects (its record has the error). */
  finished: Promise<void>;
}

const PENDING = Symbol('pending');

/** A settled-later value (the record's id of a call started, told by the deck once the record exists). */
function later<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((res) => (resolve = res));
  return { promise, resolve };
}

export function instrumentOperations(lab: Lab) {
  const { runner, deck, store } = lab;
  /** The lab's instruments: this deck's, and those other labdecks on the database drive (`host` says where). */
  const catalogue = runner.catalogue;

  const ops = {
    /** The lab's instruments, in the deck's own order, then those other labdecks drive. */
    list(): InstrumentSchema[] {
      return catalogue.list!();
    },

    /** Is `name` one of the lab's instruments (this deck's or another labdeck's)? */
    has(name: string): boolean {
      return deck.has(name) || catalogue.list!().some((i) => i.name === name);
    },

    /** One instrument's schema (404 naming it when the lab has none). */
    schema(name: string): InstrumentSchema {
      return catalogue.schema(name);
    },

    /** This deck's own instruments (what this labdeck can generate clients for and import). */
    local(): InstrumentSchema[] {
      return deck.list();
    },

    /** Is `name` an instrument of this deck (not another labdeck's)? */
    isLocal(name: string): boolean {
      return deck.has(name);
    },

    /** Instruments among `names` that another labdeck on the database drives, with the labdeck that does. */
    heldElsewhere(names: string[]): { name: string; host: string }[] {
      return runner.heldElsewhere(names);
    },

    /** This deck's schemas, as workflow checks read them. */
    deckSchemas: deck as DeckSchemas,

    /** One method of an instrument, or a 404 naming the methods it has (`field`: the input that named it). */
    method(instrument: string, name: string, field = 'method'): MethodSchema {
      const inst = catalogue.schema(instrument);
      const m = inst.methods.find((x) => x.name === name);
      if (!m) throw new LabError('not_found', `${inst.name} has no method "${name}"; it has ${inst.methods.map((x) => x.name).join(', ')}.`, [{ field, message: 'unknown method' }]);
      return m;
    },

    /**
     * A direct call: made here, or by the labdeck that drives the instrument (which records it; its answer or
     * refusal comes back as it gave it). An agent's call is checked, then made at once, or, when the approval
     * policy marks its safety level, becomes a request that waits for a person.
     */
    async call(caller: Caller, input: CallInput): Promise<MaybeRequest<Called>> {
      if (isAgent(caller)) {
        const outcome = await lab.approvals.call(agentOf(caller), input.instrument, input.method, input.args);
        return 'ran' in outcome ? { done: outcome.ran } : { request: outcome.request };
      }
      if (isRelayed(caller)) {
        // another labdeck asks this one, which drives the instrument: made and recorded here, never sent on
        const { taskId, output } = await deck.call(input.instrument, input.method, input.args, { userId: caller.userId });
        return { done: { task_id: taskId, output } };
      }
      const { taskId, output, host } = await runner.call(input.instrument, input.method, input.args, { userId: caller.userId });
      return { done: { task_id: taskId, output, ...(host ? { host } : {}) } };
    },

    /**
     * A call answered as soon as its record exists (`end_time` null), before the driver is done; the record is
     * filled in when it ends. A call refused before it starts (unknown instrument, bad arguments, busy) throws
     * as a waited-for call does. An instrument another labdeck drives is called there and answered when it
     * ends (a request between labdecks carries no early answer).
     */
    async start(caller: Caller, input: CallInput): Promise<Started> {
      if (!deck.has(input.instrument) || isAgent(caller)) {
        let outcome: MaybeRequest<Called>;
        try {
          outcome = await ops.call(caller, input);
        } catch (e) {
          // the method ran there and raised: its record has the error, as a call answered early here would
          if (isLabError(e) && e.code === 'instrument_error' && typeof e.data?.task_id === 'number') return { task_id: e.data.task_id, finished: Promise.resolve() };
          throw e;
        }
        if ('request' in outcome) throw new LabError('conflict', `This call waits for a person's approval (request ${outcome.request.id}).`);
        return { task_id: outcome.done.task_id, finished: Promise.resolve() };
      }
      const { instrument, method, args } = input;
      // the deck begins the call's record just before the driver is touched (core/deck/recorder.ts) and
      // completes it when the call ends: answered with the record's id as soon as it exists
      const begun = later<number>();
      const call = deck.call(instrument, method, args, { userId: caller.userId, onBegin: (id) => begun.resolve(id) });
      // a call refused before it starts (unknown instrument, bad arguments, locked, busy, the safety guard)
      // has no record and throws here, like a waited-for call's refusal
      const first = await Promise.race([begun.promise, call.then(() => PENDING)]);
      if (typeof first !== 'number') throw new LabError('internal', 'The call ended before its record was written.');
      return {
        task_id: first,
        finished: call.then(
          () => undefined,
          () => undefined,
        ),
      };
    },

    /**
     * The console (admins only): a snippet in the deck's language, audited before it runs (whatever it does,
     * the log has it) and after, with its result. A TypeScript snippet's calls go to this deck, as the caller.
     */
    async console(caller: Caller, input: { code: string; language: 'python' | 'typescript' | 'javascript' }): Promise<ConsoleResult> {
      if (caller.role !== 'admin') throw new LabError('forbidden', 'The console is for admins only.');
      const { code, language } = input;
      await audit(lab, caller, 'console.execute', { code, language });
      const result =
        language === 'python'
          ? await lab.python.console(code, lab.consoleTimeoutMs)
          : await runConsole(code, {
              language,
              timeoutMs: lab.consoleTimeoutMs,
              deck: { list: () => deck.list(), call: (i, m, a) => deck.call(i, m, a, { userId: caller.userId }) },
            });
      await audit(lab, caller, 'console.result', { success: result.success, error: result.error });
      return result;
    },

    /**
     * Build a deck file's instrument that did not load again, from the file as it is now (its schema), audited;
     * still failing → 400 with the new stage and error; one that loaded → 409.
     */
    async retry(caller: Caller, instrument: string): Promise<InstrumentSchema> {
      const schema = await deck.retryInstrument(instrument);
      await audit(lab, caller, 'instrument.retry', { instrument });
      return schema;
    },

    /** The unit a method's result is in (ivoryOS's `Unit` marker on its return), if its schema says one. */
    resultUnit(instrument: string, method: string): string | undefined {
      try {
        return unitOf(deck.schema(instrument).methods.find((m) => m.name === method)?.returns);
      } catch {
        return undefined; // an instrument the deck does not have now
      }
    },

    /** The labware view of an instrument with a worktable (grid, contents, tips left); `{ worktable: false }` for others. */
    labware(instrument: string): Promise<LabwareView> {
      return deck.labware(instrument);
    },

    /** The caller's order and hidden flags of an instrument's methods. */
    prefs(caller: Caller, instrument: string): Promise<MethodPrefs> {
      return store.prefs.get(caller.userId ?? -1, instrument);
    },

    /** The caller's order of this deck's instrument's methods: each named once, every name one of its methods. */
    async setOrder(caller: Caller, instrument: string, order: string[]): Promise<void> {
      const inst = deck.schema(instrument);
      const names = new Set(inst.methods.map((m) => m.name));
      const unknown = order.filter((n) => !names.has(n));
      if (unknown.length) {
        throw new LabError(
          'invalid_input',
          `${inst.name} has no method ${unknown.map((n) => `"${n}"`).join(', ')}.`,
          unknown.map((n) => ({ field: 'order', message: `unknown method ${n}` })),
        );
      }
      if (new Set(order).size !== order.length) throw new LabError('invalid_input', 'A method appears twice in "order".', [{ field: 'order', message: 'duplicate' }]);
      await store.prefs.setOrder(caller.userId ?? -1, inst.name, order);
    },

    /** Hide or show a method for the caller; stored explicitly, so a method the driver hides by default can be shown too. */
    async setHidden(caller: Caller, instrument: string, method: string, hidden: boolean): Promise<{ instrument: string; method: string; hidden: boolean }> {
      const inst = deck.schema(instrument);
      const m = inst.methods.find((x) => x.name === method);
      if (!m) throw new LabError('not_found', `${inst.name} has no method "${method}"; it has ${inst.methods.map((x) => x.name).join(', ')}.`);
      const userId = caller.userId ?? -1;
      await store.prefs.setHidden(userId, inst.name, m.name, hidden);
      await store.prefs.setHidden(userId, inst.name, `!${m.name}`, !hidden);
      return { instrument: inst.name, method: m.name, hidden };
    },

    /** A direct call's record (404 naming `field` when there is none). */
    async record(id: number, field?: string): Promise<StepRow> {
      const step = await store.steps.get(id);
      if (!step) throw new LabError('not_found', `There is no task ${id}.`, field ? [{ field, message: 'unknown task' }] : undefined);
      return step;
    },

    /** The latest recorded calls of an instrument. */
    recent(instrument: string, n: number): Promise<StepRow[]> {
      return store.steps.recent(instrument, n);
    },
  };
  return ops;
}

export type InstrumentOperations = ReturnType<typeof instrumentOperations>;
