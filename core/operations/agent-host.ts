/**
 * `lab agent`'s operations (DESIGN.md §11-12, docs/architecture.md): a deck served to a lab server elsewhere.
 * The agent is the far end of the relay: a call the server relays to it is made here with a `relay` caller,
 * checked by the deck (the instrument, its lock, the arguments), and recorded by the server that asked (it
 * wrote the record before relaying, and writes its outcome); the agent records nothing itself. The lab's
 * safety file, as the server ships it, guards every call here too (core/safety/relayed.ts): until it has
 * come, every call is refused (fail-closed).
 */
import { resolve } from 'node:path';
import { LABWARE_VIEW } from '../contracts/host.js';
import type { InstrumentSchema } from '../contracts/index.js';
import { Deck, NO_RECORDS } from '../deck/index.js';
import { LabError } from '../errors.js';
import { PythonModules } from '../hosts/index.js';
import type { ShippedSafety } from '../safety/index.js';
import { RelayedSafety } from '../safety/relayed.js';
import { isRelayed, type Caller } from './caller.js';
import type { CallInput } from './instruments.js';

export interface AgentHost {
  /** This PC's instruments, as the hello describes them. */
  list(): InstrumentSchema[];
  /** A call the server relayed: made here (its output), or refused as the deck refuses it. */
  call(caller: Caller, input: CallInput): Promise<{ output: unknown }>;
  /** What an instrument logs while it works (sent back with the call it runs). */
  onLog(listener: (e: { instrument: string; message: string }) => void): void;
  /** The lab's safety file as the server shipped it (its `safety` message); what is enforced now, in words. */
  safety(shipped: Partial<ShippedSafety>): string;
  close(): Promise<void>;
}

/** Load the agent's deck (Python or TypeScript): its instruments, ready to be called. */
export async function openAgentHost(opts: { deck: string; python?: string; log: (line: string) => void }): Promise<AgentHost> {
  const python = new PythonModules({ python: opts.python, log: opts.log });
  // the server records every call: here a call is only run
  const deck = new Deck({ records: NO_RECORDS, foreign: python });
  python.attach(deck);
  const guard = new RelayedSafety();
  deck.guard = guard;
  try {
    await deck.loadDeck(resolve(opts.deck));
  } catch (e) {
    await deck.close().catch(() => undefined);
    await python.close().catch(() => undefined);
    throw e;
  }
  return {
    list: () => deck.list(),
    async call(caller, input) {
      if (!isRelayed(caller)) throw new LabError('internal', "A lab agent's instruments are called through the lab server it serves (a relayed call).");
      // the labware view (a worktable's grid, contents, tips) is read, not called: the same answer as on the server's own host
      if (input.method === LABWARE_VIEW) return { output: (await deck.labware(input.instrument)) as unknown };
      const { output } = await deck.call(input.instrument, input.method, input.args, { userId: caller.userId });
      return { output };
    },
    onLog: (listener) => void deck.on('log', listener),
    safety(shipped) {
      guard.take(shipped);
      return guard.describe();
    },
    async close() {
      await deck.close();
      await python.close();
    },
  };
}
