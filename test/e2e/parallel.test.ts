/**
 * `lab serve --parallel N` as the real command (issue 13 item 2): anything but a whole number from 1 is a
 * usage mistake, exit 2 with a message naming the option; the behaviour itself is tested on the runner
 * (test/unit/runner-parallel.test.ts) and over HTTP (test/api/parallel.test.ts).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { LAB_BIN } from './installed.js';

const bin = LAB_BIN;

it('lab serve --parallel with anything but a positive whole number exits 2 with a message', async () => {
  for (const bad of ['0', '-2', 'two', '1.5']) {
    const r = await promisify(execFile)(process.execPath, [bin, 'serve', '--parallel', bad], { timeout: 30_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    expect([bad, r.code]).toEqual([bad, 2]);
    expect(r.stderr).toContain(`option '--parallel <n>' argument '${bad}' is invalid`);
    expect(r.stderr).toContain('a whole number, 1 or more');
  }
}, 60_000);
