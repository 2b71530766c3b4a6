/**
 * The safety guard on a `lab agent` PC (issue 28 item 2: a relayed call is enforced by the host that drives the
 * instrument). The lab server ships its lab-wide file to each agent when it connects and whenever the file
 * changes (the agent protocol's `safety` message, core/hosts/agent.ts); the agent's deck then checks every
 * call it is sent against that file's limits, trays and the drivers' declared choices, at the arguments as the
 * driver gets them (omitted ones at its defaults), before the call reaches a driver.
 *
 * It fails closed: until a file (or the word that there is none) has come from the server, and while the
 * server's file is broken, every call is refused. Rules and states need the whole lab's readings and the
 * database: the server checks those before it relays a call (its deck's guard, ./index.ts), so a call reaches
 * an agent's driver only past both.
 */
import type { CallGuard } from '../deck/index.js';
import { LabError } from '../errors.js';
import { Evaluator } from './evaluate.js';
import { emptyConfig, validate } from './format.js';
import { refusal, type ShippedSafety } from './index.js';

export class RelayedSafety implements CallGuard {
  private evaluator: Evaluator | null = null;
  private error: string | null = null;
  private source = '';

  /** Whether a file (or none) has come from the server. */
  get received(): boolean {
    return this.evaluator !== null || this.error !== null;
  }

  /** What the agent enforces now, in words (its log line). */
  describe(): string {
    if (this.error) return `the lab's safety file is broken, so every call is refused: ${this.error}`;
    if (!this.evaluator) return 'no safety file has come from the server yet, so every call is refused';
    const c = this.evaluator.config;
    if (!c.enabled) return `the lab's safety file (${this.source}) is disabled`;
    return `enforcing the lab's safety file (${this.source}): ${c.limits.length} limit(s), ${Object.keys(c.trays).length} tray(s), and the drivers' declared choices; its rules are checked by the server`;
  }

  /** Take what the server shipped; a file this agent cannot validate blocks every call, as a broken one does. */
  take(shipped: Partial<ShippedSafety>): void {
    this.source = typeof shipped.source === 'string' ? shipped.source.slice(0, 300) : 'the lab server';
    if (typeof shipped.error === 'string' && shipped.error) {
      this.error = shipped.error.slice(0, 2000);
      this.evaluator = null;
      return;
    }
    if (shipped.file === null || shipped.file === undefined) {
      this.error = null;
      this.evaluator = new Evaluator(emptyConfig());
      return;
    }
    const { config, problems } = validate(shipped.file);
    if (!config) {
      this.error = `the file the server sent does not validate here (${problems[0]?.path}: ${problems[0]?.message}): is this lab agent of another labdeck version?`;
      this.evaluator = null;
      return;
    }
    this.error = null;
    this.evaluator = new Evaluator(config);
  }

  async enforce(call: Parameters<CallGuard['enforce']>[0]): Promise<null> {
    if (this.error) throw new LabError('safety_file', `Refused on this agent's PC: ${this.error}`, [{ field: '(file)', message: this.error }]);
    if (!this.evaluator) {
      const why = "this lab agent has not received the lab's safety file from its server (a labdeck server that does not ship one?): it runs no call until it has";
      throw new LabError('safety_file', `Refused on this agent's PC: ${why}.`, [{ field: '(file)', message: why }]);
    }
    const problems = this.evaluator.limits({ instrument: call.instrument, classes: call.classes, method: call.method, args: call.args, params: call.params });
    if (problems.length) throw refusal(call.instrument, call.method, problems);
    return null;
  }

  async finish(): Promise<void> {
    // the states are the server's: nothing is kept here
  }
}
