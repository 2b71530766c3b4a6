/**
 * Instruments on other PCs (DESIGN.md §11-12): a `lab agent` connects out to this labdeck over a WebSocket
 * and serves its deck with the instrument-host protocol (core/contracts/host.ts): `hello` with what it serves,
 * then `call` → `result` | `error`, with `event`s for what a call logs. Its instruments become devices of the
 * deck here, with the same forms, locks and records as local ones; calls are relayed to the agent.
 *
 * An agent that drops takes its instruments offline (calls answer 503); a call in flight then is failed
 * in-doubt (recorded, never re-sent by itself). When it connects again, they come back online.
 * Nothing here knows about HTTP or WebSockets: the server hands each connection in as an AgentSocket.
 */
import type { HostInstrument } from '../contracts/host.js';
import type { Deck } from '../deck/index.js';
import { LabError } from '../errors.js';
import type { Store } from '../store/types.js';
import { agentBack, agentLost } from '../notify/hosts.js';
import { AgentHelloSchema, AgentMessageSchema, parseAgentText, type AgentMessage } from './agent-protocol.js';
import { AgentNames, type AgentToken } from './agent-names.js';
import { HostLost, RemoteError, type CallEvents } from './python.js';
import { instanceDriver, type HostLink } from './remote.js';
import type { SafetyGuard, ShippedSafety } from '../safety/index.js';
import { vetInstrument } from './vet.js';

/** One open connection from an agent, as the server sees it. */
export interface AgentSocket {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** How long a relayed call may go unanswered before it fails in doubt (503); `lab serve --agent-call-timeout`. */
export const DEFAULT_AGENT_CALL_TIMEOUT_MS = 10 * 60_000;
/** Most agent names known at once (connected or not); a new name past this is refused. */
export const MAX_AGENTS = 256;
/** Most agent names one token serves under (one PC is one name; a few for a PC with several decks). */
export const MAX_NAMES_PER_TOKEN = 16;
/** Refusals of one token under one name are audited at most this often (a refused agent retries). */
const REFUSAL_AUDIT_MS = 60_000;

export interface AgentsOptions {
  deck: Deck;
  store: Store;
  audit(userId: number | null, action: string, detail: unknown): Promise<void>;
  callTimeoutMs?: number;
  /**
   * The lab's safety guard: its file is shipped to every agent when it connects and whenever it changes, and
   * the agent enforces it on the PC that drives the instrument (core/safety/relayed.ts).
   */
  safety?: Pick<SafetyGuard, 'shipped' | 'onChange'>;
}

/** An agent's link: its instruments' calls go through whichever connection it has now. */
class AgentLink implements HostLink {
  socket: AgentSocket | null = null;
  instruments: HostInstrument[] = [];
  /** The agent token it last connected with. */
  tokenId = 0;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void; onEvent?: CallEvents['onEvent']; timer: NodeJS.Timeout }>();

  constructor(
    readonly name: string,
    private readonly timeoutMs: number,
  ) {}

  call(instrument: string, method: string, args: Record<string, unknown>, events?: CallEvents): Promise<unknown> {
    const socket = this.socket;
    if (!socket) return Promise.reject(new LabError('unavailable', `${instrument} is offline: the agent ${this.name} is not connected.`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // an agent that never answers must not hold its instrument (and its callers) for ever
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        const s = Math.round(this.timeoutMs / 1000);
        reject(new HostLost(`the agent ${this.name} did not answer ${instrument}.${method} within ${s} s: it may or may not have been done there, and it is not sent again`));
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, onEvent: events?.onEvent, timer });
      socket.send(JSON.stringify({ type: 'call', id, instrument, method, args }));
    });
  }

  async dispose(): Promise<void> {
    // the agent owns its instruments: it closes them when it stops
  }

  onMessage(msg: AgentMessage): void {
    if (msg.type === 'event') {
      if (msg.call !== null) this.pending.get(msg.call)?.onEvent?.({ kind: msg.kind, text: msg.text, ...(msg.level ? { level: msg.level } : {}) });
      return;
    }
    const p = this.pending.get(msg.id);
    if (!p) return; // an answer to a call that gave up waiting, or to none
    this.pending.delete(msg.id);
    clearTimeout(p.timer);
    if (msg.type === 'result') p.resolve(msg.value);
    else p.reject(new RemoteError(msg.error));
  }

  /** How many calls wait for this agent's answer. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** The connection ended: every call in flight may or may not have happened (in-doubt). */
  lost(reason: string): void {
    this.socket = null;
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const p of calls) {
      clearTimeout(p.timer);
      p.reject(new HostLost(`the agent ${this.name} went away during the call (${reason})`));
    }
  }
}

export class Agents {
  private readonly links = new Map<string, AgentLink>();
  /** Names whose hello is being taken now (a second hello under one of them waits for nothing: refused). */
  private readonly connecting = new Set<string>();
  private readonly names: AgentNames;
  private readonly deck: Deck;
  private readonly refusals = new Map<string, number>();
  readonly callTimeoutMs: number;

  constructor(private readonly opts: AgentsOptions) {
    this.deck = opts.deck;
    this.names = new AgentNames(opts.store);
    this.callTimeoutMs = opts.callTimeoutMs ?? DEFAULT_AGENT_CALL_TIMEOUT_MS;
    // a new (or broken) safety file reaches every connected agent before the next call relayed to it
    opts.safety?.onChange((file) => {
      for (const l of this.links.values()) if (l.socket) shipSafety(l.socket, file);
    });
  }

  /** Bind an agent's name to an agent token (an admin making the token for that PC): see ./agent-names.ts. */
  async bindName(agent: string, token: AgentToken, byUser: number): Promise<void> {
    const before = await this.names.bind(agent, token, byUser);
    // a connection under that name with another token is let go: it is no longer that name's
    const link = this.links.get(agent);
    if (link?.socket && link.tokenId !== token.id) link.socket.close(4403, `An admin bound the agent name ${agent} to another agent token.`);
    await this.opts.audit(byUser, 'agent.name.bound', { agent, token_id: token.id, token_name: token.name, ...(before ? { taken_from: before } : {}) });
  }

  /** How many calls sent to the agent `name` wait for its answer (0 for an agent not known). */
  inFlight(name: string): number {
    return this.links.get(name)?.inFlight ?? 0;
  }

  /** The agents known since start, with whether they are connected and what they serve. */
  list(): { name: string; connected: boolean; instruments: string[] }[] {
    return [...this.links.values()].map((l) => ({ name: l.name, connected: l.socket !== null, instruments: l.instruments.map((i) => i.name) }));
  }

  private async refuse(socket: AgentSocket, code: number, reason: string, audit?: { agent: string; token: AgentToken }): Promise<null> {
    socket.close(code, reason);
    if (audit) {
      const k = `${audit.token.id}:${audit.agent}`;
      const last = this.refusals.get(k);
      if (last === undefined || Date.now() - last > REFUSAL_AUDIT_MS) {
        if (this.refusals.size >= 1000) this.refusals.clear();
        this.refusals.set(k, Date.now());
        await this.opts.audit(null, 'agent.refused', { agent: audit.agent, token_id: audit.token.id, token_name: audit.token.name, reason });
      }
    }
    return null;
  }

  /**
   * An agent connected with `token` and said hello (`text`, as it came): its instruments become (or come back
   * as) devices. Refused (the socket closed with the reason) when the hello does not fit the protocol (4400),
   * the name belongs to another token (4403), or is connected already, or an instrument name is taken (4409).
   * An instrument the rules of ./vet.ts refuse is left out, and the welcome says why. Never throws.
   */
  async connect(socket: AgentSocket, text: string, token: AgentToken): Promise<AgentLink | null> {
    const parsed = parseAgentText(AgentHelloSchema, text);
    if (!parsed.ok) return this.refuse(socket, 4400, `Expected the hello first (${parsed.reason}): a lab agent of another version?`);
    const h = parsed.msg;
    if (this.connecting.has(h.name) || this.links.get(h.name)?.socket) return this.refuse(socket, 4409, `An agent named ${h.name} is connected already: give this one another --name.`);
    if (!this.links.has(h.name) && this.links.size >= MAX_AGENTS) return this.refuse(socket, 4409, `This lab knows ${MAX_AGENTS} agents already: no new agent name is taken.`);
    const mine = [...this.links.values()].filter((l) => l.tokenId === token.id && l.name !== h.name).length;
    if (mine >= MAX_NAMES_PER_TOKEN) return this.refuse(socket, 4409, `This agent token serves under ${MAX_NAMES_PER_TOKEN} names already: make another token for another PC.`);
    this.connecting.add(h.name);
    try {
      const owner = await this.names.claim(h.name, token);
      if (!owner.ok) {
        return await this.refuse(socket, 4403, `The agent name ${h.name} belongs to another agent token (${owner.owner}): an admin binds it to a new token.`, { agent: h.name, token });
      }
      if (owner.bound) await this.opts.audit(null, 'agent.name.bound', { agent: h.name, token_id: token.id, token_name: token.name });
      const accepted: HostInstrument[] = [];
      const refused: { name: string; reason: string }[] = [];
      for (const i of h.instruments) {
        const v = vetInstrument(i);
        if (!v.ok) refused.push({ name: i.name.slice(0, 64), reason: v.reason });
        else if (accepted.some((a) => a.name === i.name)) refused.push({ name: i.name, reason: `${i.name} is described twice` });
        else accepted.push(v.instrument);
      }
      for (const r of refused) this.deck.emit('warning', { device: r.name, message: `refused from the agent ${h.name}: ${r.reason}` });
      const link = this.links.get(h.name) ?? new AgentLink(h.name, this.callTimeoutMs);
      try {
        await this.serve(link, accepted);
      } catch (e) {
        return await this.refuse(socket, 4409, e instanceof Error ? e.message : 'refused');
      }
      link.instruments = accepted;
      link.socket = socket;
      link.tokenId = token.id;
      this.links.set(h.name, link);
      const names = accepted.map((i) => i.name);
      this.deck.setOffline(names, null);
      socket.send(JSON.stringify({ type: 'welcome', name: h.name, instruments: names, ...(refused.length ? { refused } : {}) }));
      // the lab's safety file goes right behind the welcome, so it is there before any call (messages keep their order)
      if (this.opts.safety) shipSafety(socket, this.opts.safety.shipped());
      void agentBack(this.opts.store, h.name).catch(() => undefined);
      return link;
    } catch (e) {
      // the store could not be asked: the agent tries again later
      return await this.refuse(socket, 1011, `The server could not take this agent now: ${e instanceof Error ? e.message : String(e)}`).catch(() => null);
    } finally {
      this.connecting.delete(h.name);
    }
  }

  /**
   * Make the deck's devices what the agent serves now: the ones it no longer serves go, new ones come, and
   * the ones it still serves take what it describes now (a reconnect's description replaces the old one).
   */
  private async serve(link: AgentLink, instruments: HostInstrument[]): Promise<void> {
    const now = new Map(instruments.map((i) => [i.name, i]));
    const before = new Set(link.instruments.map((i) => i.name));
    const added = instruments.filter((i) => !before.has(i.name));
    await this.deck.addAgentDevices(
      link.name,
      added.map((i) => [i.name, instanceDriver(link, i)]),
    );
    this.deck.removeAgentDevices([...before].filter((n) => !now.has(n)));
    for (const n of before) {
      const i = now.get(n);
      if (i) this.deck.replaceAgentDriver(n, instanceDriver(link, i));
    }
  }

  /**
   * A message from a connected agent (`text`, as it came). Null when it was taken; otherwise why it does not
   * fit the protocol (the server then closes the connection with that reason). Never throws.
   */
  message(link: AgentLink, text: string): string | null {
    const parsed = parseAgentText(AgentMessageSchema, text);
    if (!parsed.ok) return `Not a message of the agent protocol (${parsed.reason}).`;
    link.onMessage(parsed.msg);
    return null;
  }

  /** The agent's connection ended: its instruments go offline, its calls in flight fail in-doubt. */
  disconnected(link: AgentLink, socket: AgentSocket, reason: string): void {
    if (link.socket !== socket) return; // an old connection closing after a new one took over
    // with work in flight, a person is told (core/notify): no state of the database changes here
    if (link.inFlight > 0)
      void agentLost(
        this.opts.store,
        link.name,
        link.instruments.map((i) => i.name),
        link.inFlight,
        reason,
      ).catch(() => undefined);
    link.lost(reason);
    this.deck.setOffline(
      link.instruments.map((i) => i.name),
      `the agent ${link.name} is not connected (${reason})`,
    );
  }
}

/** The agent protocol's `safety` message: the lab-wide file the agent enforces (or why every call is blocked). */
function shipSafety(socket: AgentSocket, file: ShippedSafety): void {
  socket.send(JSON.stringify({ type: 'safety', ...file }));
}
