/**
 * How many connections `lab serve` holds, and for how long it waits for a request (issue 26 item 5). One
 * client that opened ~20,000 sockets and sent nothing, or sent its bodies a byte at a time, held the server
 * for everyone (Node keeps a slow body 300 s by default). Now:
 *
 * - connections are capped per client address (`maxConnectionsPerAddress`) and in all (`maxConnections`):
 *   one over either is closed at once, before a byte of it is read, and the others are answered as before;
 * - a request's headers must have come within `headersTimeoutMs` of its start (a socket that sends nothing is
 *   one such request), and its whole body within `requestTimeoutMs`: else 408 and the socket is closed. Once
 *   a request has come in whole, the time its answer takes is not limited here (an instrument call may run
 *   for minutes).
 *
 * The defaults fit one lab's browsers, scripts and agents (a browser opens about 6 connections to a server).
 * A reverse proxy on the same PC makes every client one address: raise `maxConnectionsPerAddress` for it.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  /** Connections held at once, in all (default 1000: under the usual limit of 1024 open files). */
  maxConnections?: number;
  /** Connections held at once from one client address (default 100). */
  maxConnectionsPerAddress?: number;
  /** Time to send a request's headers, ms (default 10 s); a socket that sends nothing is closed after it. */
  headersTimeoutMs?: number;
  /** Time to send a whole request, its body included, ms (default 30 s: 10 MB at 3 Mbit/s). */
  requestTimeoutMs?: number;
}

export const DEFAULT_LIMITS: Required<ConnectionLimits> = {
  maxConnections: 1000,
  maxConnectionsPerAddress: 100,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
};

/** The limits given, each checked (a positive whole number), the defaults for the rest. */
export function connectionLimits(given: ConnectionLimits = {}): Required<ConnectionLimits> {
  const out = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof ConnectionLimits)[]) {
    const v = given[key];
    if (v === undefined) continue;
    if (!Number.isSafeInteger(v) || v < 1) throw new Error(`${key} must be a whole number above 0, not ${String(v)}.`);
    out[key] = v;
  }
  if (out.requestTimeoutMs < out.headersTimeoutMs) throw new Error(`requestTimeoutMs (${out.requestTimeoutMs}) must be at least headersTimeoutMs (${out.headersTimeoutMs}).`);
  return out;
}

/** Options of Node's createServer for `limits`: the timeouts, checked often enough to hold them (to a tenth). */
export function serverTimeouts(limits: Required<ConnectionLimits>) {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(limits.headersTimeoutMs / 10))),
  };
}

/**
 * Cap `server`'s connections: in all, and per client address. Returns what it holds and has refused (the
 * bench prints it).
 */
export function capConnections(server: Server, limits: Required<ConnectionLimits>) {
  server.maxConnections = limits.maxConnections;
  const perAddress = new Map<string, number>();
  const stats = { refused: 0 };
  server.on('drop', () => stats.refused++);
  // first, before the HTTP server's own listener reads anything of it
  server.prependListener('connection', (socket: Socket) => {
    const addr = socket.remoteAddress ?? '';
    const n = perAddress.get(addr) ?? 0;
    if (n >= limits.maxConnectionsPerAddress) {
      stats.refused++;
      socket.destroy();
      return;
    }
    perAddress.set(addr, n + 1);
    socket.once('close', () => {
      const left = (perAddress.get(addr) ?? 1) - 1;
      if (left > 0) perAddress.set(addr, left);
      else perAddress.delete(addr);
    });
  });
  return {
    /** Connections held now from `address`. */
    held: (address: string) => perAddress.get(address) ?? 0,
    /** Connections closed at once for being over a cap, since the start. */
    get refused() {
      return stats.refused;
    },
  };
}
