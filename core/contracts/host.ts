/**
 * The instrument-host protocol, version 1: the messages between labdeck's runtime and a process that hosts
 * instruments outside it (the Python host today; an agent on another PC or a host in another language
 * later). Documented for host authors in docs/python.md, "The host protocol".
 *
 * Framing: one JSON object per line (UTF-8, `\n`), over a channel that carries nothing else: for a child
 * process its original stdin (requests) and stdout (replies and events); the host points its own stdout
 * elsewhere before any instrument code runs, so nothing a driver prints can reach the channel.
 *
 * The host speaks first (`hello`). Every request has an integer `id`; its reply is a `result` or an `error`
 * with the same id, in any order: several requests are in flight at once. `event` messages carry what a
 * driver prints or logs during a call (`call` = the request id) and may arrive before that call's reply.
 */
import type { JSONSchema, MethodSchema } from './index.js';

/**
 * A `call` of this method answers the instrument's labware view (ivoryOS's worktable protocol, read by the
 * Python host's worktable.py) instead of calling the driver: a dunder, so never one of its methods.
 */
export const LABWARE_VIEW = '__ivoryos_labware__';

export const HOST_PROTOCOL_VERSION = 1 as const;

/** A `lab agent`'s name: its PC's host name by default (letters, digits, `.`, `_`, `-`; at most 64). */
export const AGENT_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface HelloMessage {
  type: 'hello';
  protocol: number;
  /** What kind of host this is ("python"). */
  host: string;
  language: string;
  /** The language runtime's version ("3.11.7"). */
  version: string;
  executable?: string;
  pid?: number;
}

/** A method as the host describes it: the interface schema of §3, plus how the host reaches it. */
export interface HostMethod extends Omit<MethodSchema, 'order'> {
  order?: number;
  async?: boolean;
  /** `method`, a readable `property`, or a property's `setter` (`set_<name>`). */
  kind?: 'method' | 'property' | 'setter';
}

/** A live instrument in the host. */
export interface HostInstrument {
  name: string;
  /** Its class (shown as the driver). */
  class: string;
  description: string;
  methods: HostMethod[];
}

/** An instrument of an `ivoryos-deck/1` file that did not load: the stage that failed and its error. */
export interface HostFailedInstrument {
  name: string;
  import?: string | null;
  class?: string | null;
  stage: 'config' | 'import' | 'init' | 'setup';
  error: string;
  detail?: string;
}

/** A class the host can instantiate (`connect`): a temporary device's driver. */
export interface HostClass {
  /** Stable within the host: `<file>::<ClassName>`. */
  id: string;
  name: string;
  file: string;
  description: string;
  /** JSON Schema (type object) of the constructor's arguments: the connect form. */
  options: JSONSchema;
  inferredFields: string[];
  /** Constructor arguments that take another instrument: the caller passes its name. */
  instrumentParams?: string[];
  methods: HostMethod[];
}

export type HostRequest =
  | { type: 'ping' }
  | { type: 'describe' }
  /** Run a deck file as its author runs it; its top-level instances become instruments. `reserved`: names the host must refuse. */
  | { type: 'load_deck'; file: string; reserved?: string[] }
  /** Build one instrument of an `ivoryos-deck/1` file again (it failed at load; the lab has fixed it). */
  | { type: 'retry_instrument'; file: string; name: string }
  /** Import a driver module; its classes become connectable (again: replaced). */
  | { type: 'load_module'; file: string }
  | { type: 'connect'; class: string; name: string; kwargs: Record<string, unknown> }
  /** Close an instrument (its close(), disconnect() or __exit__) and forget it. */
  | { type: 'dispose'; name: string }
  | { type: 'call'; instrument: string; method: string; args: Record<string, unknown> }
  | { type: 'console'; code: string; timeout_ms: number }
  /** Dispose everything and exit. */
  | { type: 'shutdown' };

export interface HostErrorPayload {
  /** exception | invalid_args | not_found | conflict | load_error; from a lab agent also safety | safety_file (its guard refused) */
  kind: string;
  /** The exception's type name. */
  type: string;
  message: string;
  traceback?: string;
  /** The offending argument (invalid_args). */
  field?: string;
  /** Where a load failed. */
  file?: string;
  line?: number;
  /** The names that clashed (conflict). */
  names?: string[];
}

export type HostMessage =
  | HelloMessage
  | { type: 'result'; id: number; value: unknown }
  | { type: 'error'; id: number; error: HostErrorPayload }
  /** A call's printed `output` line, or a `log` record with its level. */
  | { type: 'event'; call: number | null; kind: 'output' | 'log' | 'progress'; text: string; level?: string };

export interface ConsoleAnswer {
  success: boolean;
  result: unknown;
  stdout: string;
  error: string | null;
}
