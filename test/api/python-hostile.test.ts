/**
 * Hostile Python through the workflow import (issue 26 #2): tiny scripts that hung the import forever
 * (`time.sleep(1e999)`, `{[]: 1}`, a form field `prep=true`, thousands of unary minus signs) answer a 400
 * naming the line at every door (/app/workflows/import/python, /ivoryos/draft/submit_python, ivoryOS's
 * POST /api/get_script); a text over the size limit is a 413; a parse that runs past its time limit is
 * killed, answered with a 400, and its process replaced; and the lab's own Python host is never used.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { ParsePool } from '../../core/hosts/python-parse.js';
import { PASSWORD, startLab, type TestLab } from './helpers.js';

const J = 'application/json';
let lab: TestLab;

beforeAll(async () => {
  lab = await startLab();
});
afterAll(() => lab.close());

const MINUS = `${'- '.repeat(5000)}1`;
/** Each reproduction: the main function's body, and the line the answer names (of a script `def w():\n<body>`). */
const REPRODUCTIONS: [string, string, RegExp][] = [
  ['time.sleep(1e999)', '    time.sleep(1e999)\n', /line 2: .*finite/],
  ['{[]: 1}', '    deck.pump.dose(volume_ml={[]: 1})\n', /line 2: .*literal/],
  ['a chain of 5000 unary minus', `    deck.pump.dose(volume_ml=${MINUS})\n`, /line 2: nesting too deep/],
  ['a chain of 50000 additions', `    deck.pump.dose(volume_ml=${Array(50_000).fill('1').join(' + ')})\n`, /line 2: nesting too deep/],
  ['nan', '    deck.pump.dose(volume_ml=float("nan"))\n', /line 2: /],
];

async function ivoryos() {
  const agent = request.agent(lab.app);
  await agent.post('/ivoryos/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).expect(302);
  return agent;
}

describe('hostile Python answers 4xx at every door, never hangs', () => {
  it.each(REPRODUCTIONS)('/app/workflows/import/python: %s → 400 naming the line', async (_what, body, message) => {
    const source = `def w():\n${body}`;
    const text = await lab.admin.post('/app/workflows/import/python?name=hostile').set('Accept', J).type('text/plain').send(source).expect(400);
    expect(text.body.error).toMatchObject({ code: 'invalid_input', message: expect.stringMatching(message) });
    const json = await lab.admin.post('/app/workflows/import/python').set('Accept', J).send({ source, name: 'hostile' }).expect(400);
    expect(json.body.error.message).toMatch(message);
    expect(json.body.error.message.length).toBeLessThan(600); // the construct is cut, not echoed whole
  });

  it.each(REPRODUCTIONS)('/ivoryos/draft/submit_python and POST /ivoryos/api/get_script: %s → 400 naming the field and line', async (_what, body, message) => {
    const agent = await ivoryos();
    const script = body.replace(/^ {4}/, '');
    const submit = await agent.post('/ivoryos/draft/submit_python').set('Accept', '*/*').send({ workflow_name: 'hostile', script, prep: '', cleanup: '' }).expect(400);
    expect(submit.body).toMatchObject({ success: false, error: expect.stringMatching(new RegExp(`script ${message.source.replace('line 2', 'line 1')}`)) });
    const put = await agent.post('/ivoryos/api/get_script').set('Accept', J).send({ workflow_name: 'hostile', script }).expect(400);
    expect(put.body.success).toBe(false);
  });

  it('a form field prep=true (and a body of JSON true, and deck.hotplate alone) is a 400 naming the field', async () => {
    const agent = await ivoryos();
    const form = await agent.post('/ivoryos/draft/submit_python').set('Accept', '*/*').type('form').send('workflow_name=x&prep=true').expect(400);
    expect(form.body.error).toMatch(/prep line 1: true \(Expr\) is outside the workflow subset/);
    const hotplate = await agent.post('/ivoryos/api/get_script').set('Accept', J).send({ workflow_name: 'x y', prep: 'deck.hotplate' }).expect(400);
    expect(hotplate.body.error).toMatch(/prep line 1: deck\.hotplate/);
    const bool = await agent.post('/ivoryos/api/get_script').set('Accept', J).send({ prep: true });
    expect(bool.status).toBe(400);
    const imported = await lab.admin.post('/app/workflows/import/python').set('Accept', J).type('form').send('source=true&name=x').expect(400);
    expect(imported.body.error.message).toMatch(/line 1: true \(Expr\)/);
  });

  it('many hostile imports at once all answer 4xx, and a good one after them is read', async () => {
    const sources = Array.from({ length: 24 }, (_, i) => `def w${i}():\n${REPRODUCTIONS[i % REPRODUCTIONS.length]![1]}`);
    const answers = await Promise.all(
      sources.map((source) =>
        lab.admin
          .post('/app/workflows/import/python?save=false')
          .set('Accept', J)
          .send({ source })
          .then((r) => r.status),
      ),
    );
    for (const status of answers) expect([400, 429]).toContain(status);
    expect(answers.filter((s) => s === 400).length).toBeGreaterThan(0);
    const ok = await lab.admin.post('/app/workflows/import/python?save=false').set('Accept', J).send({ source: 'def fine():\n    deck.noop.ping()\n' }).expect(200);
    expect(ok.body.main).toEqual([{ kind: 'call', instrument: 'noop', method: 'ping' }]);
  });

  it('a script over the size limit (256 kB) is a 413 naming the field, before any Python reads it', async () => {
    const big = `def w():\n${'    deck.noop.ping()\n'.repeat(14_000)}`;
    const res = await lab.admin.post('/app/workflows/import/python').set('Accept', J).send({ source: big }).expect(413);
    expect(res.body.error).toMatchObject({ code: 'payload_too_large', message: expect.stringContaining('at most 262144 bytes'), details: [{ field: 'source' }] });
    const agent = await ivoryos();
    const part = await agent.post('/ivoryos/draft/submit_python').set('Accept', '*/*').send({ workflow_name: 'big', script: 'deck.noop.ping()', cleanup: big }).expect(413);
    expect(part.body).toMatchObject({ success: false, details: [{ field: 'cleanup' }] });
  });

  it("never uses the lab's Python host: it is not even started by an import", async () => {
    await lab.admin.post('/app/workflows/import/python?save=false').set('Accept', J).send({ source: 'def w():\n    time.sleep(1e999)\n' }).expect(400);
    expect(lab.runtime.python.host.pid).toBeUndefined();
    expect(lab.runtime.python.parser.processes.length).toBeGreaterThan(0);
  });
});

describe('the parse pool', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'labdeck-parse-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  /** An "interpreter" that says it is ready, then never answers (a parse that runs forever). */
  async function stuckPython(): Promise<string> {
    const file = join(dir, 'stuck-python');
    await writeFile(file, '#!/bin/sh\necho \'{"id":null,"type":"ready"}\'\nexec sleep 600\n');
    await chmod(file, 0o755);
    return file;
  }

  it('a parse past its time limit is a 400 saying so; the process is killed and a new one takes the next request', async () => {
    const pool = new ParsePool({ python: await stuckPython(), timeoutMs: 300, size: 1, log: () => undefined });
    try {
      const first = pool.parseWorkflow({ source: 'def w():\n    pass\n' });
      await expect(first).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringContaining('was not read within 0.3 s'), details: [{ field: 'source' }] });
      const [pid] = pool.processes;
      // a waiting request gets the replacement
      const [a, b] = await Promise.allSettled([pool.parseWorkflow({ parts: { script: 'x' } }), pool.parseWorkflow({ source: 'y' })]);
      expect(a).toMatchObject({ status: 'rejected', reason: { details: [{ field: 'script' }] } });
      expect(b).toMatchObject({ status: 'rejected', reason: { code: 'invalid_input' } });
      expect(pool.processes).not.toContain(pid);
    } finally {
      await pool.close();
    }
    expect(pool.processes).toEqual([]);
  });

  it('more waiting requests than it takes are a 429, not a queue without end', async () => {
    const pool = new ParsePool({ python: await stuckPython(), timeoutMs: 500, size: 1, maxWaiting: 2, log: () => undefined });
    try {
      const all = await Promise.allSettled(Array.from({ length: 5 }, () => pool.parseWorkflow({ source: 'x' })));
      const codes = all.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'ok'));
      expect(codes.filter((c) => c === 'too_many_requests')).toHaveLength(2);
      expect(codes.filter((c) => c === 'invalid_input')).toHaveLength(3);
    } finally {
      await pool.close();
    }
  });

  it('answers the workflow document with the real parser, one request after another in one process', async () => {
    const pool = new ParsePool({ size: 1, log: () => undefined });
    try {
      const one = await pool.parseWorkflow({ source: 'def a(v=1):\n    deck.pump.dose(volume_ml=v)\n' });
      expect(one).toMatchObject({ name: 'a', parameters: [{ name: 'v', type: 'integer', default: 1 }] });
      const [pid] = pool.processes;
      await expect(pool.parseWorkflow({ source: 'def b():\n    while 1:\n        pass\n' })).rejects.toMatchObject({ payload: { kind: 'invalid_input', line: 2 } });
      expect(await pool.parseWorkflow({ parts: { script: 'deck.noop.ping()' }, name: 'c' })).toMatchObject({ name: 'c' });
      expect(pool.processes).toEqual([pid]);
    } finally {
      await pool.close();
    }
  });
});
