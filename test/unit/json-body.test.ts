/** JSON bodies (server/json-body.ts): the plain case read directly, every answer the same as body-parser's. */
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import request from 'supertest';
import { gzipSync } from 'node:zlib';
import { limitBytes } from '../../server/body-cap.js';
import { jsonBody } from '../../server/fast/json-body.js';

const app = (parser: RequestHandler) => {
  const a = express();
  a.use(parser);
  a.post('/', (req, res) => res.json({ body: req.body ?? null }));
  const onError: ErrorRequestHandler = (e: { status?: number; type?: string; message: string }, _req, res, _next) => res.status(e.status ?? 500).json({ type: e.type, message: e.message });
  a.use(onError);
  return a;
};
const bodyParser = app(express.json({ limit: '1kb' }));
/** How many bodies reached body-parser through jsonBody. */
let delegated = 0;
const json = express.json({ limit: '1kb' });
const ours = app(jsonBody((req, res, next) => (delegated++, json(req, res, next)), '1kb'));

const send = (a: express.Express, body: string | Buffer, type = 'application/json', extra: Record<string, string> = {}) => {
  let r = request(a).post('/').set('Content-Type', type);
  for (const [k, v] of Object.entries(extra)) r = r.set(k, v);
  return r.send(body);
};

it('answers every body as body-parser does: the value, or its status, type and message', async () => {
  const bodies: (string | Buffer)[] = [
    '{"method":"ping","args":{}}',
    '  [1, 2.5e3, "µ°C", {"a": null}]\n',
    '{"deep":{"deeper":[true,false,{"x":"\\u00e9"}]}}',
    '"a string"',
    'null',
    '123',
    '   ',
    '{"a":1',
    '{"a":1}x',
    '{',
    '\ufeff{"bom":true}',
    Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), // {"a":"<invalid UTF-8>"}
    `{"pad":"${'x'.repeat(2000)}"}`,
    '',
  ];
  for (const body of bodies) {
    const [a, b] = await Promise.all([send(bodyParser, body), send(ours, body)]);
    expect({ body: String(body).slice(0, 40), status: b.status, answer: b.body }).toEqual({ body: String(body).slice(0, 40), status: a.status, answer: a.body });
  }
  // the plain ones were read directly; the rest (not an object or array, malformed, a BOM, over the limit, empty) by body-parser
  expect(delegated).toBe(bodies.length - 4);
});

it('leaves other bodies to body-parser: a charset, an encoding', async () => {
  const cases: [string | Buffer, string, Record<string, string>][] = [
    ['{"a":1}', 'application/json; charset=utf-8', {}],
    ['{"a":1}', 'application/json; charset=latin-9', {}],
    [gzipSync('{"zipped":true}'), 'application/json', { 'Content-Encoding': 'gzip' }],
    ['{"a":1}', 'application/vnd.api+json', {}],
  ];
  for (const [body, type, extra] of cases) {
    const [a, b] = await Promise.all([send(bodyParser, body, type, extra), send(ours, body, type, extra)]);
    expect({ type, status: b.status, answer: b.body }).toEqual({ type, status: a.status, answer: a.body });
  }
});

it('reads a body limit as the app writes it', () => {
  expect(limitBytes('1mb')).toBe(1024 * 1024);
  expect(limitBytes('100kb')).toBe(102_400);
  expect(limitBytes('512b')).toBe(512);
  expect(() => limitBytes('lots')).toThrow(/1mb/);
});
