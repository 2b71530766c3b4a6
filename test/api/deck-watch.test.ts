/**
 * The startup deck and its own modules are watched (core/deck/watch.ts): an ivoryOS-layout Python deck
 * (`deck.py` importing `drivers/pump.py`) whose driver is saved tells the server log and the pages that a
 * restart is needed to load it; the running instruments keep working on the code they started with.
 */
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeckChange } from '../../core/deck/watch.js';
import { startLab, type TestLab } from './helpers.js';

const J = 'application/json';
const PUMP = 'class Pump:\n    def dose(self, ml: float) -> float:\n        """Dose."""\n        return ml\n';

let dir: string;
let lab: TestLab;
const logged: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'labdeck-deckwatch-'));
  await mkdir(join(dir, 'drivers'));
  await writeFile(join(dir, 'drivers', '__init__.py'), '');
  await writeFile(join(dir, 'drivers', 'pump.py'), PUMP);
  await writeFile(join(dir, 'deck.py'), 'from drivers.pump import Pump\n\npump = Pump()\n');
  lab = await startLab({ deck: join(dir, 'deck.py'), watch: true, log: (l) => logged.push(l) });
}, 60_000);
afterAll(async () => {
  await lab?.close();
  await rm(dir, { recursive: true, force: true });
});

it('watches the deck file and the modules it imports from its folder; a saved driver says a restart is needed, in the log and on the pages', async () => {
  expect(lab.runtime.deck.sourcesOf(join(dir, 'deck.py'))).toEqual([join(dir, 'deck.py'), join(dir, 'drivers', '__init__.py'), join(dir, 'drivers', 'pump.py')]);
  expect(lab.runtime.deckWatch!.changed).toBeNull();
  const page = await lab.admin.get('/app/instruments/').expect(200);
  expect(page.text).not.toContain('id="deck-changed"');

  const seen = once(lab.runtime.deckWatch!, 'change') as Promise<[DeckChange]>;
  await writeFile(join(dir, 'drivers', 'pump.py'), PUMP.replace('return ml', 'return ml * 2'));
  const [change] = await seen;
  expect(change.file).toBe(join(dir, 'drivers', 'pump.py'));
  const said = `drivers/pump.py (of the deck ${join(dir, 'deck.py')}) changed on disk: restart labdeck to load it`;
  expect(logged.some((l) => l.startsWith('[deck] ') && l.includes(said))).toBe(true);
  for (const path of ['/app/instruments/', '/app/']) {
    const after = await lab.admin.get(path).expect(200);
    expect(after.text).toContain('id="deck-changed"');
    expect(after.text).toContain(said);
  }
  // the running pump keeps the code it started with, until the restart
  expect(
    (
      await lab.admin
        .post('/app/instruments/pump')
        .set('Accept', J)
        .send({ method: 'dose', args: { ml: 2 } })
        .expect(200)
    ).body.output,
  ).toBe(2);
});
