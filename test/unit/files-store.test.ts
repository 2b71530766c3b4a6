/**
 * FileStore: uploads checked and kept under generated names, found again only by those names, inside their
 * folder; config and history files checked against a workflow; a run's data as a table.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_UPLOAD_LIMIT, FileStore } from '../../core/files/store.js';
import { runData, runIdOfFileName } from '../../core/files/rundata.js';
import type { Store } from '../../core/store/types.js';
import { Workflow } from '../../core/workflow/model.js';
import { withTestStore } from '../helpers/db.js';
import { labError } from '../helpers/errors.js';

let store: Store;
let dataDir: string;
let files: FileStore;

withTestStore((t) => {
  ({ store, dataDir } = t);
  files = new FileStore(store, dataDir);
});

const dose = Workflow.parse({
  name: 'dose',
  parameters: [
    { name: 'volume', type: 'number' },
    { name: 'count', type: 'integer', default: 1 },
    { name: 'solvent', type: 'string', default: 'water' },
  ],
  outputs: ['mass'],
});

describe('FileStore.save', () => {
  it('keeps a config file under a generated name in its folder, as uploaded, and records it', async () => {
    const data = Buffer.from('volume,solvent\n1.5,water\n2,ethanol\n');
    const { file, table } = await files.save('config', data, 'C:\\Users\\me\\my config.csv', { workflow: dose });
    expect(file.storedName).toMatch(/^cfg-[0-9a-f]{16}\.csv$/);
    expect(file).toMatchObject({ kind: 'config', originalName: 'my config.csv', workflow: 'dose', rows: 2, columns: ['volume', 'solvent'], size: data.length });
    expect(table).toEqual({ columns: ['volume', 'solvent'], rows: 2, truncated: false });
    const dir = path.join(dataDir, 'files', 'config');
    expect(fs.readFileSync(path.join(dir, file.storedName))).toEqual(data);
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.part'))).toEqual([]);
    expect(await store.files.get(file.storedName)).toMatchObject({ id: file.id });
    const again = await files.save('config', data, 'my config.csv');
    expect(again.file.storedName).not.toBe(file.storedName);
    expect(again.file.workflow).toBeNull();
  });

  it('keeps a history file under hist-…, in the history folder', async () => {
    const { file } = await files.save('history', Buffer.from('volume,mass\n1,0.99\n'), '../../etc/passwd', { workflow: dose, userId: null });
    expect(file.storedName).toMatch(/^hist-[0-9a-f]{16}\.csv$/);
    expect(file.originalName).toBe('passwd');
    expect(fs.existsSync(path.join(dataDir, 'files', 'history', file.storedName))).toBe(true);
  });

  it('checks a config against the workflow: the bad value is named by line and column', async () => {
    // the type row shifts the lines by one: the bad row is on line 4
    const e = await labError(files.save('config', Buffer.from('volume,count\nfloat,int\n1,2\nlots,3\n'), 'c.csv', { workflow: dose }));
    expect(e.code).toBe('invalid_input');
    expect(e.details).toEqual([{ field: 'line 4, column volume', message: expect.stringContaining('"lots" is not a number') }]);
    expect(e.message).toContain('line 4, column volume');
    const missing = await labError(files.save('config', Buffer.from('count\n2\n'), 'c.csv', { workflow: dose }));
    expect(missing.details?.[0]).toMatchObject({ field: 'line 2, column volume', message: expect.stringContaining('no default') });
    const unknown = await labError(files.save('config', Buffer.from('volume,speed\n1,2\n'), 'c.csv', { workflow: dose }));
    expect(unknown.details).toEqual([{ field: 'line 1, column speed', message: expect.stringContaining('its parameters are volume, count, solvent') }]);
  });

  it('checks a history file: columns are parameters or outputs, parameter cells of their type (empty allowed)', async () => {
    await files.save('history', Buffer.from('volume,count,mass\n1,2,0.5\n2,,\n'), 'h.csv', { workflow: dose });
    const col = await labError(files.save('history', Buffer.from('volume,yield\n1,2\n'), 'h.csv', { workflow: dose }));
    expect(col.details).toEqual([{ field: 'line 1, column yield', message: expect.stringContaining('neither a parameter nor an output') }]);
    const val = await labError(files.save('history', Buffer.from('volume,count,mass\n1,2,x\n1,2.5,3\n'), 'h.csv', { workflow: dose }));
    expect(val.details).toEqual([{ field: 'line 3, column count', message: expect.stringContaining('not a whole number') }]);
    // without a workflow any well-formed table is fine (outputs may be text)
    await files.save('history', Buffer.from('anything,at_all\nx,1\n'), 'h.csv');
  });

  it('refuses a malformed file, a header with no rows, and a file over the limit, writing nothing', async () => {
    const before = (await store.files.list('config')).length;
    const bad = await labError(files.save('config', Buffer.from('a,b\n1,2\n3\n'), 'c.csv'));
    expect(bad.details).toEqual([{ field: 'line 3', message: expect.stringContaining('has 1 cell') }]);
    expect((await labError(files.save('config', Buffer.from('volume\n'), 'c.csv'))).message).toContain('no rows');
    expect(files.limitBytes).toBe(DEFAULT_UPLOAD_LIMIT);
    const small = new FileStore(store, dataDir, { limitBytes: 10 });
    const big = await labError(small.save('config', Buffer.from('volume\n1\n2\n3\n'), 'c.csv'));
    expect(big.code).toBe('payload_too_large');
    expect((await store.files.list('config')).length).toBe(before);
  });

  it('removes the written file when it cannot be recorded', async () => {
    const failing = Object.create(store) as Store;
    Object.defineProperty(failing, 'files', { value: { ...store.files, add: () => Promise.reject(new Error('database down')) } });
    const dir = path.join(dataDir, 'files', 'config');
    const before = fs.readdirSync(dir).sort();
    await expect(new FileStore(failing, dataDir).save('config', Buffer.from('volume\n1\n'), 'c.csv')).rejects.toThrow('database down');
    expect(fs.readdirSync(dir).sort()).toEqual(before);
  });
});

describe('FileStore.open and read', () => {
  it('finds a file by its generated name only, and reads it parsed', async () => {
    const { file } = await files.save('config', Buffer.from('\uFEFFvolume\nnumber\n3\n'), 'c.csv');
    const opened = await files.open(file.storedName);
    expect(opened.path).toBe(path.join(dataDir, 'files', 'config', file.storedName));
    const { table } = await files.read(file.storedName);
    expect(table).toMatchObject({ columns: ['volume'], rows: [{ volume: '3' }], types: ['number'] });
    expect(await files.configRows(file.storedName, dose)).toEqual([{ volume: 3, count: 1, solvent: 'water' }]);
  });

  it('refuses paths, traversal, encoded names, unknown names and the wrong kind with not_found', async () => {
    const { file } = await files.save('history', Buffer.from('volume\n1\n'), 'h.csv');
    // a real file outside the folders, at a name a traversal would reach
    fs.writeFileSync(path.join(dataDir, 'secret.csv'), 'volume\n1\n');
    const attempts = [
      '../secret.csv',
      '../../secret.csv',
      '..%2fsecret.csv',
      '%2e%2e/secret.csv',
      path.join(dataDir, 'secret.csv'),
      '/etc/passwd',
      `history/${file.storedName}`,
      `../history/${file.storedName}`,
      `${file.storedName}/`,
      `${file.storedName}.part`,
      file.storedName.toUpperCase(),
      'hist-0000000000000000.csv', // the right shape, never generated
      'cfg-0123456789abcdef.csv',
      '',
    ];
    for (const name of attempts) {
      const e = await labError(files.open(name));
      expect({ name, code: e.code }).toEqual({ name, code: 'not_found' });
    }
    expect((await labError(files.open(file.storedName, 'config'))).code).toBe('not_found');
    expect((await labError(files.configRows(file.storedName, dose))).code).toBe('not_found');
  });

  it('previews only the first rows, and writes a file out again neutralised, without its type row', async () => {
    const { file } = await files.save('history', Buffer.from(`volume,note\nnumber,string\n${'1,=cmd\n'.repeat(500)}`), 'h.csv');
    const p = await files.preview(file.storedName, 3);
    expect(p.head).toEqual({ columns: ['volume', 'note'], types: ['number', 'string'] });
    expect(p.rows).toEqual([
      { volume: '1', note: '=cmd' },
      { volume: '1', note: '=cmd' },
      { volume: '1', note: '=cmd' },
    ]);
    expect(p.file.rows).toBe(500);
    const { text } = await files.csvText(file.storedName);
    expect(text).toBe(`volume,note\r\n${"1,'=cmd\r\n".repeat(500)}`);
  });

  it('reads at most two files at once, lets eight wait, and refuses the rest with 503 and a time to retry', async () => {
    const { file } = await files.save('config', Buffer.from(`volume,solvent,count\n${'1.25,water,3\n'.repeat(20_000)}`), 'big.csv');
    const reads = Array.from({ length: 12 }, () =>
      files.csvText(file.storedName).then(
        () => 'ok',
        (e: unknown) => e,
      ),
    );
    const results = await Promise.all(reads);
    const refused = results.filter((r) => r !== 'ok') as { code?: string; data?: { retry_after?: number } }[];
    expect(results.filter((r) => r === 'ok')).toHaveLength(10);
    expect(refused).toHaveLength(2);
    expect(refused[0]).toMatchObject({ code: 'unavailable', data: { retry_after: 2 } });
    // the turns were all given back
    expect(await files.csvText(file.storedName)).toMatchObject({ file: { rows: 20_000 } });
  }, 60_000); // ten reads of the file: a loaded machine takes its time (no bound on speed here)

  it('says not_found when a recorded file is gone from disk', async () => {
    const { file } = await files.save('history', Buffer.from('volume\n1\n'), 'h.csv');
    fs.unlinkSync((await files.open(file.storedName)).path);
    expect((await labError(files.read(file.storedName))).message).toContain('no longer on disk');
  });

  it('lists uploads by kind and workflow, newest first', async () => {
    const a = await files.save('config', Buffer.from('volume\n1\n'), 'a.csv', { workflow: dose });
    const b = await files.save('config', Buffer.from('volume\n2\n'), 'b.csv', { workflow: dose });
    const listed = (await files.list('config', 'dose')).map((f) => f.storedName);
    expect(listed.slice(0, 2)).toEqual([b.file.storedName, a.file.storedName]);
    expect((await files.list('history', 'dose')).every((f) => f.kind === 'history' && f.workflow === 'dose')).toBe(true);
  });
});

describe('runData', () => {
  it('is one row per main iteration: its number (from 1) and status, parameter columns then output columns, in iteration order', async () => {
    const run = await store.runs.create({
      taskId: null,
      name: 'dose run',
      workflowName: 'dose',
      workflowVersion: 1,
      workflow: dose,
      parameters: [],
      status: 'completed',
      userId: null,
      startedAt: new Date(),
    });
    const phase = async (phase: 'prep' | 'main' | 'cleanup', iteration: number | null, params: unknown, outputs: unknown, status: 'ok' | 'skipped' = 'ok') => {
      const id = await store.phases.create({ runId: run.id, phase, iteration, params, startedAt: new Date() });
      if (outputs !== undefined) await store.phases.update(id, { outputs, status });
    };
    await phase('prep', null, {}, {});
    await phase('main', 1, { volume: 2, count: 1, solvent: 'water' }, { mass: 1.98 });
    await phase('main', 0, { volume: 1, count: 1, solvent: '=evil' }, { mass: 0.99, extra: 'x' });
    await phase('main', 2, { volume: 3, count: 1, solvent: 'water' }, undefined); // failed before outputs
    await phase('main', 3, { volume: 4, count: 1, solvent: 'water' }, { mass: 0.01 }, 'skipped'); // the dose was skipped
    await phase('cleanup', null, {}, {});
    const data = await runData(store, run.id);
    expect(data.columns).toEqual(['iteration', 'status', 'volume', 'count', 'solvent', 'mass', 'extra']);
    expect(data.parameters).toEqual(['volume', 'count', 'solvent']);
    expect(data.rows).toEqual([
      { iteration: 1, status: 'ok', volume: 1, count: 1, solvent: '=evil', mass: 0.99, extra: 'x' },
      { iteration: 2, status: 'ok', volume: 2, count: 1, solvent: 'water', mass: 1.98 },
      { iteration: 3, status: 'running', volume: 3, count: 1, solvent: 'water' },
      { iteration: 4, status: 'skipped', volume: 4, count: 1, solvent: 'water', mass: 0.01 },
    ]);
    expect((await labError(runData(store, 999999))).code).toBe('not_found');
  });

  it('names its own columns run_iteration and run_status when the workflow has a parameter or output called so', async () => {
    const wf = Workflow.parse({ name: 'st', parameters: [{ name: 'status', type: 'string' }], outputs: ['iteration'] });
    const run = await store.runs.create({ taskId: null, name: 'r', workflowName: 'st', workflowVersion: 1, workflow: wf, parameters: [], status: 'completed', userId: null, startedAt: new Date() });
    const id = await store.phases.create({ runId: run.id, phase: 'main', iteration: 0, params: { status: 'fine' }, startedAt: new Date() });
    await store.phases.update(id, { outputs: { iteration: 7 }, status: 'ok' });
    const data = await runData(store, run.id);
    expect(data.columns).toEqual(['run_iteration', 'run_status', 'status', 'iteration']);
    expect(data.rows).toEqual([{ run_iteration: 1, run_status: 'ok', status: 'fine', iteration: 7 }]);
  });

  it('reads run-<id>.csv names and nothing else', () => {
    expect(runIdOfFileName('run-12.csv')).toBe(12);
    for (const n of ['run-0.csv', 'run-012.csv', 'run-1', 'run-1.csv.part', '../run-1.csv', 'run-99999999999999999.csv', 'run--1.csv']) {
      expect(runIdOfFileName(n)).toBeNull();
    }
  });
});
