/**
 * Operations on the safety guard (DESIGN.md §16, §15): the file and its problems, an admin replacing it
 * (whole, audited `safety.replace` with before and after), what the guard would say of a call without making
 * it, and a person settling a state (audited `safety.state`). The guard itself (core/safety) enforces every
 * call on the deck that drives the instrument, whichever door asked; these are what a door reads and changes.
 */
import type { JSONSchema } from '../contracts/index.js';
import { LabError } from '../errors.js';
import type { SafetyStatus, StateEntry } from '../safety/index.js';
import { parseText } from '../safety/format.js';
import type { Caller } from './caller.js';
import type { Lab } from './lab.js';

const admin = (caller: Caller, what: string) => {
  if (caller.role !== 'admin') throw new LabError('forbidden', `Only an admin ${what}.`);
};

export function safetyOperations(lab: Pick<Lab, 'safety' | 'deck'>) {
  const { safety, deck } = lab;
  const ops = {
    /** The guard as it is now (the file read again first: another labdeck, or a person, may have changed it). */
    async status(): Promise<SafetyStatus> {
      await safety.refresh();
      return safety.status();
    },

    /** The guard as last read (no reading: for a page shown after a change). */
    current(): SafetyStatus {
      return safety.status();
    },

    /** Replace the file (admins): validated whole, each problem named by its path; the old file is kept on a refusal. */
    replace(caller: Caller, file: unknown): Promise<SafetyStatus> {
      admin(caller, 'replaces the safety file');
      return safety.replace(file, caller.userId);
    },

    /** Replace the file from its JSON text (the page's editor): not JSON is a 400 naming `text`. */
    replaceText(caller: Caller, text: string): Promise<SafetyStatus> {
      admin(caller, 'replaces the safety file');
      const parsed = parseText(text);
      if (parsed.raw === undefined)
        throw new LabError('invalid_input', `The safety file ${parsed.problems[0].message}. The old file is kept.`, [{ field: 'text', message: parsed.problems[0].message }]);
      return safety.replace(parsed.raw, caller.userId);
    },

    /** What the guard would say of a call, without making it: the arguments checked as the call checks them. */
    async check(caller: Caller, input: { instrument: string; method: string; args?: Record<string, unknown> }) {
      await safety.refresh();
      return safety.check(deck.guardedCallFor(input.instrument, input.method, input.args ?? {}, caller.userId));
    },

    /** A person says what a state is (null: unknown), audited. */
    setState(caller: Caller, name: string, value: unknown): Promise<StateEntry> {
      return safety.setState(name, value, caller.userId, caller.name);
    },

    /** A method's safety level as the lab's file sets it (undefined: the driver's own). */
    levelOf(instrument: string, classes: readonly string[], method: string) {
      return safety.levelOf(instrument, classes, method);
    },

    /** A method's parameter schema with the lab's limits on it (what a form and a client show). */
    limitedParams(instrument: string, classes: readonly string[], method: string, params: JSONSchema): JSONSchema {
      return safety.limitedParams(instrument, classes, method, params);
    },
  };
  return ops;
}

export type SafetyOperations = ReturnType<typeof safetyOperations>;
