/**
 * core/records without HTTP or a database: the list query, step paths from a workflow snapshot, the plot
 * data normaliser, the steps-CSV rows (through the shared CSV writer) and the log text.
 */
import { csvChunks } from '../../core/files/csv.js';
import { STEPS_CSV_COLUMNS, logText, mayDelete, parseListQuery, pathAtIndex, plotData, stepPathResolver, stepsCsvBatches, stepsCsvRow } from '../../core/records/index.js';
import type { PhaseRow, StepRow } from '../../core/store/types.js';
import type { Step } from '../../core/workflow/model.js';
import { labError } from '../helpers/errors.js';

describe('parseListQuery', () => {
  it('defaults to page 1 of 20, no keyword; empty values count as absent', () => {
    expect(parseListQuery({})).toEqual({ keyword: '', page: 1, perPage: 20 });
    expect(parseListQuery({ keyword: '  ', page: '', per_page: '' })).toEqual({ keyword: '', page: 1, perPage: 20 });
    expect(parseListQuery({ keyword: ' titration ', page: '500', per_page: '200' })).toEqual({ keyword: 'titration', page: 500, perPage: 200 });
  });

  it.each([
    [{ page: '0' }, 'page'],
    [{ page: '-1' }, 'page'],
    [{ page: '1.5' }, 'page'],
    [{ page: 'abc' }, 'page'],
    [{ page: '99999999999999999999' }, 'page'],
    [{ per_page: '0' }, 'per_page'],
    [{ per_page: '201' }, 'per_page'],
    [{ per_page: ['5', '6'] }, 'per_page'],
    [{ keyword: ['a', 'b'] }, 'keyword'],
    [{ keyword: 'x'.repeat(201) }, 'keyword'],
  ])('refuses %j, naming %s', (q, field) => {
    const e = labError(() => parseListQuery(q));
    expect(e.code).toBe('invalid_input');
    expect(e.details?.[0]?.field).toBe(field);
    expect(e.message).toContain(field);
  });
});

describe('step paths from the workflow snapshot', () => {
  const call = (method: string): Step => ({ kind: 'call', instrument: 'noop', method });
  const steps: Step[] = [
    call('a'),
    { kind: 'repeat', times: 3, steps: [call('b'), { kind: 'wait', seconds: 0 }] },
    call('c'),
    { kind: 'if', condition: { left: { value: 1 }, op: '==', right: { value: 1 } }, then: [call('d')] },
    call('e'),
  ];

  it('counts through repeats as the interpreter does', () => {
    const paths = Array.from({ length: 10 }, (_, i) => pathAtIndex(steps, 'main', i));
    expect(paths).toEqual([
      'main[0]',
      'main[1].steps[0]',
      'main[1].steps[1]',
      'main[1].steps[0]',
      'main[1].steps[1]',
      'main[1].steps[0]',
      'main[1].steps[1]',
      'main[2]',
      'main[3]', // the if itself is known
      null, // after it, the branch taken decides
    ]);
    expect(pathAtIndex(steps, 'main', -1)).toBeNull();
    expect(pathAtIndex([call('a')], 'prep', 1)).toBeNull();
  });

  it('resolves nested repeats arithmetically (a 10,000-step repeat needs no walk)', () => {
    const big: Step[] = [{ kind: 'repeat', times: 100, steps: [{ kind: 'repeat', times: 100, steps: [call('x')] }] }];
    expect(pathAtIndex(big, 'main', 9_999)).toBe('main[0].steps[0].steps[0]');
    expect(pathAtIndex(big, 'main', 10_000)).toBeNull();
    const zero: Step[] = [{ kind: 'repeat', times: 0, steps: [call('x')] }, call('y')];
    expect(pathAtIndex(zero, 'main', 0)).toBe('main[1]');
  });

  it('knows the leading steps of a repeat whose body has an if', () => {
    const s: Step[] = [{ kind: 'repeat', times: 2, steps: [call('a'), { kind: 'if', condition: { left: { value: 1 }, op: '<', right: { value: 2 } }, then: [] }, call('b')] }];
    expect(pathAtIndex(s, 'main', 0)).toBe('main[0].steps[0]');
    expect(pathAtIndex(s, 'main', 1)).toBe('main[0].steps[1]');
    expect(pathAtIndex(s, 'main', 2)).toBeNull();
  });

  it('tolerates snapshots of any shape', () => {
    const of = stepPathResolver({ prep: [call('p')], main: 'nonsense' });
    expect(of('prep', 0)).toBe('prep[0]');
    expect(of('main', 0)).toBeNull();
    expect(of('cleanup', 0)).toBeNull();
    expect(of(null, 0)).toBeNull();
    expect(of('prep', null)).toBeNull();
    expect(of('constructor', 0)).toBeNull();
    expect(stepPathResolver(null)('main', 0)).toBeNull();
  });
});

describe('plotData', () => {
  let id = 0;
  const phase = (p: Partial<PhaseRow>): PhaseRow => ({
    id: ++id,
    runId: 1,
    phase: 'main',
    iteration: 0,
    params: {},
    outputs: {},
    status: 'ok',
    startedAt: new Date(0),
    endedAt: new Date(1),
    ...p,
  });
  const run = {
    id: 7,
    workflowName: 'dose',
    workflow: { name: 'dose', parameters: [{ name: 'volume', type: 'number' }], outputs: ['mass', 'label'] },
  };

  it('one entry per main iteration in order, series aligned with it, numbers only', () => {
    const data = plotData(run, [
      phase({ phase: 'prep', iteration: null, params: { ignored: 1 } }),
      phase({ iteration: 2, params: { volume: 3 }, outputs: { mass: 2.9, label: 'c' } }),
      phase({ iteration: 0, params: { volume: 1 }, outputs: { mass: 1.1, label: 'a' } }),
      phase({ iteration: 1, params: { volume: 2 }, outputs: { mass: 'broken', label: 'b' }, status: 'error' }),
      phase({ iteration: 1, params: { volume: 2 }, outputs: { mass: 2.05, label: 'b' } }), // re-run: the last wins
      phase({ iteration: 3, params: { volume: Number.NaN }, outputs: { mass: true }, status: 'stopped' }),
      phase({ phase: 'cleanup', iteration: null, outputs: { ignored: 1 } }),
    ]);
    expect(data.run_id).toBe(7);
    expect(data.workflow).toBe('dose');
    expect(data.parameters).toEqual(['volume']);
    expect(data.outputs).toEqual(['mass', 'label']);
    expect(data.iterations.map((i) => [i.iteration, i.status])).toEqual([
      [0, 'ok'],
      [1, 'ok'],
      [2, 'ok'],
      [3, 'stopped'],
    ]);
    expect(data.series).toEqual({ volume: [1, 2, 3, null], mass: [1.1, 2.05, 2.9, null], label: [null, null, null, null] });
  });

  it('leaves the outputs of an iteration with a skipped step out of the series (not data), and lists it with its status', () => {
    const data = plotData(run, [phase({ iteration: 0, params: { volume: 1 }, outputs: { mass: 1.1 } }), phase({ iteration: 1, params: { volume: 2 }, outputs: { mass: 0.01 }, status: 'skipped' })]);
    expect(data.iterations.map((i) => [i.iteration, i.status])).toEqual([
      [0, 'ok'],
      [1, 'skipped'],
    ]);
    expect(data.series).toEqual({ volume: [1, 2], mass: [1.1, null], label: [null, null] });
  });

  it('adds names a phase recorded that the snapshot lacks; a name in both stays a parameter', () => {
    const data = plotData({ id: 1, workflowName: 'w', workflow: { parameters: [{ name: 'x' }, { nope: 1 }], outputs: ['x', 'y', 3] } }, [
      phase({ iteration: 0, params: { x: 1, extra: 5, __proto__: 9 } as Record<string, unknown>, outputs: { y: 2, z: 4 } }),
    ]);
    expect(data.parameters).toEqual(['x', 'extra']);
    expect(data.outputs).toEqual(['y', 'z']);
    expect(data.series.y).toEqual([2]);
    expect(data.series.z).toEqual([4]);
  });

  it('keeps a key named __proto__ as data', () => {
    const params = JSON.parse('{"__proto__": 5}') as Record<string, unknown>;
    const data = plotData({ id: 1, workflowName: 'w', workflow: null }, [phase({ iteration: 0, params })]);
    expect(data.parameters).toEqual(['__proto__']);
    expect(Object.prototype.hasOwnProperty.call(data.series, '__proto__')).toBe(true);
    expect(JSON.stringify(data.series)).toBe('{"__proto__":[5]}');
  });

  it('answers an empty shape for a run with no iteration yet', () => {
    expect(plotData({ id: 2, workflowName: 'w', workflow: 'not a workflow' }, [])).toEqual({ run_id: 2, workflow: 'w', parameters: [], outputs: [], iterations: [], series: {} });
  });
});

describe('the steps CSV rows and the log text', () => {
  const step = (p: Partial<StepRow>): StepRow => ({
    id: 1,
    runId: 3,
    phase: 'main',
    iteration: 1,
    stepIndex: 0,
    instrument: 'pump',
    method: 'dose',
    args: { volume_ml: 1.5 },
    output: 1.5,
    status: 'ok',
    error: null,
    userId: 1,
    startedAt: new Date('2024-05-01T10:00:00.000Z'),
    endedAt: new Date('2024-05-01T10:00:00.042Z'),
    log: null,
    ...p,
  });

  it('maps a step to the columns of DESIGN.md §6, args and output as JSON', () => {
    expect(STEPS_CSV_COLUMNS).toEqual(['phase', 'iteration', 'step_index', 'instrument', 'method', 'args', 'output', 'status', 'error', 'started_at', 'ended_at', 'duration_ms']);
    expect(stepsCsvRow(step({}))).toEqual({
      phase: 'main',
      iteration: 2, // recorded 1: counted from 1, as pages show it
      step_index: 0,
      instrument: 'pump',
      method: 'dose',
      args: '{"volume_ml":1.5}',
      output: '1.5',
      status: 'ok',
      error: '',
      started_at: '2024-05-01T10:00:00.000Z',
      ended_at: '2024-05-01T10:00:00.042Z',
      duration_ms: 42,
    });
    const running = stepsCsvRow(step({ phase: null, iteration: null, stepIndex: null, output: null, status: 'running', endedAt: null }));
    expect(running).toMatchObject({ phase: '', iteration: '', step_index: '', output: '', ended_at: '', duration_ms: '' });
    expect(stepsCsvRow(step({ output: 'pong' })).output).toBe('"pong"');
  });

  it('writes formula-looking cells neutralised, through the shared CSV writer', async () => {
    const rows: StepRow[][] = [
      [step({ id: 1, instrument: '@evil', method: '=cmd', error: '=HYPERLINK("http://x")', status: 'error', output: null })],
      [step({ id: 2, output: -1.5, args: { note: '+1' } })],
    ];
    async function* batches() {
      for (const b of rows) yield b;
    }
    let text = '';
    for await (const chunk of csvChunks(STEPS_CSV_COLUMNS, stepsCsvBatches(batches()))) text += chunk;
    const lines = text.trimEnd().split('\r\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe(STEPS_CSV_COLUMNS.join(','));
    expect(lines[1]).toContain(`'@evil,'=cmd`);
    expect(lines[1]).toContain(`"'=HYPERLINK(""http://x"")"`);
    // a plain negative number is data, left alone; JSON text starts with { or " and is never a formula
    expect(lines[2]).toContain(',-1.5,ok,');
    expect(lines[2]).toContain('"{""note"":""+1""}"');
  });

  it('writes one line per log entry: ISO time, level, message (line breaks as \\n)', () => {
    const text = logText([
      { at: new Date('2024-05-01T10:00:00.000Z'), level: 'info', message: 'Started dose v1: 3 iteration(s).' },
      { at: new Date('2024-05-01T10:00:01.500Z'), level: 'error', message: 'Step main[0] failed:\nline two\r\nthree' },
    ]);
    expect(text).toBe('2024-05-01T10:00:00.000Z INFO  Started dose v1: 3 iteration(s).\n' + '2024-05-01T10:00:01.500Z ERROR Step main[0] failed:\\nline two\\nthree\n');
    expect(logText([])).toBe('');
  });
});

describe('mayDelete', () => {
  it('lets the owner and admins delete; a headless run is for admins', () => {
    expect(mayDelete({ userId: 5 }, { id: 5, role: 'operator' })).toBe(true);
    expect(mayDelete({ userId: 5 }, { id: 6, role: 'operator' })).toBe(false);
    expect(mayDelete({ userId: 5 }, { id: 6, role: 'admin' })).toBe(true);
    expect(mayDelete({ userId: null }, { id: 6, role: 'operator' })).toBe(false);
    expect(mayDelete({ userId: null }, { id: 1, role: 'admin' })).toBe(true);
  });
});
