/**
 * `lab agent --deck FILE --server URL --token TOKEN [--name NAME]`: serves the deck of an instrument PC
 * (Python or TypeScript) to a labdeck server elsewhere (DESIGN.md §11-12). It connects out (no port is
 * opened here) over a WebSocket, TLS when the URL is https, with an agent token, says which instruments it
 * serves, and runs the calls the server relays. The server records every call; the agent keeps no database.
 *
 * The server ships the lab's safety file (and each change of it); the agent checks every call it is sent
 * against it before a driver is touched, and refuses every call until one has come (core/safety/relayed.ts).
 *
 * When the connection drops or the server refuses it (a user's token, a revoked one: 401), the agent says
 * so and tries again with back-off (1 s, doubling up to 30 s) until it is stopped (SIGINT, SIGTERM).
 */
import { hostname } from 'node:os';
import type { Command } from '@commander-js/extra-typings';
import type WebSocket from 'ws';
import type { HostErrorPayload, HostInstrument } from '../core/contracts/host.js';
import { AGENT_NAME_RE, HOST_PROTOCOL_VERSION } from '../core/contracts/host.js';
import type { InstrumentSchema } from '../core/contracts/index.js';
import { errorText as errorMessage } from '../core/deck/util.js';
import { LabError, isLabError } from '../core/errors.js';
import { relayCaller } from '../core/operations/caller.js';
import { EXIT, UsageError } from './io.js';

export interface AgentOptions {
  deck: string;
  server: string;
  token: string;
  name?: string;
  python?: string;
}

export interface RunningAgent {
  /** Resolves once the server has taken the agent's instruments (its first welcome). */
  welcomed: Promise<void>;
  stop(): Promise<void>;
}

const BACKOFF_MAX_MS = 30_000;
/** The server pings every 5 s: without one for this long the connection is taken for cut, and made again. */
const SILENCE_MS = 15_000;

/** The WebSocket URL of a server's agent endpoint: `http://h:8000/app` → `ws://h:8000/app/agent`. */
export function agentUrl(server: string): string {
  let u: URL;
  try {
    u = new URL(server);
  } catch {
    throw new UsageError(`--server must be the lab's URL, e.g. https://lab.example.org/app (got ${JSON.stringify(server)})`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError(`--server must be an http:// or https:// URL (got ${u.protocol})`);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/agent`;
  return u.toString();
}

const describe = (i: InstrumentSchema): HostInstrument => ({ name: i.name, class: i.driver, description: i.description, methods: i.methods });

/** What a failed call tells the server: bad arguments name their field; anything else is the instrument's error. */
function failure(e: unknown): HostErrorPayload {
  if (isLabError(e) && e.code === 'invalid_input') {
    const d = e.details?.[0];
    return { kind: 'invalid_args', type: 'LabError', message: d?.message ?? e.message, ...(d?.field ? { field: d.field } : {}) };
  }
  if (isLabError(e) && e.code === 'not_found') return { kind: 'not_found', type: 'LabError', message: e.message };
  // the lab's safety file refused it here, before any driver (core/safety/relayed.ts)
  if (isLabError(e) && (e.code === 'safety' || e.code === 'safety_file')) {
    const d = e.details?.[0];
    return { kind: e.code, type: 'LabError', message: e.message, ...(d?.field ? { field: d.field } : {}) };
  }
  return { kind: 'exception', type: e instanceof Error ? e.name : 'Error', message: errorMessage(e) };
}

/** Load the deck and keep serving it to the server until stopped. */
export async function startAgent(opts: AgentOptions, log: (line: string) => void = console.log): Promise<RunningAgent> {
  const url = agentUrl(opts.server);
  if (!opts.token.startsWith('labagent_')) {
    throw new UsageError('--token must be an agent token (labagent_…): an admin makes one on the account page, or with POST /app/account/tokens {"scope": "agent"}');
  }
  const name = opts.name ?? hostname();
  if (!AGENT_NAME_RE.test(name)) throw new UsageError(`--name must be a name of letters, digits, ".", "_" and "-", at most 64 characters (got ${JSON.stringify(name.slice(0, 80))})`);
  const { default: WebSocketClient } = await import('ws'); // loaded when an agent starts, not with every lab command
  // the deck is loaded when an agent starts, not with every lab command
  const { openAgentHost } = await import('../core/operations/agent-host.js');
  const host = await openAgentHost({ deck: opts.deck, python: opts.python, log });
  /** The server as the operations know it: the calls it relays (it records them, with who asked). */
  const server = relayCaller({ name: opts.server });

  let ws: WebSocket | null = null;
  let stopping = false;
  let delay = 1000;
  let retry: NodeJS.Timeout | null = null;
  let welcome!: () => void;
  const welcomed = new Promise<void>((r) => (welcome = r));
  /** The call each instrument is running now, so what it logs goes back with that call. */
  const running = new Map<string, number>();
  host.onLog((e) => {
    const call = running.get(e.instrument);
    if (call !== undefined) ws?.send(JSON.stringify({ type: 'event', call, kind: 'log', text: e.message }));
  });

  const again = (why: string) => {
    if (stopping) return;
    log(`agent ${name}: ${why}; trying again in ${Math.round(delay / 1000)} s`);
    retry = setTimeout(connect, delay);
    delay = Math.min(delay * 2, BACKOFF_MAX_MS);
  };

  function connect() {
    const socket = new WebSocketClient(url, { headers: { Authorization: `Bearer ${opts.token}` }, maxPayload: 16 * 1024 * 1024 });
    ws = socket;
    let refused = false;
    // a cut cable says nothing: the server's pings stopping is how this side finds out
    let silence: NodeJS.Timeout | undefined;
    const heard = () => {
      clearTimeout(silence);
      silence = setTimeout(() => socket.terminate(), SILENCE_MS);
    };
    socket.on('ping', heard);
    socket.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (b: Buffer) => (body += b.toString()));
      res.on('end', () => {
        refused = true;
        let message = body;
        try {
          message = (JSON.parse(body) as { error: { message: string } }).error.message;
        } catch {
          // not labdeck's JSON error: show it as it came
        }
        socket.terminate();
        again(`the server refused the connection (${res.statusCode}): ${message}`);
      });
    });
    socket.on('open', () => {
      heard();
      socket.send(JSON.stringify({ type: 'hello', protocol: HOST_PROTOCOL_VERSION, name, host: 'agent', language: 'node', version: process.versions.node, instruments: host.list().map(describe) }));
    });
    socket.on('message', (data) => {
      let msg: { type: string; id?: number; instrument?: string; method?: string; args?: Record<string, unknown>; instruments?: string[]; refused?: { name: string; reason: string }[] };
      try {
        msg = JSON.parse(data.toString());
      } catch {
        return;
      }
      if (msg.type === 'welcome') {
        delay = 1000;
        log(`agent ${name}: serving ${msg.instruments?.join(', ') || 'no instruments'} to ${opts.server}`);
        for (const r of msg.refused ?? []) log(`agent ${name}: the server refused the instrument ${r.name}: ${r.reason}`);
        welcome();
        return;
      }
      if (msg.type === 'safety') {
        log(`agent ${name}: ${host.safety(msg as { file?: unknown; error?: string | null; source?: string })}`);
        return;
      }
      if (msg.type !== 'call' || typeof msg.id !== 'number') return;
      const { id, instrument = '', method = '', args = {} } = msg;
      running.set(instrument, id);
      host
        .call(server, { instrument, method, args })
        .then(
          (r) => socket.send(JSON.stringify({ type: 'result', id, value: r.output })),
          (e: unknown) => socket.send(JSON.stringify({ type: 'error', id, error: failure(e) })),
        )
        .finally(() => {
          if (running.get(instrument) === id) running.delete(instrument);
        });
    });
    socket.on('close', (code, reason) => {
      clearTimeout(silence);
      if (ws === socket) ws = null;
      if (!refused)
        again(
          code === 4409 || code === 4400 || code === 4401 || code === 4403
            ? `the server refused this agent: ${reason.toString()}`
            : `the connection closed (${code}${reason.length ? `: ${reason.toString()}` : ''})`,
        );
    });
    socket.on('error', () => undefined); // `close` follows, and says what happened
  }

  connect();
  return {
    welcomed,
    async stop() {
      stopping = true;
      if (retry) clearTimeout(retry);
      ws?.close(1000, 'the agent stopped');
      await host.close();
    },
  };
}

export function registerAgentCommand(program: Command): void {
  program
    .command('agent')
    .description("serve this PC's instruments to a labdeck server elsewhere (connects out over a WebSocket)")
    .requiredOption('--deck <file>', 'the deck of this PC (Python or TypeScript)')
    .requiredOption('--server <url>', 'the lab server, e.g. https://lab.example.org/app')
    .requiredOption('--token <token>', 'an agent token (labagent_…), made by an admin on the account page')
    .option('--name <name>', 'how the lab knows this PC (default: its host name)')
    .option('--python <path>', 'Python interpreter for a Python deck (default: LABDECK_PYTHON, then python3)')
    .action(async (o) => {
      let agent: RunningAgent;
      try {
        agent = await startAgent(o);
      } catch (e) {
        console.error(`lab agent: ${errorMessage(e)}`);
        process.exit(e instanceof UsageError || (e instanceof LabError && e.code === 'invalid_input') ? EXIT.badInput : EXIT.failed);
      }
      const stop = () => void agent.stop().then(() => process.exit(EXIT.ok));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
