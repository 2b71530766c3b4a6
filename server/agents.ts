/**
 * Where `lab agent` connects (DESIGN.md §12): a WebSocket at `/app/agent` (and `/agent`), opened by the agent
 * on the instrument PC (no port opened there), authenticated by an agent token (`labagent_…`, made by an
 * admin with `POST /app/account/tokens {"scope": "agent"}`). Anything else on that path is refused before the
 * upgrade: no token, a user's token, a revoked one → 401. What the agent says goes to the runtime's Agents.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { systemCaller, type AgentLink } from '../core/operations/index.js';
import type { Runtime } from '../core/runtime.js';

export const AGENT_PATHS = ['/app/agent', '/agent'];
/** Largest message an agent may send (a call's result): the same bound as a JSON request body. */
const MAX_MESSAGE = 16 * 1024 * 1024;
/** A connection that answers no ping for this long is taken for gone (a cut cable says nothing). */
const PING_MS = 5_000;
/** The agent must say hello this soon after connecting. */
const HELLO_MS = 10_000;

function refuse(socket: Duplex, status: number, message: string) {
  const body = JSON.stringify({ error: { code: status === 401 ? 'unauthenticated' : 'invalid_input', message } });
  socket.end(
    `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** A close reason within the 123 bytes WebSocket allows (ws throws on a longer one), cut at a character. */
export function closeReason(text: string): string {
  if (Buffer.byteLength(text) <= 123) return text;
  let out = '';
  for (const ch of text) {
    if (Buffer.byteLength(out + ch) > 120) break;
    out += ch;
  }
  return `${out}…`;
}

/**
 * Accept agents on `server`'s upgrade requests for AGENT_PATHS; other upgrades are left alone. `pingMs` is
 * how often a connection is pinged (a test makes it short; `lab serve` keeps the default).
 */
export function attachAgents(server: Server, runtime: Runtime, { pingMs = PING_MS }: { pingMs?: number } = {}): void {
  // ws is loaded by the first agent that connects, not at start-up (issue 16 item 5)
  let wss: Promise<WebSocketServer> | null = null;
  const upgrader = () => (wss ??= import('ws').then(({ WebSocketServer }) => new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE })));
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0];
    if (!AGENT_PATHS.includes(path)) return;
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!m) return refuse(socket, 401, 'An agent connects with "Authorization: Bearer <agent token>" (lab agent --token).');
    runtime.ops.accounts
      .agentCaller(m[1])
      .then(
        (caller) => {
          if (!caller) return refuse(socket, 401, 'Not an agent token, or a revoked one: an admin makes one on the account page (scope: agent).');
          return upgrader().then((w) => w.handleUpgrade(req, socket, head, (ws) => accept(ws, runtime, caller.user.username, m[1], caller.token, pingMs)));
        },
        () => refuse(socket, 401, 'The token could not be checked.'),
      )
      .catch(() => socket.destroy()); // ws did not load or the upgrade failed: the agent connects again
  });
  server.on('close', () => void wss?.then((w) => w.close()));
}

/**
 * One agent's connection. Nothing it sends can throw here: every message is checked against the protocol
 * (core/hosts/agent-protocol.ts) and one that does not fit closes the connection with the reason; what the
 * runtime does with a message is wrapped too, so a fault of ours ends this connection, not the server.
 */
function accept(ws: WebSocket, runtime: Runtime, by: string, secret: string, token: { id: number; name: string }, pingMs: number) {
  const close = (code: number, reason: string) => {
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, closeReason(reason));
  };
  const socket = { send: (text: string) => ws.send(text), close };
  let link: AgentLink | null = null;
  let helloSeen = false;
  let alive = true;
  const hello = setTimeout(() => close(4408, 'No hello within 10 s.'), HELLO_MS);
  const ping = setInterval(() => {
    if (!alive) return ws.terminate();
    alive = false;
    ws.ping();
    // a token revoked (or its admin disabled) since: the agent is let go, and its reconnections get 401
    void runtime.ops.accounts.agentTokenUser(secret).then(
      (user) => user || close(4401, 'The agent token was revoked.'),
      () => undefined,
    );
  }, pingMs);
  ws.on('pong', () => (alive = true));
  ws.on('message', (data, binary) => {
    try {
      if (binary) return close(4400, 'Messages are JSON text.');
      const text = data.toString();
      if (link) {
        const wrong = runtime.ops.agents.message(link, text);
        if (wrong) close(4400, wrong);
        return;
      }
      // until the welcome, the only message is the hello: one more before it is answered breaks the protocol
      if (helloSeen) return close(4400, 'Wait for the welcome before sending more than the hello.');
      helloSeen = true;
      clearTimeout(hello);
      runtime.ops.agents.connect(socket, text, token).then(
        (l) => {
          if (!l) return;
          if (ws.readyState !== ws.OPEN) return runtime.ops.agents.disconnected(l, socket, 'it went away while connecting');
          link = l;
          void runtime.ops.agents.connected(systemCaller('relay', l.name), { name: l.name, instruments: l.instruments.map((i) => i.name) }, { id: token.id, of: by }).catch(() => undefined);
        },
        () => close(1011, 'The server could not take this agent.'),
      );
    } catch {
      close(1011, 'The server could not take this message.');
    }
  });
  ws.on('close', (code) => {
    clearTimeout(hello);
    clearInterval(ping);
    if (link) runtime.ops.agents.disconnected(link, socket, code === 1000 ? 'it stopped' : `connection lost, code ${code}`);
  });
  ws.on('error', () => ws.terminate());
}
