/**
 * Calls into the Deck's devices: validation, per-instrument serialisation, task locks, the safety guard just
 * before the driver, and one step record per call (begun before the driver is touched, completed after:
 * core/deck/recorder.ts); also a call's check without making it, the readings a
 * safety rule takes, and a worktable's labware view. The top layer of the Deck (index.ts), over loader.ts.
 */
import type { CallContext, Safety } from '../contracts/index.js';
import { LabError, isStoreFault } from '../errors.js';
import { LABWARE_VIEW, remoteInfo, type LabwareView, type RemoteHandle } from '../hosts/remote.js';
import { invalid, issueDetails } from './validate.js';
import { sentence } from '../text.js';
import { DeckLoader } from './loader.js';
import { DEFAULT_SAFETY, type CallGuard, type CallOptions, type CompiledMethod, type Device, type GuardEvents } from './types.js';
import { CallLog, errorMessage, failureRecord, toJsonValue } from './values.js';

export class DeckCalls extends DeckLoader {
  /** The safety guard every call passes (set by the runtime). */
  guard: CallGuard | null = null;
  /** Told of the guard's verdicts (set by the runtime: core/notify/safety.ts). */
  guardEvents: GuardEvents | null = null;
  /** A method's level as the lab's safety file sets it (`levels`), or undefined (set by the runtime). */
  levelOf: ((instrument: string, classes: readonly string[], method: string) => Safety | undefined) | null = null;

  async call(instrument: string, method: string, args: unknown, opts: CallOptions): Promise<{ taskId: number; output: unknown }> {
    const dev = this.device(instrument);
    if (dev.failure) this.checkOnline(dev); // a deck file's instrument that did not load: 503 with its stage
    let entry = dev.entry;
    let m = this.method(dev, method);
    this.checkOnline(dev);
    this.checkLock(instrument, opts.owner);
    let parsed = this.validate(instrument, method, m, args);

    // an agent's instrument queues no caller: one call its PC does not answer would hold them all (issue 26)
    if (dev.host !== undefined && !dev.mutex.tryAcquire()) throw new LabError('busy', `${instrument} is busy with another call (on the PC ${dev.host}): try again when it is done.`);
    if (dev.host === undefined && !dev.mutex.tryAcquire() && !(await dev.mutex.acquire(this.busyTimeoutMs))) {
      throw new LabError('busy', `${instrument} is busy: an earlier call did not finish within ${Math.round(this.busyTimeoutMs / 1000)} s.`);
    }
    let output: unknown;
    let failure: unknown;
    let ok = false;
    const printed = new CallLog();
    let startedAt = new Date();
    let guardToken: unknown = null;
    // the call's record: begun by the caller (a run's step), or here, just before the driver is touched
    const own = opts.recordId === undefined;
    let taskId = opts.recordId ?? 0;
    try {
      // while we waited: the device may have gone, been re-created from a new driver, or been locked
      if (dev.removed) this.device(instrument);
      this.checkOnline(dev);
      this.checkLock(instrument, opts.owner);
      if (dev.entry !== entry) {
        entry = dev.entry;
        m = this.method(dev, method);
        parsed = this.validate(instrument, method, m, args);
      }
      // the safety guard, the last check before the driver: a refusal reaches no driver and leaves no step
      if (this.guard) {
        try {
          guardToken = await this.guard.enforce(this.guardedCall(dev, method, m, parsed, opts.userId));
        } catch (e) {
          this.guardEvents?.blocked({ instrument, method, args: parsed, userId: opts.userId, runId: opts.runId ?? null, error: e });
          throw e;
        }
        this.guardEvents?.allowed(instrument, method);
      }
      const ctx: CallContext = {
        signal: this.abort.signal,
        log: (message: string) => {
          const text = String(message);
          printed.add(text);
          this.emit('log', { instrument, method, message: text });
        },
      };
      startedAt = new Date();
      if (own) {
        try {
          taskId = await this.recorder.begin({
            instrument,
            method,
            args: parsed,
            userId: opts.userId,
            runId: opts.runId,
            phase: opts.phase,
            iteration: opts.iteration,
            stepIndex: opts.stepIndex,
            startedAt,
          });
        } catch (e) {
          if (guardToken !== null) await this.guard!.finish(guardToken, false, null).catch(() => undefined);
          guardToken = null;
          // nothing was touched: the call is not made without its record
          if (!isStoreFault(e)) throw e;
          throw new LabError(e.code, `${instrument}.${method} was not called: its record could not be written. ${e.message}`, undefined, { instrument, method, ...e.data });
        }
      }
      opts.onBegin?.(taskId);
      try {
        output = toJsonValue(await m.run(dev.instance, parsed, ctx));
        ok = true;
      } catch (e) {
        failure = e;
      }
    } finally {
      dev.mutex.release();
    }
    const endedAt = new Date();
    if (guardToken !== null) await this.guard!.finish(guardToken, ok, output).catch(() => undefined); // a state not stored is not the call's failure
    // the instrument refused the arguments before acting on them (a remote host's own checks): no record
    if (!ok && failure instanceof LabError && failure.code === 'invalid_input') {
      if (own) await this.recorder.discard(taskId).catch(() => undefined);
      throw failure;
    }
    // refused by the safety guard of the PC that drives it (a lab agent): it reached no driver, so no record either
    if (!ok && failure instanceof LabError && (failure.code === 'safety' || failure.code === 'safety_file')) {
      if (own) await this.recorder.discard(taskId).catch(() => undefined);
      await this.guard?.refusedThere?.({ instrument, method, args: parsed, userId: opts.userId }, failure).catch(() => undefined);
      throw failure;
    }
    const inDoubt = !ok && (failure as { inDoubt?: boolean } | null)?.inDoubt === true;
    try {
      await this.recorder.complete(taskId, {
        instrument,
        method,
        args: parsed,
        output: ok ? output : null,
        status: ok ? 'ok' : inDoubt ? 'in-doubt' : 'error',
        error: ok ? null : failureRecord(failure),
        startedAt,
        endedAt,
        log: printed.text(),
      });
    } catch (e) {
      // the instrument acted, but its record is not completed: say so (the record stays `running`: in doubt)
      if (!isStoreFault(e)) throw e;
      const what = ok ? `ran (output ${JSON.stringify(output)?.slice(0, 200)})` : `failed (${errorMessage(failure)})`;
      throw new LabError(e.code, `${instrument}.${method} ${what}, but its record could not be written. ${e.message}`, undefined, { instrument, method, ...e.data });
    }
    if (inDoubt) {
      throw new LabError(
        'unavailable',
        `${instrument} went offline during ${method}: ${sentence(errorMessage(failure))} The call may or may not have reached the instrument: it is recorded as in-doubt (task ${taskId}) and is not sent again by itself.`,
        undefined,
        { task_id: taskId, instrument, method, in_doubt: true },
      );
    }
    if (!ok) {
      if (failure instanceof LabError && failure.code === 'unavailable') throw new LabError('unavailable', failure.message, undefined, { task_id: taskId, instrument, method });
      throw new LabError('instrument_error', errorMessage(failure), undefined, { task_id: taskId, instrument, method });
    }
    return { taskId, output };
  }

  /**
   * Check a call without making it: the instrument and method exist and the arguments fit (the same errors a
   * call gives). Returns the arguments as the method would get them, and the method's safety level.
   */
  check(instrument: string, method: string, args: unknown): { args: Record<string, unknown>; safety: Safety } {
    const dev = this.device(instrument);
    const m = this.method(dev, method);
    const declared = dev.schema.methods.find((x) => x.name === method)?.safety ?? DEFAULT_SAFETY;
    // the safety file's `levels` set a method's level without touching its driver
    const safety = this.levelOf?.(instrument, [dev.entry.name], method) ?? declared;
    return { args: this.validate(instrument, method, m, args), safety };
  }

  /** One call as the guard sees it; its readings go through the deck (the called instrument's lock is held already). */
  private guardedCall(dev: Device, method: string, m: CompiledMethod, args: Record<string, unknown>, userId: number | null): Parameters<CallGuard['enforce']>[0] {
    return {
      instrument: dev.name,
      classes: [dev.entry.name],
      method,
      args,
      params: m.schema.params,
      userId,
      read: (instrument, member) => this.readMember(instrument, member, dev),
    };
  }

  /** A call as the guard would see it, without making it (`POST /safety/check`): validated, defaults filled in. */
  guardedCallFor(instrument: string, method: string, args: unknown, userId: number | null): Parameters<CallGuard['enforce']>[0] {
    const dev = this.device(instrument);
    const m = this.method(dev, method);
    return { ...this.guardedCall(dev, method, m, this.validate(instrument, method, m, args), userId), read: (i, member) => this.readMember(i, member, null) };
  }

  /** A reading for a safety rule: a method of `instrument` that takes no arguments, unrecorded, unguarded. */
  private async readMember(instrument: string, member: string, calling: Device | null): Promise<unknown> {
    const dev = this.device(instrument);
    const m = this.method(dev, member);
    this.checkOnline(dev);
    const parsed = this.validate(instrument, member, m, {});
    const ctx: CallContext = { signal: this.abort.signal, log: () => undefined };
    if (dev === calling) return toJsonValue(await m.run(dev.instance, parsed, ctx));
    if (!dev.mutex.tryAcquire() && !(await dev.mutex.acquire(this.busyTimeoutMs))) throw new Error(`${instrument} is busy`);
    try {
      return toJsonValue(await m.run(dev.instance, parsed, ctx));
    } finally {
      dev.mutex.release();
    }
  }

  /**
   * The labware view of an instrument whose driver has a worktable (ivoryOS's `__ivoryos_labware__` and
   * `__ivoryos_labware_state__`, read by its Python host): each labware's grid, what each position holds, tips
   * left. `{ worktable: false }` for any other instrument. Unrecorded and unguarded (it moves nothing), taken in
   * turn with the instrument's calls.
   */
  async labware(instrument: string): Promise<LabwareView> {
    const dev = this.device(instrument);
    const handle = dev.instance as Partial<RemoteHandle> | null;
    if (dev.failure || !remoteInfo(dev.entry.driver) || !handle?.host || typeof handle.name !== 'string') return { worktable: false };
    this.checkOnline(dev);
    if (!dev.mutex.tryAcquire() && !(await dev.mutex.acquire(this.busyTimeoutMs))) throw new LabError('busy', `${instrument} is busy: its labware can be read once its call is done.`);
    try {
      const view = toJsonValue(await handle.host.call(handle.name, LABWARE_VIEW, {}));
      return view && typeof view === 'object' && !Array.isArray(view) ? (view as LabwareView) : { worktable: false };
    } finally {
      dev.mutex.release();
    }
  }

  private method(dev: Device, method: string): CompiledMethod {
    const m = dev.entry.methods.get(method);
    if (m) return m;
    throw new LabError('not_found', `${dev.name} has no method "${method}"; it has ${[...dev.entry.methods.keys()].join(', ')}.`, [{ field: 'method', message: 'unknown method' }]);
  }

  private validate(instrument: string, method: string, m: CompiledMethod, args: unknown): Record<string, unknown> {
    const what = `Invalid arguments for ${instrument}.${method}`;
    const a = args ?? {};
    if (typeof a !== 'object' || Array.isArray(a)) {
      throw invalid(what, [{ field: '(arguments)', message: 'must be an object of parameter values' }]);
    }
    const unknown: string[] = [];
    if (m.keys) for (const k in a) if (!m.keys.has(k)) unknown.push(k);
    const r = m.params.safeParse(a);
    if (r.success && unknown.length === 0) return r.data as Record<string, unknown>;
    const details = r.success ? [] : issueDetails(r.error.issues);
    const expected = m.keys ? [...m.keys].join(', ') || 'none' : '';
    for (const k of unknown) details.push({ field: k, message: `is not a parameter of ${instrument}.${method} (parameters: ${expected})` });
    throw invalid(what, details);
  }
}
