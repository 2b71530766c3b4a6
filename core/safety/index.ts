/**
 * The safety guard (DESIGN.md §16): the lab's `ivoryos-safety/1` file, enforced by the deck immediately before
 * a call reaches a driver (core/deck calls `enforce`, then `finish` when the call ends), on every door.
 *
 * Where the file lives: `lab serve --safety FILE`, else `<data-dir>/safety.json` when present; on PostgreSQL
 * the lab-wide copy is in the database (`safety_docs`), seeded from that file when the database has none, and
 * every labdeck looks for a newer version twice a second, so an edit is enforced everywhere within a second.
 * It fails closed: a file that does not parse or validate blocks every call (503 naming the file and the first
 * problem); a reading that fails or takes longer than 10 s, and a state nothing has set, block the call.
 */
import { existsSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { JSONSchema } from '../contracts/index.js';
import { LabError } from '../errors.js';
import type { Store } from '../store/types.js';
import { ClauseContext, Evaluator, Unknown, type CallInfo, type Readings, type SafetyProblem, type Verdict } from './evaluate.js';
import { emptyConfig, parseText, validate, type Level, type Problem, type SafetyConfig } from './format.js';

export { Evaluator, Unknown, type CallInfo, type SafetyProblem, type Verdict } from './evaluate.js';
export { SAFETY_FORMAT, trayGrid, validate, type Level, type Problem, type SafetyConfig } from './format.js';

/** How long a rule's reading may take before it counts as failed (and blocks). */
export const READ_TIMEOUT_MS = 10_000;
/** How often a labdeck on PostgreSQL looks for another's edit of the file or the states. */
export const POLL_MS = 500;

/** One call as the deck hands it to the guard: CallInfo plus how to take a reading and who asks. */
export interface GuardedCall extends CallInfo {
  userId: number | null;
  /** Read `instrument.member` (a method that takes no arguments) through the deck. */
  read(instrument: string, member: string): Promise<unknown>;
}

/** What a call the guard let through will set when it ends (handed back to `finish`). */
export interface Sent {
  call: string;
  effects: { state: string; value: unknown }[];
}

export interface StateEntry {
  value?: unknown;
  unknown?: string;
  at: string;
  by: string;
}

/** What the lab server ships to a `lab agent` (the `safety` message of the agent protocol). */
export interface ShippedSafety {
  /** The lab-wide file as validated here; null when there is none (only the choices drivers declare hold). */
  file: unknown;
  /** Why every call is blocked (the file does not parse or validate), or null. */
  error: string | null;
  /** Where it is on the server (a path, or the database). */
  source: string;
}

export interface SafetyStatus {
  /** Where the file is: a path, or `database` (PostgreSQL). */
  source: string;
  /** The file as stored (null when there is none: nothing configured beyond what drivers declare). */
  file: unknown;
  /** Why calls are blocked (the file does not parse or validate), or null. */
  error: string | null;
  problems: Problem[];
  config: SafetyConfig;
  states: Record<string, StateEntry>;
}

export interface SafetyOptions {
  store: Store;
  dataDir: string;
  /** `lab serve --safety FILE`. */
  file?: string;
  audit(userId: number | null, action: string, detail: unknown): Promise<void>;
  /** Bound on one reading (default 10 s; tests shorten it). */
  readTimeoutMs?: number;
}

export class SafetyGuard {
  readonly path: string;
  private readonly store: Store;
  private readonly audit: SafetyOptions['audit'];
  private readonly readTimeoutMs: number;
  private readonly useDb: boolean;
  private evaluator = new Evaluator(emptyConfig());
  private raw: unknown = null;
  private problems: Problem[] = [];
  private error: string | null = null;
  private states: Record<string, StateEntry> = {};
  private readonly lastValues = new Map<string, unknown>();
  private readonly lastActions = new Map<string, string>();
  private versions: Record<string, number> = {};
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  /** PostgreSQL: the local file that would have seeded the database did not validate (it blocks until fixed). */
  private seedFailed = false;
  /** Who hears of a new file (or a broken one): the agents' relay ships it to each `lab agent` (core/hosts/agent.ts). */
  private readonly listeners = new Set<(file: ShippedSafety) => void>();

  constructor(opts: SafetyOptions) {
    this.store = opts.store;
    this.audit = opts.audit;
    this.readTimeoutMs = opts.readTimeoutMs ?? READ_TIMEOUT_MS;
    this.path = resolve(opts.file ?? join(opts.dataDir, 'safety.json'));
    this.useDb = opts.store.dialect === 'postgres';
  }

  get config(): SafetyConfig {
    return this.evaluator.config;
  }

  /** Load the file (and, on PostgreSQL, seed the database from it when it has none) and the states. */
  async start(): Promise<void> {
    if (this.useDb) {
      const doc = await this.store.safety.get('file');
      if (!doc && existsSync(this.path)) {
        const text = await readFile(this.path, 'utf8');
        if (parseText(text).config) await this.store.safety.put('file', text, null);
        else {
          this.take(text, this.path);
          this.seedFailed = true;
        }
      }
      await this.pollOnce(true);
      this.timer = setInterval(() => void this.pollOnce(false), POLL_MS);
      this.timer.unref();
    } else {
      if (existsSync(this.path)) {
        try {
          this.take(await readFile(this.path, 'utf8'), this.path);
        } catch (e) {
          this.fail(this.path, { path: '(file)', message: `cannot be read: ${e instanceof Error ? e.message : String(e)}` });
        }
      }
      const doc = await this.store.safety.get('states');
      this.states = doc ? parseStates(doc.body) : {};
    }
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Where the file is, for messages: the path, or the database. */
  get source(): string {
    return this.useDb ? 'the database (lab-wide safety file)' : this.path;
  }

  private async pollOnce(first: boolean): Promise<void> {
    if (this.polling) return this.polling;
    this.polling = (async () => {
      try {
        const v = await this.store.safety.versions();
        if (first || v.file !== this.versions.file) {
          const doc = await this.store.safety.get('file');
          if (doc) {
            this.seedFailed = false;
            this.take(doc.body, this.source);
          } else if (!this.seedFailed) this.clear();
        }
        if (first || v.states !== this.versions.states) {
          const doc = await this.store.safety.get('states');
          this.states = doc ? parseStates(doc.body) : {};
        }
        this.versions = v;
      } catch {
        // the database does not answer: what was loaded holds until it does (its calls fail on their own)
      }
    })().finally(() => (this.polling = null));
    return this.polling;
  }

  /** Look for another labdeck's edit now (PostgreSQL); a no-op on SQLite. */
  async refresh(): Promise<void> {
    if (this.useDb) await this.pollOnce(false);
  }

  private clear() {
    this.raw = null;
    this.problems = [];
    this.error = null;
    this.evaluator = new Evaluator(emptyConfig());
    this.changed();
  }

  private take(text: string, where: string): void {
    const r = parseText(text);
    this.raw = r.raw ?? text;
    if (!r.config) return this.fail(where, ...r.problems);
    this.problems = [];
    this.error = null;
    this.evaluator = new Evaluator(r.config);
    this.changed();
  }

  private fail(where: string, ...problems: Problem[]): void {
    this.problems = problems;
    const first = problems[0];
    this.error = `The safety file ${where} is not valid (${first.path}: ${first.message}${problems.length > 1 ? `; ${problems.length - 1} more problem(s)` : ''}): every instrument call is blocked until an admin fixes it (PUT /app/safety or the safety page).`;
    this.evaluator = new Evaluator(emptyConfig());
    this.changed();
  }

  /**
   * The file as a `lab agent` enforces it (core/safety/relayed.ts): the validated file (null: there is none,
   * only declared choices hold), or why every call is blocked.
   */
  shipped(): ShippedSafety {
    return this.error ? { file: null, error: this.error, source: this.source } : { file: this.raw, error: null, source: this.source };
  }

  /** Hear of every new (or broken) file, e.g. to ship it to the agents; returns how to stop. */
  onChange(listener: (file: ShippedSafety) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    if (!this.listeners.size) return;
    const now = this.shipped();
    for (const l of this.listeners) {
      try {
        l(now);
      } catch {
        // a listener's trouble is its own (a closed socket): the guard goes on
      }
    }
  }

  status(): SafetyStatus {
    return { source: this.source, file: this.raw, error: this.error, problems: this.problems, config: this.config, states: { ...this.states } };
  }

  /** The level the file gives a method (`levels`, instrument before class), or undefined. */
  levelOf(instrument: string, classes: readonly string[], method: string): Level | undefined {
    let best: { level: Level; rank: number } | undefined;
    for (const l of this.config.levels) {
      if (l.method !== method && l.method !== '*') continue;
      const c = Evaluator.closeness(l.target, instrument, classes);
      const rank = c < 0 ? (l.target === '*' ? 1000 : -1) : c * 2 + (l.method === '*' ? 1 : 0);
      if (rank >= 0 && (!best || rank < best.rank)) best = { level: l.level, rank };
    }
    return best?.level;
  }

  /**
   * A method's parameters with the lab's limits laid over them (the instrument page's form): a range narrows
   * `minimum`/`maximum`, allowed values become the choices, and the description says which limit it is, so
   * the browser refuses out-of-limit input before it is sent. Top-level fields only; the guard checks all.
   */
  limitedParams(instrument: string, classes: readonly string[], method: string, params: JSONSchema): JSONSchema {
    if (this.error || !this.config.enabled || !this.config.limits.length) return params;
    const props = params.properties as Record<string, JSONSchema> | undefined;
    if (!props) return params;
    const out: Record<string, JSONSchema> = { ...props };
    for (const c of this.evaluator.plan({ instrument, classes, method, args: {}, params }).constraints) {
      if (c.source === 'declared' || c.path.length !== 1 || !out[c.param]) continue;
      const p: JSONSchema = { ...out[c.param] };
      const words: string[] = [];
      if (c.min !== undefined) {
        p.minimum = typeof p.minimum === 'number' ? Math.max(p.minimum, c.min) : c.min;
        words.push(`min ${c.min}`);
      }
      if (c.max !== undefined) {
        p.maximum = typeof p.maximum === 'number' ? Math.min(p.maximum, c.max) : c.max;
        words.push(`max ${c.max}`);
      }
      if (c.allowed !== undefined) {
        p.enum = [...c.allowed];
        words.push(`one of ${c.allowed.join(', ')}`);
      }
      if (c.tray !== undefined) words.push(`a free position on tray ${c.tray}`);
      p.description = `${p.description ? `${p.description}. ` : ''}Lab safety limit: ${words.join(', ')}${c.note ? ` (${c.note})` : ''}.`;
      out[c.param] = p;
    }
    return { ...params, properties: out };
  }

  /* ------------------------------------------------------------------ checking */

  private readings(call: GuardedCall): Readings {
    return {
      read: (ref) => this.read(call, ref),
      last: (ref) => {
        if (!ref.includes('.')) return this.lastActions.has(ref) ? this.lastActions.get(ref) : new Unknown(`nothing has been sent to ${ref} since labdeck started`);
        return this.lastValues.has(ref) ? this.lastValues.get(ref) : new Unknown('it has not been sent since labdeck started');
      },
      state: async (name) => this.stateValue(name, call),
    };
  }

  private async read(call: GuardedCall, ref: string): Promise<unknown> {
    const dot = ref.indexOf('.');
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        call.read(ref.slice(0, dot), ref.slice(dot + 1)),
        new Promise<Unknown>((res) => (timer = setTimeout(res, this.readTimeoutMs, new Unknown(`no answer within ${this.readTimeoutMs / 1000} s`)))),
      ]);
    } catch (e) {
      const text = e !== null && typeof e === 'object' && 'message' in e ? String(e.message) : String(e); // a driver's Error may be another realm's
      return new Unknown(`reading it failed (${text})`);
    } finally {
      clearTimeout(timer);
    }
  }

  private async stateValue(name: string, call: GuardedCall): Promise<unknown> {
    const spec = this.config.states[name];
    if (!spec) return new Unknown('it is not defined');
    if (spec.read) {
      const r = typeof spec.read === 'string' ? { read: spec.read } : spec.read;
      const [, raw] = await new ClauseContext(call, this.readings(call)).operand({ read: r.read, path: r.path });
      if (raw instanceof Unknown) return raw;
      const map = r.map ?? {};
      return map[String(raw)] ?? map[String(raw).toLowerCase()] ?? raw;
    }
    const entry = this.states[name];
    if (!entry) return new Unknown('nothing has set it yet: say what it is on the safety page');
    if (entry.unknown !== undefined) return new Unknown(`${entry.unknown}: say what it is on the safety page`);
    return entry.value;
  }

  /** What the guard would say of this call (nothing is noted or sent). */
  async check(call: GuardedCall): Promise<Verdict> {
    if (this.error) return { allowed: false, problems: [{ field: '(file)', message: this.error }] };
    return this.evaluator.check(call, this.readings(call));
  }

  /** The limits literal arguments break (no readings): what a run's rows and a campaign's space are held to. */
  limits(call: CallInfo): SafetyProblem[] {
    return this.error ? [{ field: '(file)', message: this.error }] : this.evaluator.limits(call);
  }

  /** The broken file's error (503), or null. */
  fileError(): LabError | null {
    return this.error
      ? new LabError(
          'safety_file',
          this.error,
          this.problems.map((p) => ({ field: p.path, message: p.message })),
          { safety_file: this.source },
        )
      : null;
  }

  /**
   * Refuse the call (LabError `safety` 409, audited; `safety_file` 503 when the file is broken) or note it as
   * sent; returns what `finish` applies when it ends.
   */
  async enforce(call: GuardedCall): Promise<Sent | null> {
    const broken = this.fileError();
    if (broken) throw broken;
    const verdict = await this.evaluator.check(call, this.readings(call));
    if (!verdict.allowed) {
      const err = refusal(call.instrument, call.method, verdict.problems);
      await this.blocked(call.userId, { instrument: call.instrument, method: call.method, args: call.args, problems: verdict.problems });
      throw err;
    }
    const effects = await this.effects(call);
    this.lastActions.set(call.instrument, call.method);
    for (const [k, v] of flatten(call.args)) this.lastValues.set(`${call.instrument}.${call.method}.${k}`, v);
    return effects.length ? { call: `${call.instrument}.${call.method}`, effects } : null;
  }

  /** A lab agent's guard refused a call this one let through (its copy of the file was newer, or this one's older). */
  async refusedThere(call: { instrument: string; method: string; args: Record<string, unknown>; userId: number | null }, error: LabError): Promise<void> {
    await this.blocked(call.userId, { instrument: call.instrument, method: call.method, args: call.args, problems: error.details ?? [{ message: error.message }], by: 'agent' });
  }

  /**
   * Every refusal of a call passes here, once: the audit line `safety.blocked`. (The one place to hang anything
   * else that should hear of a block, e.g. a notification.)
   */
  private async blocked(userId: number | null, detail: { instrument: string; method: string; args: Record<string, unknown>; problems: unknown[]; by?: string }): Promise<void> {
    await this.audit(userId, 'safety.blocked', detail).catch(() => undefined);
  }

  /** What this call sets, decided as it is sent (whether an effect applies depends on the deck before it). */
  private async effects(call: GuardedCall): Promise<Sent['effects']> {
    const out: Sent['effects'] = [];
    const states = Object.entries(this.config.states);
    if (!states.length) return out;
    const ctx = new ClauseContext(call, this.readings(call));
    for (const [name, spec] of states) {
      if (spec.read) continue;
      for (const e of spec.set_by) {
        if (e.method !== call.method || !Evaluator.matches(e.target, call.instrument, call.classes)) continue;
        let applies: boolean | null = true;
        let why = '';
        for (const c of e.if ?? []) {
          [applies, why] = await ctx.clause(c);
          if (applies !== true) break;
        }
        if (applies === false) continue;
        let value: unknown = e.value;
        if (applies === null) value = new Unknown(`${call.instrument}.${call.method} may have changed it (${why})`);
        else if (typeof value === 'object' && value !== null && 'arg' in value) {
          const [, v] = await ctx.operand({ arg: String(value.arg) });
          value = v;
        }
        out.push({ state: name, value });
        break; // the first that applies decides
      }
    }
    return out;
  }

  /** A call `enforce` let through has ended: its states take their new value, or become unknown when it failed. */
  async finish(sent: Sent | null, ok: boolean, output: unknown): Promise<void> {
    if (!sent) return;
    const at = new Date().toISOString();
    for (const { state, value } of sent.effects) {
      let entry: StateEntry;
      if (!ok) entry = { unknown: `${sent.call} did not finish`, at, by: sent.call };
      else if (value instanceof Unknown) entry = { unknown: value.reason, at, by: sent.call };
      else if (typeof value === 'object' && value !== null && 'result' in value) {
        const path = String((value as { result: string }).result);
        const found = path ? path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), output) : output;
        entry = found === undefined || found === null ? { unknown: `${sent.call} did not report it`, at, by: sent.call } : { value: found, at, by: sent.call };
      } else entry = { value, at, by: sent.call };
      this.states[state] = entry;
    }
    await this.saveStates(null);
  }

  private async saveStates(userId: number | null): Promise<void> {
    const v = await this.store.safety.put('states', JSON.stringify(this.states), userId);
    this.versions.states = v;
  }

  /* ------------------------------------------------------------------ changing */

  /** Validate and replace the file; 400 naming each problem (the old file stays). Audited with before and after. */
  async replace(raw: unknown, userId: number | null): Promise<SafetyStatus> {
    const { config, problems } = validate(raw);
    if (!config) {
      throw new LabError(
        'invalid_input',
        `The safety file is not valid: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}. The old file is kept.`,
        problems.map((p) => ({ field: p.path, message: p.message })),
      );
    }
    const before = this.raw;
    const text = `${JSON.stringify(raw, null, 2)}\n`;
    if (this.useDb) {
      this.versions.file = await this.store.safety.put('file', text, userId);
    } else {
      const scratch = `${this.path}.${process.pid}.tmp`;
      await writeFile(scratch, text, { mode: 0o600 });
      await rename(scratch, this.path);
    }
    this.take(text, this.source);
    // a state that is gone, or is now read from its instrument, has nothing left to remember
    const tracked = Object.keys(this.states).filter((n) => config.states[n] && !config.states[n].read);
    if (tracked.length !== Object.keys(this.states).length) {
      this.states = Object.fromEntries(tracked.map((n) => [n, this.states[n]]));
      await this.saveStates(userId);
    }
    await this.audit(userId, 'safety.replace', { before, after: raw });
    return this.status();
  }

  /** A person says what a state is (null: that they do not know). */
  async setState(name: string, value: unknown, userId: number | null, by: string): Promise<StateEntry> {
    const spec = Object.hasOwn(this.config.states, name) ? this.config.states[name] : undefined;
    if (!spec)
      throw new LabError('not_found', `There is no state "${name}" in the safety file (states: ${Object.keys(this.config.states).join(', ') || 'none'}).`, [
        { field: 'state', message: 'unknown state' },
      ]);
    if (spec.read) throw new LabError('invalid_input', `"${name}" is read from the instrument; it cannot be set by hand.`, [{ field: 'state', message: 'read from the instrument' }]);
    if (value !== null && value !== '' && Array.isArray(spec.values) && spec.values.length && !spec.values.includes(String(value))) {
      throw new LabError('invalid_input', `"${name}" is one of ${spec.values.join(', ')}, not ${JSON.stringify(value)}.`, [{ field: 'value', message: `one of ${spec.values.join(', ')}` }]);
    }
    const before = this.states[name] ?? null;
    const at = new Date().toISOString();
    const entry: StateEntry = value === null || value === '' ? { unknown: `${by} marked it as not known`, at, by } : { value, at, by };
    this.states[name] = entry;
    await this.saveStates(userId);
    await this.audit(userId, 'safety.state', { state: name, before, after: entry });
    return entry;
  }
}

/** The refusal of one call: 409 `safety`, one detail per problem. */
export function refusal(instrument: string, method: string, problems: SafetyProblem[]): LabError {
  const text = problems.map((p) => p.message).join(' ');
  return new LabError(
    'safety',
    `Blocked by the safety guard: ${instrument}.${method}: ${text}`,
    problems.map((p) => ({ field: p.field, message: p.message, ...(p.rule !== undefined ? { rule: p.rule } : { limit: p.limit }), value: p.value })),
    { instrument, method },
  );
}

function flatten(args: Record<string, unknown>, prefix = '', out = new Map<string, unknown>()): Map<string, unknown> {
  for (const [k, v] of Object.entries(args ?? {})) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flatten(v as Record<string, unknown>, `${prefix}${k}.`, out);
    else out.set(prefix + k, v);
  }
  return out;
}

function parseStates(text: string): Record<string, StateEntry> {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, StateEntry>) : {};
  } catch {
    return {}; // unreadable: every tracked state is unknown, which blocks until someone says what it is
  }
}
