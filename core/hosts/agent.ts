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
import type { HostErrorPayload, HostInstrument } from '../contracts/host.js';
import { HOST_PROTOCOL_VERSION } from '../contracts/host.js';
import type { Deck } from '../deck/index.js';
import { LabError } from '../errors.js';
import { HostLost, RemoteError, type CallEvents } from './python.js';
import { instanceDriver, type HostLink } from './remote.js';

/** One open connection from an agent, as the server sees it. */
export interface AgentSocket {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** What an agent says first. */
export interface AgentHello {
  type: 'hello';
  protocol: number;
  /** The agent's name: its PC, unless `--name` said otherwise. */
  name: string;
  instruments: HostInstrument[];
}

type AgentMessage =
  | { type: 'result'; id: number; value: unknown }
  | { type: 'error'; id: number; error: HostErrorPayload }
  | { type: 'event'; call: number | null; kind: string; text: string; level?: string };

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** An agent's link: its instruments' calls go through whichever connection it has now. */
class AgentLink implements HostLink {
  socket: AgentSocket | null = null;
  instruments: HostInstrument[] = [];
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void; onEvent?: CallEvents['onEvent'] }>();

  constructor(readonly name: string) {}

  call(instrument: string, method: string, args: Record<string, unknown>, events?: CallEvents): Promise<unknown> {
    const socket = this.socket;
    if (!socket) return Promise.reject(new LabError('unavailable', `${instrument} is offline: the agent ${this.name} is not connected.`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onEvent: events?.onEvent });
      socket.send(JSON.stringify({ type: 'call', id, instrument, method, args }));
    });
  }

  async dispose(): Promise<void> {
    // the agent owns its instruments: it closes them when it stops
  }

  onMessage(msg: AgentMessage): void {
    if (msg.type === 'event') {
      if (msg.call !== null) this.pending.get(msg.call)?.onEvent?.({ kind: msg.kind as 'output', text: String(msg.text), ...(msg.level ? { level: msg.level } : {}) });
      return;
    }
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if (msg.type === 'result') p.resolve(msg.value);
    else p.reject(new RemoteError(msg.error));
  }

  /** The connection ended: every call in flight may or may not have happened (in-doubt). */
  lost(reason: string): void {
    this.socket = null;
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const p of calls) p.reject(new HostLost(`the agent ${this.name} went away during the call (${reason})`));
  }
}

export class Agents {
  private readonly links = new Map<string, AgentLink>();

  constructor(private readonly deck: Deck) {}

  /** The agents known since start, with whether they are connected and what they serve. */
  list(): { name: string; connected: boolean; instruments: string[] }[] {
    return [...this.links.values()].map((l) => ({ name: l.name, connected: l.socket !== null, instruments: l.instruments.map((i) => i.name) }));
  }

  /**
   * An agent connected and said hello: its instruments become (or come back as) devices. Refused (the
   * socket closed with the reason) when its name is connected already or an instrument name is taken.
   */
  async connect(socket: AgentSocket, hello: unknown): Promise<AgentLink | null> {
    const h = hello as Partial<AgentHello> | null;
    if (!h || h.type !== 'hello' || h.protocol !== HOST_PROTOCOL_VERSION || typeof h.name !== 'string' || !NAME_RE.test(h.name) || !Array.isArray(h.instruments)) {
      socket.close(4400, `Expected {"type": "hello", "protocol": ${HOST_PROTOCOL_VERSION}, "name", "instruments"} first: a lab agent of another version?`);
      return null;
    }
    let link = this.links.get(h.name);
    if (link?.socket) {
      socket.close(4409, `An agent named ${h.name} is connected already: give this one another --name.`);
      return null;
    }
    link ??= new AgentLink(h.name);
    const names = h.instruments.map((i) => i.name);
    const old = new Set(link.instruments.map((i) => i.name));
    const same = old.size === names.length && names.every((n) => old.has(n));
    try {
      if (!same) {
        // what it serves changed: forget the old devices, make the new ones
        this.deck.removeAgentDevices([...old]);
        await this.deck.addAgentDevices(h.name, h.instruments.map((i) => [i.name, instanceDriver(link!, i)]));
      }
    } catch (e) {
      socket.close(4409, e instanceof Error ? e.message.slice(0, 120) : 'refused');
      return null;
    }
    link.instruments = h.instruments;
    link.socket = socket;
    this.links.set(h.name, link);
    this.deck.setOffline(names, null);
    socket.send(JSON.stringify({ type: 'welcome', name: h.name, instruments: names }));
    return link;
  }

  /** A message from a connected agent. */
  message(link: AgentLink, text: string): void {
    let msg: AgentMessage;
    try {
      msg = JSON.parse(text) as AgentMessage;
    } catch {
      return;
    }
    link.onMessage(msg);
  }

  /** The agent's connection ended: its instruments go offline, its calls in flight fail in-doubt. */
  disconnected(link: AgentLink, socket: AgentSocket, reason: string): void {
    if (link.socket !== socket) return; // an old connection closing after a new one took over
    link.lost(reason);
    this.deck.setOffline(
      link.instruments.map((i) => i.name),
      `the agent ${link.name} is not connected (${reason})`,
    );
  }
}
