/**
 * The workflows page marks each workflow the current deck breaks (issue 32, item 4): a plugin in the watched
 * plugin folder is saved with an argument renamed, labdeck reloads it by itself, a new deck version says
 * "argument to renamed to target", and the workflows page (HTML and JSON) flags the workflow that passes the
 * old name by step and field, with that change and its version; a workflow that does not use it is not
 * flagged, and a new version that passes the new name clears the mark.
 */
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLab, type TestLab } from './helpers.js';

const J = 'application/json';
const mover = (arg: string) => `export class Mover {\n  /** Move a sample */\n  move_sample(sample = 's', ${arg} = 'plate1:A1') {\n    return ${arg};\n  }\n}\n`;
const MOVE = {
  name: 'move',
  parameters: [{ name: 'where', type: 'string', default: 'plate1:A1' }],
  outputs: [],
  main: [
    { kind: 'wait', seconds: 0 },
    { kind: 'call', instrument: 'mover', method: 'move_sample', args: { sample: { value: 'S-1' }, to: { param: 'where' } } },
  ],
};
const DOSE = { name: 'dose', parameters: [], outputs: [], main: [{ kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { value: 1 } } }] };

type Summary = { name: string; broken: { field: string; step: string; call?: string; message: string; change?: string; deck_version?: number }[] };
const listed = async (lab: TestLab): Promise<Record<string, Summary['broken']>> =>
  Object.fromEntries(((await lab.admin.get('/app/workflows').set('Accept', J).expect(200)).body.workflows as Summary[]).map((w) => [w.name, w.broken]));

let dir: string;
let lab: TestLab;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'labdeck-broken-'));
  await mkdir(join(dir, 'plugins'));
  await writeFile(join(dir, 'plugins', 'mover.ts'), mover('to'));
  lab = await startLab({ pluginDirs: [join(dir, 'plugins')], watch: true });
  await lab.runtime.deck.connect('Mover', 'mover', {});
  await lab.runtime.preflight.settled();
});
afterAll(async () => {
  await lab?.close();
  await rm(dir, { recursive: true, force: true });
});

it('a renamed argument in a plugin saved in the watched folder marks the workflows it breaks, by step and field, on the workflows page', async () => {
  await lab.admin.post('/app/workflows').send(MOVE).expect(201);
  await lab.admin.post('/app/workflows').send(DOSE).expect(201);
  expect(await listed(lab)).toEqual({ move: [], dose: [] });
  const before = (await lab.admin.get('/app/workflows').expect(200)).text;
  expect(before).not.toContain('data-broken');

  // the driver's author renames `to` to `target` and saves: the watcher reloads it, nobody calls reload
  const reloaded = once(lab.runtime.plugins, 'reload');
  await writeFile(join(dir, 'plugins', 'mover.ts'), mover('target'));
  await reloaded;
  await lab.runtime.preflight.settled();
  const current = lab.runtime.preflight.deckVersion!;
  const version = (await lab.admin.get(`/app/deck/versions/${current}`).set('Accept', J).expect(200)).body;
  expect(version.lines).toContain('mover.move_sample: argument to renamed to target');

  const broken = await listed(lab);
  expect(broken.dose).toEqual([]);
  expect(broken.move).toEqual([
    {
      field: 'main[1].args.to',
      step: 'main[1]',
      call: 'mover.move_sample',
      message: expect.stringContaining('has no argument "to"'),
      change: 'mover.move_sample: argument to renamed to target',
      deck_version: current,
    },
  ]);

  const page = (await lab.admin.get('/app/workflows').expect(200)).text;
  const item = page.slice(page.indexOf('data-broken="true"'));
  expect(item).toContain('broken by the deck');
  expect(item).toContain('<code>main[1].args.to</code> (mover.move_sample)');
  expect(item).toContain('mover.move_sample: argument to renamed to target');
  expect(item).toContain(`href="/app/deck/versions/${current}"`);
  expect(page.match(/data-broken="true"/g)).toHaveLength(1);
  expect(/href="([^"]+)"/.exec(item)![1]).toBe('/app/workflows/move');

  // the run it would make is refused by the same check, naming the same field; nothing is queued
  const refused = await lab.admin
    .post('/app/executions/config')
    .set('Accept', J)
    .send({ workflow: 'move', config: [{ where: 'plate1:B1' }] })
    .expect(400);
  expect(refused.body.error.details).toContainEqual(expect.objectContaining({ field: 'main[1].args.to' }));
  expect((await lab.admin.get('/app/executions/queue').expect(200)).body.tasks).toEqual([]);

  // a new version passing the new name fits the deck again: the mark goes
  const fixed = { ...MOVE, main: [MOVE.main[0], { ...MOVE.main[1], args: { sample: { value: 'S-1' }, target: { param: 'where' } } }] };
  await lab.admin.put('/app/workflows/move').send(fixed).expect(200);
  expect(await listed(lab)).toEqual({ move: [], dose: [] });
});
