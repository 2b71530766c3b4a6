/**
 * Code injection into the Python export (issue 26 #7): names are written into exported scripts as code, so
 * only identifiers are taken where they are declared (an agent's hello, the Python host's description, a
 * plugin's definition: that method or instrument is refused, the rest served), and the exporters refuse a
 * workflow document with anything else, naming the step, rather than write it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { defineInstrument, z } from '../../core/contracts/index.js';
import { vetInstrument } from '../../core/hosts/vet.js';
import { workflowToPhases, workflowToPython } from '../../core/workflow/python.js';
import type { Workflow } from '../../core/workflow/model.js';
import { PASSWORD, startLab, type TestLab } from './helpers.js';

const J = 'application/json';
const EVIL = "x(); import os; os.system('touch /tmp/pwned')#";

const DECK = `
import inspect


class Valve:
    def open(self, seconds: float = 1.0) -> str:
        return "open"


def _run(self):
    return "ran"


def _param(self, **kwargs):
    return "param"


setattr(Valve, ${JSON.stringify(EVIL)}, _run)
_param.__signature__ = inspect.Signature([
    inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    inspect.Parameter("a", inspect.Parameter.KEYWORD_ONLY, default=1),
])
Valve.tricky = _param

valve = Valve()
`;

let lab: TestLab;
let dir: string;
const logged: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'labdeck-inject-'));
  await writeFile(join(dir, 'deck.py'), DECK);
  lab = await startLab({ deck: join(dir, 'deck.py'), log: (l) => logged.push(l) });
}, 60_000);
afterAll(async () => {
  await lab.close();
  await rm(dir, { recursive: true, force: true });
});

const method = (name: string, properties: Record<string, unknown> = {}) => ({ name, description: '', safety: 'readonly', params: { type: 'object', properties } });

describe('names are identifiers where they are declared', () => {
  it(`an agent announcing the method ${EVIL} has that instrument refused, saying why`, () => {
    const v = vetInstrument({ name: 'evil_pc', class: 'Evil', description: '', methods: [method('read'), method(EVIL)] } as never);
    expect(v).toEqual({ ok: false, reason: expect.stringMatching(/evil_pc: the method name "x\(\); import os; os\.system\('touch .*" is not an identifier/) });
    const p = vetInstrument({ name: 'evil_pc', class: 'Evil', description: '', methods: [method('read', { [EVIL]: { type: 'string' } })] } as never);
    expect(p).toMatchObject({ ok: false, reason: expect.stringContaining('the parameter name') });
    expect(vetInstrument({ name: 'fine_pc', class: 'Fine', description: '', methods: [method('read', { volume_ml: { type: 'number' } })] } as never)).toMatchObject({ ok: true });
  });

  it('a Python instrument: a method named as code is left out (logged), the rest of it and the deck served', async () => {
    const res = await lab.admin.get('/app/instruments/valve').set('Accept', J).expect(200);
    const names = res.body.methods.map((m: { name: string }) => m.name);
    expect(names).toContain('open');
    expect(names).toContain('tricky');
    expect(names).not.toContain(EVIL);
    expect(logged.join('\n')).toMatch(/valve: the method name "x\(\); import os; os\.system\('touch .*" is not an identifier .*left out/);
    await lab.admin.post('/app/instruments/valve').set('Accept', J).send({ method: 'open', args: {} }).expect(200);
  });

  it('a plugin driver whose parameter name is not an identifier is refused by the contract check', () => {
    const def = (params: z.ZodObject<z.ZodRawShape>) => defineInstrument({ name: 'p', version: '1', options: z.object({}), create: () => ({}), methods: { go: { params, run: () => 1 } } });
    expect(() => def(z.object({ [EVIL]: z.string() }))).toThrow(/method "go" has the parameter name "x\(\); import os.*not an identifier/);
    expect(() => def(z.object({ volume_ml: z.number() }))).not.toThrow();
  });
});

/** A document a store could hold though no route would take it (an older labdeck, or one written by hand). */
const crafted = (): Workflow =>
  ({
    name: 'crafted',
    description: '',
    parameters: [],
    outputs: [],
    prep: [],
    main: [
      { kind: 'call', instrument: 'valve', method: 'open' },
      { kind: 'repeat', times: 1, steps: [{ kind: 'call', instrument: 'valve', method: EVIL, args: { 'a); os.system("x"); (b': { value: 1 } } }] },
    ],
    cleanup: [],
  }) as Workflow;

describe('the exporters refuse what is not an identifier, naming the step', () => {
  it('workflowToPython and workflowToPhases throw 400 with each step path', () => {
    for (const write of [() => workflowToPython(crafted(), 'http://lab/app/instruments/proxy?lang=python'), () => workflowToPhases(crafted())]) {
      let err: unknown;
      try {
        write();
      } catch (e) {
        err = e;
      }
      expect(err).toMatchObject({ code: 'invalid_input', message: expect.stringContaining('cannot be written as Python: main[1].steps[0].method') });
      const fields = (err as { details: { field: string }[] }).details.map((d) => d.field);
      expect(fields).toEqual(['main[1].steps[0].method', 'main[1].steps[0].args.a); os.system("x"); (b']);
    }
  });

  it('a crafted op, number or variable is read with the model, never pasted', () => {
    const wf = crafted();
    wf.main = [
      { kind: 'if', condition: { left: { value: 1 }, op: '== 1 or __import__("os").system("id") or 1 ==' as never, right: { value: 1 } }, then: [] },
      { kind: 'wait', seconds: '0); __import__("os").system("id"' as never },
      { kind: 'call', instrument: 'valve', method: 'open', save_as: 'x = 1; import os' },
    ];
    expect(() => workflowToPython(wf, 'u')).toThrow(/cannot be written as Python: main\[0\]\.condition\.op/);
    wf.main = [{ kind: 'call', instrument: 'valve', method: 'open', args: { seconds: { var: 'os.system("id")' } } }];
    expect(() => workflowToPython(wf, 'u')).toThrow(/main\[0\]\.args\.seconds "os\.system\(\\"id\\"\)" is not a plain Python identifier/);
    wf.main = [{ kind: 'call', instrument: 'valve', method: 'class' }];
    expect(() => workflowToPhases(wf)).toThrow(/main\[0\]\.method "class" is not a plain Python identifier/);
  });

  it('a label, a name and a message cannot end their comment or string', () => {
    const wf = crafted();
    wf.main = [
      { kind: 'call', instrument: 'valve', method: 'open', label: 'one\nimport os\ros.system("id")\u2028x' },
      { kind: 'pause', message: '")\nimport os\n("' },
    ];
    const script = workflowToPython(wf, 'http://lab/app/x\nimport os');
    expect(script.match(/^\s*import os/gm)).toEqual(['import os']); // its own, once
    expect(script).not.toMatch(/^\s*os\.system/m);
    expect(script).toContain('# one import os os.system("id") x');
    expect(script).toContain('input("\\")\\nimport os\\n(\\"")');
  });

  it('GET /app/workflows/{name}/python and ivoryOS GET /api/get_script of a crafted stored workflow answer 400 naming the step', async () => {
    const admin = (await lab.runtime.store.users.byName('ada'))!;
    await lab.runtime.store.workflows.save('crafted', crafted(), admin.id);
    const res = await lab.admin.get('/app/workflows/crafted/python').set('Accept', J);
    expect(res.status).toBe(400);
    expect(res.headers['content-disposition']).toBeUndefined();
    expect(res.body.error).toMatchObject({ code: 'invalid_input', details: expect.arrayContaining([expect.objectContaining({ field: 'main[1].steps[0].method' })]) });
    const ivory = request.agent(lab.app);
    await ivory.post('/ivoryos/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).expect(302);
    // selecting it works, with no script written for it
    const load = await ivory.get('/ivoryos/library/crafted').set('Accept', J).expect(200);
    expect(load.body).toMatchObject({ script: { name: 'crafted' }, python_script: null });
    const script = await ivory.get('/ivoryos/api/get_script').set('Accept', J).expect(400);
    expect(script.body).toMatchObject({ success: false, error: expect.stringContaining('main[1].steps[0].method') });
  });
});
