/**
 * `lab run`'s live view in a real terminal, from the installed `lab` (issue 25: the bundle's view died with
 * "createElement is not a function" after the run had started). An operator pauses and resumes, continues
 * a pause step, retries, skips, stops after an iteration and aborts, with the keys the view shows.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LAB_BIN } from './installed.js';
import { openTerminal, type Terminal } from './terminal.js';

/** Each iteration waits a second (time to press p while a step runs), jams the pump, and doses: the dose fails. */
const JAMMED = {
  name: 'jammed',
  parameters: [],
  outputs: [],
  prep: [{ kind: 'pause', message: 'load the vials' }],
  main: [
    { kind: 'wait', seconds: 1 },
    { kind: 'call', instrument: 'pump', method: 'jam', args: {} },
    { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { value: 1 } } },
  ],
  cleanup: [{ kind: 'call', instrument: 'pump', method: 'status', args: {} }],
};

describe('lab run in a terminal (the installed bundle)', () => {
  let dir: string;
  let term: Terminal | null = null;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'labdeck-run-tty-'));
    await writeFile(join(dir, 'jammed.json'), JSON.stringify(JAMMED));
  });
  afterEach(async () => {
    term?.close();
    term = null;
    await rm(dir, { recursive: true, force: true });
  });
  const run = (repeat: number) => (term = openTerminal([process.execPath, LAB_BIN, 'run', 'jammed.json', '--repeat', String(repeat), '--data-dir', join(dir, 'data')], { cwd: dir }));

  it('takes c, p, r, s and n from the operator, each as its key help says, and ends stopped with its cleanup run', async () => {
    const t = run(4);
    await t.waitFor('Waiting at a pause step: load the vials');
    expect(t.screen()).toContain('c continue');
    t.keys('c');
    await t.waitFor('iteration 1/4');
    t.keys('p'); // during the wait step: it finishes, no new step starts
    await t.waitFor('pausing after this step');
    await t.waitFor(/· paused\n/);
    expect(t.screen()).toContain('p resume');
    t.keys('p');
    await t.waitFor('Step main[2] failed: pump jammed');
    expect(t.screen()).toContain('r retry the failed step');
    t.keys('r');
    await t.waitFor('1/4 iterations');
    await t.waitFor(/iteration 2\/4[^\n]*pump\.dose ✗/);
    t.keys('s');
    await t.waitFor('2/4 iterations');
    await t.waitFor(/iteration 3\/4[^\n]*pump\.dose ✗/);
    t.keys('n'); // at a failed step: nothing more of the iteration to finish, so the run stops now
    const end = await t.waitFor(/Run stopped/); // the view's last line (its header may have scrolled away)
    expect(end).toContain('2/4 iterations');
    expect(end).toMatch(/cleanup\[0\] pump\.status ✓/);
    expect(await t.exitCode()).toBe(1); // stopped is not completed
  });

  it('aborts on a at a failed step: the cleanup phase runs and the run ends aborted, never left running', async () => {
    const t = run(2);
    await t.waitFor('load the vials');
    t.keys('c');
    await t.waitFor('Step main[2] failed: pump jammed');
    t.keys('a');
    const end = await t.waitFor(/Run aborted/);
    expect(end).toMatch(/cleanup/i);
    expect(await t.exitCode()).toBe(1);
  });
});
