/**
 * ivoryOS's next generation over HTTP (issue 29): a deck file (`ivoryos-deck/1`) with broken instruments, and
 * a next-generation deck script, served by a real Python host. The fixtures (test/fixtures/ivoryos-next)
 * define the markers and worktable dunders themselves: nothing is installed.
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLab, type TestLab } from './helpers.js';

const J = 'application/json';
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/ivoryos-next/${name}`, import.meta.url));
type Listed = { name: string; offline?: string; failure?: { stage: string; error: string } };

describe('a deck file with broken instruments (ivoryos-deck/1)', () => {
  let lab: TestLab;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'labdeck-deckfile-'));
    await cp(fixture('drivers'), join(dir, 'drivers'), { recursive: true });
    await cp(fixture('lab.deck.json'), join(dir, 'lab.deck.json'));
    lab = await startLab({ deck: join(dir, 'lab.deck.json') });
  });
  afterAll(async () => {
    await lab.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('loads the rest; each broken one is listed offline with its stage and error, and calls to it answer 503', async () => {
    const list: Listed[] = (await lab.admin.get('/app/instruments/').set('Accept', J).expect(200)).body.instruments;
    expect(list.map((i) => i.name)).toEqual(['pump', 'liquid_handler', 'vendor_pump', 'heater', 'reader']);
    const by = Object.fromEntries(list.map((i) => [i.name, i]));
    expect(by.pump.offline).toBeUndefined();
    expect(by.vendor_pump.failure?.stage).toBe('import');
    expect(by.vendor_pump.offline).toMatch(/^import failed: ModuleNotFoundError: .*vendor_pumps/);
    expect(by.heater.failure).toMatchObject({ stage: 'init', error: 'OSError: could not open port COM9' });
    expect(by.reader.failure?.stage).toBe('setup');
    const call = await lab.admin.post('/app/instruments/heater').set('Accept', J).send({ method: 'read', args: {} }).expect(503);
    expect(call.body.error.message).toContain('init failed: OSError: could not open port COM9');
    const ok = await lab.admin
      .post('/app/instruments/pump')
      .set('Accept', J)
      .send({ method: 'dose', args: { volume: 2 } })
      .expect(200);
    expect(ok.body.output).toBe(2);
    const page = await lab.admin.get('/app/instruments/reader').expect(200);
    expect(page.text).toContain('instrument-failure-stage">setup<');
    expect(page.text).toContain('/instruments/reader/retry');
  });

  it('retries an instrument after the lab fixed its driver: still broken is a 400 with the stage, fixed is callable', async () => {
    const still = await lab.admin.post('/app/instruments/heater/retry').set('Accept', J).expect(400);
    expect(still.body.error.message).toContain('init failed: OSError: could not open port COM9');
    expect(still.body.stage).toBe('init');
    await lab.admin.post('/app/instruments/pump/retry').set('Accept', J).expect(409);
    const bench = join(dir, 'drivers', 'bench.py');
    const { readFile } = await import('node:fs/promises');
    const fixed = (await readFile(bench, 'utf8')).replace('raise OSError("could not open port %s" % port)', 'self.port = port');
    await writeFile(bench, fixed);
    const back = await lab.admin.post('/app/instruments/heater/retry').set('Accept', J).expect(200);
    expect(back.body.methods.map((m: { name: string }) => m.name)).toEqual(['read']);
    expect(back.body.offline).toBeUndefined();
    const read = await lab.admin.post('/app/instruments/heater').set('Accept', J).send({ method: 'read', args: {} }).expect(200);
    expect(read.body.output).toBe(1);
    // the form on the page answers 302 back to it
    await lab.admin.post('/app/instruments/reader/retry').type('form').send({}).expect(302);
  });
});

describe('a deck file labdeck cannot read', () => {
  it('is refused naming the field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labdeck-deckfile-'));
    try {
      await writeFile(join(dir, 'bad.deck.json'), JSON.stringify({ format: 'ivoryos-deck/1', instruments: [{ name: 'p', import: 'x', clas: 'P' }] }));
      await expect(startLab({ deck: join(dir, 'bad.deck.json') })).rejects.toThrow(/instruments\.0\.clas is not a known parameter/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
