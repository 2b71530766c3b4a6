/** Start a real `lab serve` process on a free port with a fresh data folder, for end-to-end tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../bin/lab', import.meta.url));

export interface Served {
  base: string;
  proc: ChildProcess;
  dataDir: string;
  stop(): Promise<void>;
}

export async function startServer(args: string[] = []): Promise<Served> {
  const dataDir = await mkdtemp(join(tmpdir(), 'labdeck-e2e-'));
  const proc = spawn(process.execPath, [bin, 'serve', '--port', '0', '--data-dir', dataDir, '--plugins', join(dataDir, 'plugins'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 20_000);
    const onData = (b: Buffer) => {
      out += b.toString();
      const m = /ready in \d+ ms: (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${out}`)));
  });
  return {
    base,
    proc,
    dataDir,
    async stop() {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Debian's Chromium, started the way this machine needs (no sandbox as root, no background network). */
export const CHROMIUM = {
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
};
