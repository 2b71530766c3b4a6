/**
 * `lab serve`'s HTTP server under a client that holds sockets (issue 26 item 5): one address holding many
 * idle or slow sockets denied everyone, and a slow body was kept 300 s. Real sockets on loopback; the other
 * client comes from another loopback address (127.0.0.2: all of 127/8 is this machine's on Linux).
 */
import { request as httpRequest } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { connectionLimits } from '../../server/connection-limits.js';
import { createHttpServer } from '../../server/fast/http-server.js';
import { startLab, type TestLab } from './helpers.js';

let lab: TestLab;
beforeAll(async () => {
  lab = await startLab();
});
afterAll(() => lab.close());

/** A server of the lab's app with `limits`, listening on loopback; closed after the test. */
const servers: ReturnType<typeof createHttpServer>[] = [];
async function serve(limits: Parameters<typeof createHttpServer>[1]) {
  const server = createHttpServer(lab.app, limits);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A socket from `from` to the server, connected; `closed` resolves with what the server sent before closing it. */
async function socket(port: number, from = '127.0.0.1') {
  const s: Socket = connect({ port, host: '127.0.0.1', localAddress: from });
  let got = '';
  s.on('data', (d) => (got += String(d)));
  s.on('error', () => undefined);
  const closed = new Promise<string>((r) => s.once('close', () => r(got)));
  await new Promise<void>((r, j) => s.once('connect', r).once('error', j));
  return { s, closed };
}

/** GET `path` from `from` on a fresh connection: its status. */
const get = (port: number, path: string, from = '127.0.0.1') =>
  new Promise<number>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, localAddress: from, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });

/** Until the server holds `n` connections from `addr` (it counts them as it accepts them). */
async function holding(server: ReturnType<typeof createHttpServer>, addr: string, n: number) {
  while (server.connections.held(addr) !== n) await new Promise((r) => setImmediate(r));
}

describe('connections', () => {
  it('from one address are capped: the one over the cap is closed at once, unread; other clients are answered', async () => {
    const { server, port } = await serve({ maxConnectionsPerAddress: 5, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 });
    const held = [];
    for (let i = 0; i < 5; i++) held.push(await socket(port));
    await holding(server, '127.0.0.1', 5);
    const over = await socket(port);
    over.s.write('GET /app/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(await over.closed).toBe(''); // closed without an answer
    expect(server.connections.refused).toBe(1);
    expect(await get(port, '/app/healthz', '127.0.0.2')).toBe(200);
    // one held socket goes: its address may connect again
    held[0]!.s.destroy();
    await holding(server, '127.0.0.1', 4);
    expect(await get(port, '/app/healthz')).toBe(200);
    for (const h of held) h.s.destroy();
  });

  it('in all are capped: past the total, a new connection from anywhere is closed at once', async () => {
    const { server, port } = await serve({ maxConnections: 6, maxConnectionsPerAddress: 100, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 });
    const held = [];
    for (let i = 0; i < 6; i++) held.push(await socket(port, i % 2 ? '127.0.0.1' : '127.0.0.3'));
    await holding(server, '127.0.0.1', 3);
    await holding(server, '127.0.0.3', 3);
    const over = await socket(port, '127.0.0.2');
    expect(await over.closed).toBe('');
    held.pop()!.s.destroy();
    await holding(server, '127.0.0.1', 2);
    expect(await get(port, '/app/healthz', '127.0.0.2')).toBe(200);
    for (const h of held) h.s.destroy();
  });

  it('a socket that sends nothing, and a body that trickles, get 408 and are closed after their time; others are answered meanwhile', async () => {
    const { port } = await serve({ headersTimeoutMs: 200, requestTimeoutMs: 400 });
    const idle = await socket(port);
    const slow = await socket(port);
    slow.s.write('POST /app/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"user');
    const headers = await socket(port);
    headers.s.write('GET /app/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    expect(await get(port, '/app/healthz', '127.0.0.2')).toBe(200);
    for (const s of [idle, slow, headers]) expect(await s.closed).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('defaults to bounds a lab can live with, and refuses limits that are no numbers', () => {
    expect(connectionLimits()).toEqual({ maxConnections: 1000, maxConnectionsPerAddress: 100, headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 });
    expect(() => connectionLimits({ maxConnections: 0 })).toThrow(/maxConnections must be a whole number above 0/);
    expect(() => connectionLimits({ headersTimeoutMs: 5000, requestTimeoutMs: 1000 })).toThrow(/requestTimeoutMs \(1000\) must be at least headersTimeoutMs/);
  });
});

describe('an over-limit body', () => {
  /** What the server sent on `s` until it closed it. */
  it('declared in Content-Length is refused with 413 before a byte of it is sent, and the connection closed', async () => {
    const { port } = await serve({});
    for (const [path, type] of [
      ['/app/auth/login', 'application/json'],
      ['/ivoryos/auth/login', 'application/x-www-form-urlencoded'],
      ['/app/files/batch-configs', 'multipart/form-data; boundary=x'],
    ]) {
      const c = await socket(port);
      c.s.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nContent-Type: ${type}\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`);
      const got = await c.closed; // nothing of the body was sent: an answer only the cap gives
      expect([path, got.split('\r\n')[0]]).toEqual([path, 'HTTP/1.1 413 Payload Too Large']);
      expect(got).toMatch(/Connection: close/i);
    }
  });

  it('streamed (chunked) is refused with 413 once past the limit, and nothing more is read', async () => {
    const { port } = await serve({});
    const c = await socket(port);
    c.s.write('POST /app/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    // 1 MB and a little more, and the body never ends: only a cap that counts answers
    for (let i = 0; i < 17 && !c.s.destroyed; i++) c.s.write(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]));
    const got = await c.closed;
    expect(got.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
    expect(JSON.parse(got.slice(got.indexOf('\r\n\r\n') + 4)).error).toMatchObject({ code: 'payload_too_large', message: expect.stringContaining('nothing of it was read') });
  });
});

describe('a client gone before its call', () => {
  /** A token of the admin, and `runtime.accounts.userForToken` held (once) until the server has let `from`'s connections go. */
  async function heldUntilGone(server: ReturnType<typeof createHttpServer>, from: string) {
    const token = (
      await lab.admin
        .post('/app/account/tokens')
        .set('Accept', 'application/json')
        .send({ name: `gone-${from}` })
        .expect(201)
    ).body.token as string;
    const accounts = lab.runtime.accounts;
    const original = accounts.userForToken;
    let released!: () => void;
    const passed = new Promise<void>((r) => (released = r));
    accounts.userForToken = async (...a) => {
      accounts.userForToken = original;
      await holding(server, from, 0); // the client's connection is gone now
      try {
        return await original.apply(accounts, a);
      } finally {
        released();
      }
    };
    return { token, passed };
  }
  const callRequest = (token: string, body: string) =>
    `POST /app/instruments/noop HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

  it('half-closed (or closed) before the call is dispatched: the instrument is not called', async () => {
    const { server, port } = await serve({});
    const runner = lab.runtime.runner;
    const call = runner.call;
    const calls: unknown[] = [];
    runner.call = (...a) => (calls.push(a), call.apply(runner, a));
    try {
      for (const [from, how] of [
        ['127.0.0.4', 'half-close'],
        ['127.0.0.5', 'close'],
      ] as const) {
        const { token, passed } = await heldUntilGone(server, from);
        const s = connect({ port, host: '127.0.0.1', localAddress: from, allowHalfOpen: true });
        await new Promise((r) => s.once('connect', r));
        s.on('error', () => undefined);
        s.write(callRequest(token, JSON.stringify({ method: 'ping', args: {} })));
        if (how === 'half-close') s.end();
        else s.destroy();
        await passed;
        // the request goes on from here in the same turn (no I/O before the dispatch); then a call of another
        // client, answered, shows the server did the rest of the first request's work too
        await new Promise((r) => setImmediate(r));
        expect((await fetch(`http://127.0.0.1:${port}/app/healthz`)).status).toBe(200);
        expect([how, calls.length]).toEqual([how, 0]);
      }
    } finally {
      runner.call = call;
    }
  });

  it('gone after the call was dispatched: the call finishes and is recorded', async () => {
    const { server, port } = await serve({});
    const token = (await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'gone-late' }).expect(201)).body.token as string;
    const runner = lab.runtime.runner;
    const call = runner.call;
    let done!: Promise<{ taskId: number }>;
    let dispatched!: () => void;
    const started = new Promise<void>((r) => (dispatched = r));
    runner.call = (...a) => {
      runner.call = call;
      done = holding(server, '127.0.0.6', 0).then(() => call.apply(runner, a));
      dispatched();
      return done as ReturnType<typeof call>;
    };
    const s = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.6' });
    await new Promise((r) => s.once('connect', r));
    s.on('error', () => undefined);
    s.write(callRequest(token, JSON.stringify({ method: 'ping', args: {} })));
    await started;
    s.destroy();
    const { taskId } = await done;
    expect((await lab.runtime.store.steps.get(taskId))?.method).toBe('ping');
  });
});
