/** Requests skip the routers that cannot answer them (server/dispatch.ts), and the same routes answer. */
import express, { Router } from 'express';
import request from 'supertest';
import { firstSegment, gateRouters, requestSegment } from '../../server/fast/dispatch.js';

it('reads the first word of a route pattern, or null when the pattern does not start with a plain word', () => {
  expect(firstSegment('/instruments/:instrument')).toBe('instruments');
  expect(firstSegment('/Instruments')).toBe('instruments');
  expect(firstSegment('/instruments{/}')).toBe('instruments');
  expect(firstSegment('/')).toBe('');
  expect(firstSegment('/:id')).toBeNull();
  expect(firstSegment('/{*rest}')).toBeNull();
  expect(firstSegment('/a:b')).toBeNull();
  expect(firstSegment('/files{.:ext}')).toBeNull();
  expect(firstSegment(/^\/x/)).toBeNull();
  expect(firstSegment(undefined)).toBeNull();
});

it("reads a request's first path segment without its query", () => {
  expect(requestSegment('/instruments/noop')).toBe('instruments');
  expect(requestSegment('/Instruments?x=1')).toBe('instruments');
  expect(requestSegment('/')).toBe('');
  expect(requestSegment('/?format=json')).toBe('');
  expect(requestSegment('/records')).toBe('records');
});

it('skips only routers that could not match: every request is answered as before', async () => {
  const seen: string[] = [];
  const area = (name: string, paths: string[]) => {
    const r = Router();
    for (const p of paths) r.get(p, (req, res) => res.json({ area: name, path: req.path }));
    r.use((req, _res, next) => (seen.push(`${name} saw ${req.url}`), next()));
    return r;
  };
  const routesOnly = (name: string, paths: string[]) => {
    const r = Router();
    for (const p of paths) r.all(p, (req, res) => res.json({ area: name, path: req.path }));
    return r;
  };
  const build = (gate: boolean) => {
    const app = express();
    const main = Router();
    main.use(routesOnly('home', ['/', '/help']));
    main.use(routesOnly('instruments', ['/instruments{/}', '/instruments/:name', '/Devices/:id']));
    main.use(area('middleware', ['/other']));
    main.use(routesOnly('params', ['/:anything/deep']));
    main.use((_req, res) => res.status(404).json({ area: 'none' }));
    if (gate) expect(gateRouters(main)).toBe(2);
    app.use('/app', main);
    app.use('/', main);
    return app;
  };
  const paths = ['/', '/app/', '/help', '/HELP?x=1', '/instruments', '/instruments/', '/app/instruments/x', '/devices/3', '/other', '/x/deep', '/instruments/x/deep', '/nothing', '/app/help/'];
  for (const p of paths) {
    const plain = await request(build(false)).get(p);
    const gated = await request(build(true)).get(p);
    expect({ p, status: gated.status, body: gated.body }).toEqual({ p, status: plain.status, body: plain.body });
  }
  expect(seen.length).toBeGreaterThan(0); // a router with middleware is never skipped
});
