/**
 * One answer, HTML or JSON, from the same data (server/respond.ts): which clients get JSON, what each helper
 * answers each of them, and that only the answer asked for is computed.
 */
import { jest } from '@jest/globals';
import express, { type NextFunction, type Request, type Response } from 'express';
import { createElement } from 'react';
import request from 'supertest';
import { LabError } from '../../core/errors.js';
import { asLabError, errorBody, statusOf } from '../../server/http.js';
import { failed, jsonError, redirectTo, respond, wantsJson } from '../../server/respond.js';

type Handler = (req: Request, res: Response) => Promise<unknown>;

/** An app with one POST and one GET route answered by `fn`, behind the app's own error handler's JSON half. */
function app(fn: Handler) {
  const a = express();
  a.use(express.json());
  a.use(express.urlencoded({ extended: false }));
  a.all('/x', (req, res, next) => void fn(req, res).catch(next));
  a.use((e: unknown, req: Request, res: Response, _next: NextFunction) => {
    const err = asLabError(e);
    if (wantsJson(req)) return jsonError(res, err);
    res.status(statusOf(err)).type('text').send(`page: ${err.message}`);
  });
  return a;
}

const page = (text: string) => createElement('p', null, text);

describe('wantsJson: who gets JSON', () => {
  const asks = app(async (req, res) => void res.send(wantsJson(req) ? 'json' : 'html'));
  it.each([
    ['Accept: application/json', { Accept: 'application/json' }, '', 'json'],
    ['a browser (Accept: text/html, …)', { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }, '', 'html'],
    ['?format=json over a browser', { Accept: 'text/html' }, '?format=json', 'json'],
    ['?format=html over Accept: application/json', { Accept: 'application/json' }, '?format=html', 'html'],
    ['no preference and no body', {}, '', 'html'],
  ])('%s', async (_name, headers, query, want) => {
    const r = await request(asks).get(`/x${query}`).set(headers);
    expect(r.text).toBe(want);
  });
  it('no preference with a JSON body: a script, JSON', async () => {
    const r = await request(asks).post('/x').set('Accept', '*/*').send({ a: 1 });
    expect(r.text).toBe('json');
    const form = await request(asks).post('/x').set('Accept', '*/*').type('form').send({ a: 1 });
    expect(form.text).toBe('html');
  });
});

describe('respond: a view', () => {
  let reads = { json: 0, html: 0 };
  beforeEach(() => (reads = { json: 0, html: 0 }));
  const view = app((req, res) =>
    respond(req, res, {
      json: () => (reads.json++, { n: 1 }),
      html: () => (reads.html++, page('the page')),
      htmlStatus: req.query.bad ? 400 : undefined,
    }),
  );

  it('a script gets the data as JSON, 200; the page is not made', async () => {
    const r = await request(view).get('/x').set('Accept', 'application/json').expect(200);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.body).toEqual({ n: 1 });
    expect(reads).toEqual({ json: 1, html: 0 });
  });

  it('a browser gets the page; the data for JSON is not read', async () => {
    const r = await request(view).get('/x').set('Accept', 'text/html').expect(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.text).toBe('<!doctype html><p>the page</p>');
    expect(reads).toEqual({ json: 0, html: 1 });
  });

  it("htmlStatus is the page's only (a form shown again); JSON is the data, 200", async () => {
    await request(view).get('/x?bad=1').set('Accept', 'text/html').expect(400);
    await request(view).get('/x?bad=1&format=json').expect(200);
  });

  it("status is both answers' (201 for what was made); a plain value is JSON as it is", async () => {
    const made = app((req, res) => respond(req, res, { json: { id: 7 }, html: () => page('made'), status: 201 }));
    const j = await request(made).post('/x').send({}).expect(201);
    expect(j.body).toEqual({ id: 7 });
    const h = await request(made).post('/x').set('Accept', 'text/html').type('form').send({}).expect(201);
    expect(h.text).toContain('made');
  });

  it("prefer 'unless-html': JSON for a client that states no preference (an upload), the page for a browser", async () => {
    const upload = app((req, res) => respond(req, res, { json: { ok: true }, html: () => page('page'), prefer: 'unless-html' }));
    const script = await request(upload).post('/x').type('form').send({ a: 1 }).expect(200);
    expect(script.body).toEqual({ ok: true });
    const browser = await request(upload).post('/x').set('Accept', 'text/html').type('form').send({ a: 1 });
    expect(browser.text).toContain('<p>page</p>');
    const forced = await request(upload).post('/x?format=html').type('form').send({ a: 1 });
    expect(forced.text).toContain('<p>page</p>');
  });
});

describe('redirectTo: a form post that is done', () => {
  const done = app((req, res) => redirectTo(req, res, '/back?saved', { saved: true }));

  it('a form is sent on with 302 and no JSON', async () => {
    const r = await request(done).post('/x').set('Accept', 'text/html').type('form').send({ a: 1 }).expect(302);
    expect(r.headers.location).toBe('/back?saved');
  });

  it('a script gets the JSON, 200, and no Location', async () => {
    const r = await request(done).post('/x').send({ a: 1 }).expect(200);
    expect(r.body).toEqual({ saved: true });
    expect(r.headers.location).toBeUndefined();
  });

  it('options: the JSON status and Location, the redirect status, 204 without a body', async () => {
    const made = app((req, res) => redirectTo(req, res, '/made', () => ({ id: 1 }), { status: 201, location: '/things/1', redirect: 303 }));
    const j = await request(made).post('/x').send({}).expect(201);
    expect(j.body).toEqual({ id: 1 });
    expect(j.headers.location).toBe('/things/1');
    const f = await request(made).post('/x').set('Accept', 'text/html').type('form').send({}).expect(303);
    expect(f.headers.location).toBe('/made');
    const gone = app((req, res) => redirectTo(req, res, '/list', undefined, { status: 204 }));
    const none = await request(gone).post('/x').send({}).expect(204);
    expect(none.text).toBe('');
    await request(gone).post('/x').set('Accept', 'text/html').type('form').send({}).expect(302);
  });
});

describe('failed: a post that failed', () => {
  const busy = new LabError('unavailable', 'Busy: try again.', [{ field: 'file', message: 'busy' }], { retry_after: 2 });
  const again = app((req, res) => failed(req, res, busy, (err) => res.status(statusOf(err)).type('html').send(`again: ${err.message}`)));
  const noAgain = app((req, res) => failed(req, res, new LabError('not_found', 'No such thing.')));

  it('a script gets the error as the error handler answers it: status, Retry-After, body', async () => {
    const r = await request(again).post('/x').send({}).expect(503);
    expect(r.body).toEqual(errorBody(busy));
    expect(r.body).toEqual({ error: { code: 'unavailable', message: 'Busy: try again.', details: [{ field: 'file', message: 'busy' }] }, retry_after: 2 });
    expect(r.headers['retry-after']).toBe('2');
  });

  it('a browser gets the form again, which says the status', async () => {
    const r = await request(again).post('/x').set('Accept', 'text/html').type('form').send({}).expect(503);
    expect(r.text).toBe('again: Busy: try again.');
  });

  it('without a form to show again, a browser gets the error page (the error goes on to the error handler)', async () => {
    const r = await request(noAgain).post('/x').set('Accept', 'text/html').type('form').send({}).expect(404);
    expect(r.text).toBe('page: No such thing.');
    const j = await request(noAgain).post('/x').send({}).expect(404);
    expect(j.body).toEqual({ error: { code: 'not_found', message: 'No such thing.' } });
  });

  it('anything thrown is read as a LabError (an unknown error: a 500 that hides its message)', async () => {
    const spy = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const raw = app((req, res) => failed(req, res, new Error('secret detail')));
      const r = await request(raw).post('/x').send({}).expect(500);
      expect(r.body.error.code).toBe('internal');
      expect(JSON.stringify(r.body)).not.toContain('secret detail');
      expect(spy).toHaveBeenCalledTimes(1); // logged once, with the original
    } finally {
      spy.mockRestore();
    }
  });

  it("prefer 'unless-html': an upload's script gets JSON even with no Accept and a form body", async () => {
    const upload = app((req, res) => failed(req, res, busy, undefined, 'unless-html'));
    const r = await request(upload).post('/x').type('form').send({ a: 1 }).expect(503);
    expect(r.body.error.code).toBe('unavailable');
    const browser = await request(upload).post('/x').set('Accept', 'text/html').type('form').send({ a: 1 }).expect(503);
    expect(browser.text).toBe('page: Busy: try again.');
  });
});
