import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { transform } from 'esbuild';
import ts from 'typescript';
import { z, type InstrumentSchema, type JSONSchema, type MethodSchema } from '../../core/contracts/index.js';
import { buildOpenApi } from '../../server/openapi.js';
import { ROUTES } from '../helpers/catalogue.js';
import { generateProxy } from '../../server/proxy.js';
import { methodSchema } from '../helpers/schemas.js';

const run = promisify(execFile);

/** A description that tries to break out of every kind of literal and comment. */
const NASTY = 'Dose "liquid" \'now\'.\n"""\nraise SystemExit(3)\n"""\n*/ globalThis.pwned = 1; /* \\ end"';

const method = (name: string, params: z.ZodObject<z.ZodRawShape>, extra: Partial<MethodSchema> = {}): MethodSchema =>
  methodSchema(name, z.toJSONSchema(params, { io: 'input', unrepresentable: 'any' }) as JSONSchema, extra);

const instruments: InstrumentSchema[] = [
  {
    name: 'pump',
    driver: 'sim-pump',
    description: 'A syringe pump """ with quotes',
    source: 'deck',
    methods: [
      method(
        'dose',
        z.object({
          rate: z.number().default(1).describe('mL/min'),
          volume_ml: z.number().describe('how much "exactly"'),
          mode: z.enum(['fast', 'slow', 'it"s']).default('fast'),
          note: z.string().optional(),
          tags: z.array(z.string()).default([]),
        }),
        { description: NASTY, safety: 'hazardous', order: 0, returns: { type: 'object' } },
      ),
      method('prime', z.object({}), { order: 1 }),
      method('import', z.object({ lambda: z.number(), from: z.boolean().default(false) }), { order: 2 }),
    ],
  },
  {
    name: 'heat-block',
    driver: 'sim-heat',
    description: '',
    source: 'temporary',
    methods: [method('set', z.object({ 'temp-c': z.number().int() }), { returns: { type: 'number' } })],
  },
];

interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A tiny labdeck stand-in: records each request and answers with `reply(body, request)`. */
async function startServer(reply: (body: { method: string; args: Record<string, unknown> }, req: Recorded) => [number, unknown]) {
  const requests: Recorded[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(raw || 'null') as { method: string; args: Record<string, unknown> };
      const recorded: Recorded = { method: req.method!, url: req.url!, headers: req.headers, body };
      requests.push(recorded);
      const [status, answer] = reply(body, recorded);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/app`;
  return { base, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** The answer labdeck gives when the instrument itself raises: the failed call's record id beside the error. */
const JAMMED = { error: { code: 'instrument_error', message: 'pump jammed' }, task_id: 41, instrument: 'pump', method: 'dose' };

/**
 * Instrument calls: 200 with the args echoed back, 400 when volume_ml is negative, 502 when it is 99.
 * GET /app/executions/status answers an idle runner (any other GET: 404).
 */
const labLike = (body: { method: string; args: Record<string, unknown> } | null, req: Recorded): [number, unknown] => {
  if (req.method === 'GET') {
    return req.url === '/app/executions/status' ? [200, { busy: false, state: 'idle', current_task: null }] : [404, { error: { code: 'not_found', message: 'Not found.' } }];
  }
  if (!body?.args) return [400, { error: { code: 'invalid_input', message: 'no args' } }];
  if (body.args.volume_ml === 99) return [502, JAMMED];
  return typeof body.args.volume_ml === 'number' && body.args.volume_ml < 0
    ? [400, { error: { code: 'invalid_input', message: 'volume_ml must be positive', details: [{ field: 'volume_ml', message: 'too small' }] } }]
    : [200, { task_id: 7, output: { echo: body.method, args: body.args } }];
};

/** A deck whose instrument names are Lab methods in Python (queue, wait_for_run) and in TypeScript (queue, records). */
const clashing: InstrumentSchema[] = ['queue', 'wait_for_run', 'records'].map((name) => ({
  name,
  driver: 'd',
  description: '',
  source: 'deck',
  methods: [method('go', z.object({}))],
}));

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'labdeck-proxy-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const env = { ...process.env, PYTHONDONTWRITEBYTECODE: '1', NO_PROXY: '*', no_proxy: '*' };
const python = (script: string) => run('python3', ['-c', script], { cwd: dir, env, timeout: 8000 });

describe('generateProxy: python', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    server = await startServer(labLike);
    const { filename, content } = generateProxy('python', instruments, { defaultBaseUrl: server.base, deckName: 'demo', routes: ROUTES });
    expect(filename).toBe('labdeck_client.py');
    writeFileSync(join(dir, filename), content);
  });
  afterAll(() => server.close());
  beforeEach(() => server.requests.splice(0));

  it('compiles, starts with a generated-file comment, and does nothing on import', async () => {
    await run('python3', ['-m', 'py_compile', join(dir, 'labdeck_client.py')], { env });
    const content = generateProxy('python', instruments, { defaultBaseUrl: server.base, deckName: 'demo', routes: ROUTES }).content;
    expect(content.split('\n')[0]).toMatch(/^# Generated by labdeck on .* from deck "demo" at http:\/\/127\.0\.0\.1:\d+\/app\.$/);
    expect(content).toMatch(/^# {5}lab = Lab\(/m);
    const { stdout, stderr } = await python('import labdeck_client');
    expect(stdout + stderr).toBe('');
    expect(server.requests).toHaveLength(0);
  });

  it('has Python signatures and docstrings that keep the schema text intact', async () => {
    const { stdout } = await python(`
import inspect, json
from labdeck_client import Lab
lab = Lab()
def sig(f):
    return [[p.name, "REQUIRED" if p.default is inspect.Parameter.empty else p.default] for p in inspect.signature(f).parameters.values()]
print(json.dumps({
    "dose": sig(lab.pump.dose), "prime": sig(lab.pump.prime), "import": sig(lab.pump.import_),
    "set": sig(lab.heat_block.set), "doc": inspect.getdoc(lab.pump.dose), "cls": inspect.getdoc(type(lab.pump)),
}))`);
    const out = JSON.parse(stdout) as Record<string, unknown>;
    // Required first, then the optional ones in schema order; list defaults become None (server default).
    expect(out.dose).toEqual([
      ['volume_ml', 'REQUIRED'],
      ['rate', 1],
      ['mode', 'fast'],
      ['note', null],
      ['tags', null],
    ]);
    expect(out.prime).toEqual([]);
    expect(out.import).toEqual([
      ['lambda_', 'REQUIRED'],
      ['from_', false],
    ]);
    expect(out.set).toEqual([['temp_c', 'REQUIRED']]);
    expect(out.doc).toContain(NASTY);
    expect(out.doc).toContain('volume_ml (number, required): how much "exactly"');
    expect(out.doc).toContain('mode (one of "fast", "slow", "it\\"s", default "fast")');
    expect(out.cls).toBe('A syringe pump """ with quotes');
  });

  it('POSTs the call with the token and returns the output', async () => {
    const { stdout } = await python(`
import json
from labdeck_client import Lab
lab = Lab(${JSON.stringify(server.base + '/')}, token="s3cret")
print(json.dumps([lab.pump.dose(1.5), lab.pump.import_(lambda_=2), lab.heat_block.set(temp_c=40), lab.pump.prime()]))`);
    expect(JSON.parse(stdout)).toEqual([
      { echo: 'dose', args: { volume_ml: 1.5, rate: 1, mode: 'fast' } },
      { echo: 'import', args: { lambda: 2, from: false } },
      { echo: 'set', args: { 'temp-c': 40 } },
      { echo: 'prime', args: {} },
    ]);
    expect(server.requests.map((r) => [r.method, r.url])).toEqual([
      ['POST', '/app/instruments/pump'],
      ['POST', '/app/instruments/pump'],
      ['POST', '/app/instruments/heat-block'],
      ['POST', '/app/instruments/pump'],
    ]);
    const first = server.requests[0];
    expect(first.headers).toMatchObject({
      accept: 'application/json',
      'content-type': 'application/json',
      authorization: 'Bearer s3cret',
    });
    // `note` and `tags` were not given: they are left out so the server applies its defaults.
    expect(first.body).toEqual({ method: 'dose', args: { volume_ml: 1.5, rate: 1, mode: 'fast' } });
  });

  it('raises LabError with status, code, message and details on an error answer', async () => {
    const { stdout } = await python(`
import json
from labdeck_client import Lab, LabError
try:
    Lab(${JSON.stringify(server.base)}, "t").pump.dose(volume_ml=-1)
    print("no error")
except LabError as e:
    print(json.dumps([e.status, e.code, e.message, e.details, str(e)]))`);
    expect(JSON.parse(stdout)).toEqual([400, 'invalid_input', 'volume_ml must be positive', [{ field: 'volume_ml', message: 'too small' }], '400 invalid_input: volume_ml must be positive']);
  });

  it('keeps the task id (and the rest of the answer) of a call the instrument failed: 502', async () => {
    const { stdout } = await python(`
import json
from labdeck_client import Lab, LabError
try:
    Lab(${JSON.stringify(server.base)}, "t").pump.dose(volume_ml=99)
    print("no error")
except LabError as e:
    print(json.dumps([e.status, e.code, e.message, e.task_id, e.data, str(e)]))`);
    expect(JSON.parse(stdout)).toEqual([502, 'instrument_error', 'pump jammed', 41, { task_id: 41, instrument: 'pump', method: 'dose' }, '502 instrument_error: pump jammed (task 41)']);
  });

  it('GETs the runner status with the token; an error without a task has task_id None', async () => {
    const { stdout } = await python(`
import json
from labdeck_client import Lab, LabError
lab = Lab(${JSON.stringify(server.base)}, "t")
out = [lab.runner_status()]
try:
    lab.record(5)
except LabError as e:
    out.append([e.status, e.task_id, e.data])
print(json.dumps(out))`);
    expect(JSON.parse(stdout)).toEqual([{ busy: false, state: 'idle', current_task: null }, [404, null, {}]]);
    expect(server.requests.map((r) => [r.method, r.url, r.headers.authorization])).toEqual([
      ['GET', '/app/executions/status', 'Bearer t'],
      ['GET', '/app/executions/records/5', 'Bearer t'],
    ]);
    expect(server.requests[0].headers['content-type']).toBeUndefined(); // no body on a GET
  });

  it('an instrument named like a Lab method is lab.<name>_, and the Lab says so', async () => {
    const { content } = generateProxy('python', clashing, { defaultBaseUrl: server.base, routes: ROUTES });
    writeFileSync(join(dir, 'clashing_client.py'), content);
    const { stdout } = await python(`
import inspect, json
from clashing_client import Lab
lab = Lab()
print(json.dumps([callable(lab.queue), type(lab.queue_).__name__, callable(lab.wait_for_run), hasattr(lab.wait_for_run_, "go"), hasattr(lab.records, "go"), inspect.getdoc(Lab)]))`);
    const [queueIsMethod, queueClass, waitIsMethod, waitHasGo, recordsIsInstrument, doc] = JSON.parse(stdout) as [boolean, string, boolean, boolean, boolean, string];
    expect([queueIsMethod, queueClass, waitIsMethod, waitHasGo]).toEqual([true, '_Instrument_queue', true, true]);
    expect(recordsIsInstrument).toBe(false); // records is a Lab method: the instrument is records_
    expect(doc).toContain("The instrument 'queue' is lab.queue_: queue is a Lab method.");
    expect(doc).toContain("The instrument 'wait_for_run' is lab.wait_for_run_");
  });

  it('makes every name safe', () => {
    const weird: InstrumentSchema[] = [
      {
        name: '2x',
        driver: 'd',
        description: '',
        source: 'deck',
        methods: [method('__init__', z.object({ self: z.number(), 'a b': z.number(), a_b: z.number() }))],
      },
    ];
    const { content } = generateProxy('python', weird, { defaultBaseUrl: 'http://x/app', routes: ROUTES });
    expect(content).toContain('self._2x = _Instrument_2x(self._labdeck_client)');
    expect(content).toContain('def x__init__(self, self_: float, a_b: float, a_b_: float) -> Any:');
    expect(content).toContain('{"self": self_, "a b": a_b, "a_b": a_b_}');
  });
});

describe('generateProxy: typescript', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    server = await startServer(labLike);
  });
  afterAll(() => server.close());

  it('generates typed args and a working fetch client', async () => {
    const { filename, content } = generateProxy('typescript', instruments, { defaultBaseUrl: server.base, routes: ROUTES });
    expect(filename).toBe('labdeck-client.ts');
    expect(content).toMatch(/^\/\/ Generated by labdeck on /);
    expect(content).toContain('export interface PumpDoseArgs {');
    expect(content).toMatch(/ {2}rate\?: number;\n {2}\/\*\*\n {3}\* how much "exactly"\n {3}\*\/\n {2}volume_ml: number;/);
    expect(content).toContain('  mode?: "fast" | "slow" | "it\\"s";');
    expect(content).toContain('  tags?: Array<string>;');
    expect(content).toContain('  "temp-c": number;');
    expect(content).toContain('dose(args: PumpDoseArgs): Promise<Record<string, unknown>>;');
    expect(content).toContain('prime(args?: PumpPrimeArgs): Promise<unknown>;');

    const js = (await transform(content, { loader: 'ts', format: 'esm' })).code;
    const file = join(dir, 'labdeck-client.mjs');
    writeFileSync(file, js);
    const mod = (await import(pathToFileURL(file).href)) as {
      createLab(base?: string, token?: string): Record<string, Record<string, (a?: object) => Promise<unknown>>>;
      LabError: new (...a: unknown[]) => Error;
    };
    expect((globalThis as { pwned?: number }).pwned).toBeUndefined(); // the description stayed a comment

    const lab = mod.createLab(undefined, 'tok'); // the default base URL
    expect(await lab.pump.dose({ volume_ml: 2 })).toEqual({ echo: 'dose', args: { volume_ml: 2 } });
    expect(await lab['heat-block'].set({ 'temp-c': 5 })).toEqual({ echo: 'set', args: { 'temp-c': 5 } });
    expect(await lab.pump.prime()).toEqual({ echo: 'prime', args: {} });
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      url: '/app/instruments/pump',
      headers: { accept: 'application/json', 'content-type': 'application/json', authorization: 'Bearer tok' },
      body: { method: 'dose', args: { volume_ml: 2 } },
    });
    expect(server.requests[1].url).toBe('/app/instruments/heat-block');

    const err = await lab.pump.dose({ volume_ml: -1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(mod.LabError);
    expect(err).toMatchObject({
      status: 400,
      code: 'invalid_input',
      message: 'volume_ml must be positive',
      details: [{ field: 'volume_ml', message: 'too small' }],
      data: {},
    });
    expect((err as { taskId?: number }).taskId).toBeUndefined();

    // the instrument raised: the error keeps the failed call's record id
    const jammed = await lab.pump.dose({ volume_ml: 99 }).catch((e: unknown) => e);
    expect(jammed).toBeInstanceOf(mod.LabError);
    expect(jammed).toMatchObject({ status: 502, code: 'instrument_error', message: 'pump jammed', taskId: 41, data: { task_id: 41, instrument: 'pump', method: 'dose' } });

    const runner = lab as unknown as { runnerStatus(): Promise<unknown> };
    expect(await runner.runnerStatus()).toEqual({ busy: false, state: 'idle', current_task: null });
    expect(server.requests.at(-1)).toMatchObject({ method: 'GET', url: '/app/executions/status', headers: { authorization: 'Bearer tok' } });
  });

  it('type-checks under strict settings, in a browser (DOM) and in Node', () => {
    const { content } = generateProxy('typescript', [...instruments, ...clashing], { defaultBaseUrl: 'http://127.0.0.1:8000/app', routes: ROUTES });
    const file = join(dir, 'typed-client.ts');
    const use = join(dir, 'use-client.ts');
    writeFileSync(file, content);
    // a script using the runner's part as the docs show it
    writeFileSync(
      use,
      [
        "import { createLab, LabError, RunError, WaitTimeoutError, type RunRecord } from './typed-client.js';",
        "const lab = createLab('http://127.0.0.1:8000/app', 'tok');",
        'export async function main(): Promise<RunRecord | string> {',
        "  const out: number = await lab['heat-block'].set({ 'temp-c': 40 });",
        '  await lab.queue_.go();',
        "  const task = await lab.queueRun({ workflow: 'dose-and-weigh', config: [{ volume: 1 }], name: 'first' });",
        "  await lab.startCampaign({ workflow: 'w', repeat: 4, optimizer_type: 'sobol', parameters: 't: 20..120', objectives: [{ name: 'yield', minimize: false }] });",
        '  try {',
        '    return await lab.waitForRun(task, { timeoutMs: 60_000, pollMs: 100 });',
        '  } catch (e) {',
        '    if (e instanceof RunError) return `${e.status} ${e.error ?? ""} ${e.record?.id ?? ""} ${e.failedStep?.path ?? ""}`;',
        '    if (e instanceof WaitTimeoutError) return e.state;',
        '    if (e instanceof LabError && e.taskId !== undefined) return (await lab.callRecord(e.taskId)).status;',
        '    throw e;',
        '  } finally {',
        "    const s = await lab.runnerStatus(); const q = await lab.queue(); const r = await lab.records({ keyword: 'x', page: 1 });",
        '    void [s.state, q.tasks[0]?.status, r.records[0]?.status, (await lab.record(1)).phases, out];',
        '  }',
        '}',
      ].join('\n'),
    );
    const base: ts.CompilerOptions = {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      noUnusedLocals: true,
      noUnusedParameters: true,
      exactOptionalPropertyTypes: true,
      skipLibCheck: true,
    };
    const settings: [string, ts.CompilerOptions][] = [
      ['browser', { ...base, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], types: [] }],
      ['node', { ...base, lib: ['lib.es2022.d.ts'], types: ['node'], typeRoots: [join(process.cwd(), 'node_modules/@types')] }],
    ];
    for (const [where, options] of settings) {
      const program = ts.createProgram([file, use], options);
      const problems = ts.getPreEmitDiagnostics(program).map((d) => `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
      expect(problems).toEqual([]);
    }
  }, 60_000);

  it('an instrument named like a runner method is lab.<name>_', () => {
    const { content } = generateProxy('typescript', clashing, { defaultBaseUrl: 'http://x/app', routes: ROUTES });
    expect(content).toContain('export interface Lab extends Runner {');
    expect(content).toContain('  queue_: {');
    expect(content).toContain('  records_: {');
    expect(content).toContain('  wait_for_run: {'); // not a TypeScript method name (waitForRun is)
    expect(content).toContain(" * The instrument 'queue' is lab.queue_: queue is a Runner method.");
    expect(content).toMatch(/ {4}\.\.\.makeRunner\(send\),\n {4}queue_: \{\n {6}go: \(args\?: QueueGoArgs\) => call\("queue", "go", args\)/);
  });
});

describe('generateProxy: the runner follows the route declarations', () => {
  const declared = ROUTES.filter((r) => r.client);
  const python = generateProxy('python', [], { defaultBaseUrl: 'http://x/app', routes: ROUTES }).content;
  const typescript = generateProxy('typescript', [], { defaultBaseUrl: 'http://x/app', routes: ROUTES }).content;
  const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

  it('has one method per client route in each language, calling that route', () => {
    expect(declared.length).toBeGreaterThanOrEqual(12);
    for (const r of declared) {
      const name = r.client!.name;
      const py = python.slice(python.indexOf(`    def ${name}(`));
      expect(py).toMatch(new RegExp(`^    def ${name}\\(`));
      expect(py.split('\n    def ')[0]).toContain(`request("${r.method}", "${r.path.replace(/\{[^}]+\}/g, '%s')}"`);
      expect(typescript).toMatch(new RegExp(`\\n  ${camel(name)}\\(`));
      expect(typescript).toContain(`    ${camel(name)}: (`);
    }
  });

  it('writes its answer types from the API document the server serves: every field of each component, required as there', () => {
    const schemas = buildOpenApi({ routes: ROUTES, instruments: [], serverUrl: 'http://x', public: true }).components.schemas as Record<string, JSONSchema>;
    for (const [name, component] of Object.entries({
      RunnerStatus: 'RunnerStatus',
      RunRecord: 'Record',
      RecordList: 'RecordList',
      CallRecord: 'Step',
      QueuedTask: 'QueueTask',
      Queue: 'Queue',
      RunStarted: 'RunStarted',
    })) {
      const block = typescript.slice(typescript.indexOf(`export type ${name} = {`)).split('\n};')[0];
      expect(block).toMatch(new RegExp(`^export type ${name} = \\{`));
      const required = new Set((schemas[component].required ?? []) as string[]);
      for (const field of Object.keys(schemas[component].properties as object)) expect(block).toContain(`\n  ${field}${required.has(field) ? '' : '?'}: `);
    }
    expect(typescript).toContain("export type RunningTask = RunnerStatus['running'][number];");
    expect(typescript).toContain("export type TaskStatus = QueuedTask['status'];");
    // none of them is also written by hand in the runtime
    for (const name of ['QueuedTask', 'Queue', 'RunStarted', 'TaskStatus']) expect(typescript.match(new RegExp(`^export (?:interface|type) ${name}\\b`, 'gm'))).toHaveLength(1);
  });

  it("takes every field of a route's body, typed and described from its schema", () => {
    const start = declared.find((r) => r.operationId === 'startRun')!;
    for (const field of Object.keys(start.body!.schema.shape)) {
      expect(python).toMatch(new RegExp(`def queue_run\\(self[^\\n]*\\b${field}: `));
      expect(typescript.slice(typescript.indexOf('export interface RunBody {')).split('\n}')[0]).toMatch(new RegExp(`\\n  ${field}\\??: `));
    }
    // required fields by position, the declared positional ones next, the rest by keyword
    expect(python).toMatch(/def queue_run\(self, workflow: str, config: Optional\[[^\n]*\] = None, \*, repeat: /);
    expect(python).toContain('            config_file: Or: the filename of an uploaded config CSV');
  });
});
