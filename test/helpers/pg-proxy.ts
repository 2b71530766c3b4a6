/**
 * A TCP relay between labdeck and the local PostgreSQL, for outages a test can cause and end: `cut()` drops
 * every connection and refuses new ones (the database's PC went away, or restarts); `silence()` keeps
 * connections open and accepts new ones but forwards nothing (a database that hangs, or a stalled network:
 * what was sent is held, not lost); `restore()` forwards again. Only 127.0.0.1.
 */
import net from 'node:net';

export interface PgProxy {
  /** `url` with its host and port replaced by the relay's. */
  url(url: string): string;
  cut(): Promise<void>;
  silence(): void;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function pgProxy(target = { host: '127.0.0.1', port: 5432 }): Promise<PgProxy> {
  const sockets = new Set<net.Socket>();
  let silent = false;
  let port = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
    if (silent) for (const s of [client, upstream]) s.pause();
  });
  const listen = () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  await listen();
  port = (server.address() as net.AddressInfo).port;
  let listening = true;
  return {
    url(u) {
      const x = new URL(u);
      x.hostname = '127.0.0.1';
      x.port = String(port);
      return x.toString();
    },
    async cut() {
      const closed = listening ? new Promise<void>((r) => server.close(() => r())) : undefined;
      listening = false;
      for (const s of sockets) s.destroy();
      await closed;
    },
    silence() {
      silent = true;
      for (const s of sockets) s.pause(); // nothing read, nothing forwarded: held as a stalled network holds it
    },
    async restore() {
      silent = false;
      for (const s of sockets) s.resume();
      if (!listening) await listen();
      listening = true;
    },
    async close() {
      const closed = listening ? new Promise<void>((r) => server.close(() => r())) : undefined;
      listening = false;
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
