/**
 * The HTTP server `lab serve` answers on (server/fast/http-server.ts), with the fast path on whatever
 * LABDECK_FAST_PATH says (it is the fast path's own rule that is tested): its requests and responses are made with
 * every field that answering adds to them already there, so V8 keeps one shape for them (issue 16). Here
 * every request of the busy paths (calls with a token and with a session, pages, API reads, errors, and
 * ivoryOS's call and status) is watched, and any field it gains while being answered is named: declare it
 * in LabRequest or LabResponse.
 */
import { Socket, type AddressInfo } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createHttpServer, LabRequest, LabResponse } from '../../server/fast/http-server.js';
import { PASSWORD, startLab, type TestLab } from './helpers.js';
import { waitFor } from '../helpers/wait.js';

let lab: TestLab;
let server: Server;
let base: string;
/** What each request and its response gained while answered: "POST /app/instruments/noop: req.user". */
const gained: string[] = [];
/** Requests that arrived, and those whose watch has read them (at their response's 'close'). */
let seen = 0;
let read = 0;

beforeAll(async () => {
  lab = await startLab({}, { fastPath: true });
  server = createHttpServer(lab.app, {}, true);
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    seen++;
    const before = { req: new Set(Reflect.ownKeys(req)), res: new Set(Reflect.ownKeys(res)) };
    const label = `${req.method} ${req.url}`;
    res.once('close', () => {
      for (const [name, o] of [
        ['req', req],
        ['res', res],
      ] as const) {
        for (const k of Reflect.ownKeys(o)) if (!before[name].has(k)) gained.push(`${label}: ${name}.${String(k)}`);
      }
      read++;
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await lab.close();
});

/** Answers `n` requests and waits for their 'close' (where the watch reads the fields). */
async function answered(requests: (() => Promise<Response>)[]): Promise<number[]> {
  const from = seen;
  const statuses: number[] = [];
  for (const r of requests) {
    const res = await r();
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  await waitFor(() => read >= seen, 'every request to be read', 5000, 5).catch(() => undefined); // (the expect says what is missing)
  expect([seen - from, read]).toEqual([requests.length, seen]);
  return statuses;
}

describe("lab serve's HTTP server", () => {
  it('makes its requests and responses as LabRequest and LabResponse', async () => {
    let made: unknown[] = [];
    server.prependOnceListener('request', (req: IncomingMessage, res: ServerResponse) => (made = [req instanceof LabRequest, res instanceof LabResponse]));
    await answered([() => fetch(`${base}/app/help`)]);
    expect(made).toEqual([true, true]);
  });

  it("keeps Node's values of the fields it makes its own", () => {
    const req = new LabRequest(new Socket());
    const res = new LabResponse(req);
    expect([req._eventsCount, res.statusCode, res.statusMessage]).toEqual([0, 200, undefined]);
    expect([Object.hasOwn(req, '_eventsCount'), Object.hasOwn(res, 'statusCode')]).toEqual([true, true]);
    req.on('data', () => undefined);
    expect(req._eventsCount).toBe(1);
  });

  it('adds no field to a request or a response on the busy paths', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const login = await fetch(`${base}/app/auth/login`, { method: 'POST', headers: form, body: new URLSearchParams({ username: 'ada', password: PASSWORD }), redirect: 'manual' });
    const cookie = login.headers
      .getSetCookie()
      .find((c) => c.startsWith('labdeck.sid='))!
      .split(';')[0]!;
    const session = { cookie, origin: base };
    const made = await fetch(`${base}/app/account/tokens`, {
      method: 'POST',
      headers: { ...session, accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'watch' }),
    });
    const token = { authorization: `Bearer ${((await made.json()) as { token: string }).token}`, accept: 'application/json' };
    const json = { 'content-type': 'application/json' };
    const ping = JSON.stringify({ method: 'ping', args: {} });
    gained.length = 0;

    const statuses = await answered([
      () => fetch(`${base}/app/instruments/noop`, { method: 'POST', headers: { ...token, ...json }, body: ping }),
      () => fetch(`${base}/instruments/noop`, { method: 'POST', headers: { ...token, ...json }, body: ping }),
      () => fetch(`${base}/app/instruments/noop`, { method: 'POST', headers: { ...session, ...json, accept: 'application/json' }, body: ping }),
      () => fetch(`${base}/app/instruments/pump`, { method: 'POST', headers: { ...token, ...json }, body: JSON.stringify({ method: 'dose', args: { volume_ml: -1 } }) }),
      () => fetch(`${base}/app/instruments`, { headers: session }),
      () => fetch(`${base}/app/instruments/pump`, { headers: session }),
      () => fetch(`${base}/app/instruments`, { headers: token }),
      () => fetch(`${base}/app/executions/status`, { headers: token }),
      () => fetch(`${base}/app/executions/records`, { headers: session }),
      () => fetch(`${base}/app/nothing-here`, { headers: token }),
      () => fetch(`${base}/app/nothing-here`, { headers: session }),
      () => fetch(`${base}/app/instruments`, { redirect: 'manual' }), // not logged in: to the login page
      // ivoryOS's routes, for the labs' existing clients (docs/ivoryos.md)
      () => fetch(`${base}/ivoryos/instruments/deck.noop`, { method: 'POST', headers: { ...token, ...json }, body: JSON.stringify({ hidden_name: 'ping' }) }),
      () => fetch(`${base}/ivoryos/instruments/deck.noop`, { method: 'POST', headers: { ...session, ...json, accept: 'application/json' }, body: JSON.stringify({ hidden_name: 'ping' }) }),
      () => fetch(`${base}/ivoryos/executions/status`, { headers: token }),
    ]);
    expect(statuses).toEqual([200, 200, 200, 400, 200, 200, 200, 200, 200, 404, 404, 302, 200, 200, 200]);
    expect(gained).toEqual([]);
  });
});
