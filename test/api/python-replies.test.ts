/**
 * Large replies of the Python host (issue 26 #11): they are framed linearly (core/hosts/lines.ts), so other
 * requests are answered while one is read, and a reply over the limit (16 MB, LABDECK_PYTHON_MAX_REPLY) fails
 * its call with an error naming the limit while the host stays up for the next call.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { startLab, type TestLab } from './helpers.js';

const J = 'application/json';
const DECK = `
import os
import time


class Blob:
    def blob(self, mb: float, flag: str = "") -> str:
        """A text of mb megabytes, made once the file flag exists (when one is named)."""
        end = time.time() + 60
        while flag and not os.path.exists(flag) and time.time() < end:
            time.sleep(0.01)
        return "x" * int(mb * 1024 * 1024)

    def ping(self) -> str:
        return "pong"


big = Blob()
small = Blob()
`;

let lab: TestLab;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'labdeck-replies-'));
  await writeFile(join(dir, 'deck.py'), DECK);
  lab = await startLab({ deck: join(dir, 'deck.py'), log: () => undefined });
}, 60_000);
afterAll(async () => {
  await lab.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the Python host's replies", () => {
  it('a 20 MB result fails its call with an error naming the limit; other requests are answered meanwhile; the host goes on', async () => {
    const flag = join(dir, 'go-20');
    let settled = false;
    const blob = lab.admin
      .post('/app/instruments/big')
      .set('Accept', J)
      .send({ method: 'blob', args: { mb: 20, flag } })
      .then((res) => {
        settled = true;
        return res;
      });
    // while it is in flight: the server and the same Python host answer
    let answered = 0;
    await request(lab.app).get('/app/healthz').expect(200);
    const ping = await lab.admin.post('/app/instruments/small').set('Accept', J).send({ method: 'ping', args: {} }).expect(200);
    expect(ping.body.output).toBe('pong');
    if (!settled) answered++;
    await writeFile(flag, '');
    while (!settled) {
      await request(lab.app).get('/app/healthz').expect(200);
      if (!settled) answered++;
    }
    expect(answered).toBeGreaterThan(0);
    const res = await blob;
    expect(res.status).toBe(502);
    expect(res.body.error.message).toMatch(/ReplyTooLarge: the reply is \d+ bytes, over the Python host's limit of 16777216 bytes \(LABDECK_PYTHON_MAX_REPLY\)/);
    // the host was not restarted: the same process answers the next call
    const pid = lab.runtime.python.host.pid;
    expect((await lab.admin.post('/app/instruments/big').set('Accept', J).send({ method: 'ping', args: {} }).expect(200)).body.output).toBe('pong');
    expect(lab.runtime.python.host.pid).toBe(pid);
  }, 60_000);

  it('a result under the limit (5 MB) arrives whole, and is then kept cut at the result bound (core/result-limit.ts)', async () => {
    const res = await lab.admin
      .post('/app/instruments/big')
      .set('Accept', J)
      .send({ method: 'blob', args: { mb: 5 } })
      .expect(200);
    // every byte came through the host (the JSON text of the string: its quotes included), then the bound cut it
    expect(res.body.output).toMatchObject({ truncated: true, bytes: 5 * 1024 * 1024 + 2, limit: 262144 });
  }, 60_000);
});
