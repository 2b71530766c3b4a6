/**
 * What the end-to-end tests share: a real `lab serve` process on a free port with a fresh data folder,
 * Debian's Chromium, the first account and the errors a page reports.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { LAB_BIN } from './installed.js';

const bin = LAB_BIN;

export interface Served {
  base: string;
  proc: ChildProcess;
  dataDir: string;
  stop(): Promise<void>;
}

/** `lab serve` on a free port over `dataDir`; resolves with the URL it says it is ready at (`…/app`). */
export async function spawnServer(dataDir: string, args: string[] = []): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, [bin, 'serve', '--port', '0', '--data-dir', dataDir, '--plugins', join(dataDir, 'plugins'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
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
    proc.once('exit', (code) => {
      clearTimeout(timer); // no timer left behind for jest to report as an open handle
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
  });
  return { url, proc };
}

export async function startServer(args: string[] = []): Promise<Served> {
  const dataDir = await mkdtemp(join(tmpdir(), 'labdeck-e2e-'));
  const { url: base, proc } = await spawnServer(dataDir, args);
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

/** For a describe block: a fresh server and a headless Chromium before its tests, both stopped after them. */
export function serverAndBrowser(): { server: Served; browser: Browser } {
  const lab = {} as { server: Served; browser: Browser };
  beforeAll(async () => {
    lab.server = await startServer();
    lab.browser = await chromium.launch({ headless: true, ...CHROMIUM });
  });
  afterAll(async () => {
    await lab.browser?.close();
    await lab.server?.stop();
  });
  return lab;
}

/** The account the browser tests sign up: the first user, so an admin. */
export const USER = { username: 'ada', password: 'correct horse' };

/** A script's view of a `lab serve`: USER signed up (the first account, an admin) with an API token; JSON calls. */
export interface LabClient {
  /** Where the server is, without the mount (`http://127.0.0.1:PORT`); set it again after a restart on another port. */
  base: string;
  /** The token's header, for a request `api` does not make (the live event stream). */
  auth: { Authorization: string };
  /** A JSON request under `/app`, and its status and parsed answer. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: Awaited<ReturnType<Response['json']>> }>;
}

/** Sign USER up on the server at `base` (no mount), log in, and make an API token named `token` (it survives a restart). */
export async function labClient(base: string, token: string): Promise<LabClient> {
  const form = (path: string, body: Record<string, string>) =>
    fetch(`${base}/app/auth/${path}`, { method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body) });
  const signup = await form('signup', USER);
  if (signup.status !== 302) throw new Error(`sign-up answered ${signup.status}`);
  const login = await form('login', USER);
  const cookie = login.headers
    .getSetCookie()
    .find((c) => c.startsWith('labdeck.sid='))
    ?.split(';')[0];
  if (login.status !== 302 || !cookie) throw new Error(`login answered ${login.status} without a session`);
  const made = await fetch(`${base}/app/account/tokens`, {
    method: 'POST',
    headers: { Cookie: cookie, 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ name: token }),
  });
  if (made.status !== 201) throw new Error(`the token answered ${made.status}`);
  const client: LabClient = {
    base,
    auth: { Authorization: `Bearer ${(await made.json()).token}` },
    async api(method, path, body) {
      const res = await fetch(`${client.base}/app${path}`, {
        method,
        headers: { ...client.auth, Accept: 'application/json', 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    },
  };
  return client;
}

/** On the sign-up form: sign USER up, then log in on the form that leads to; lands on the home page. */
export async function signUpAndLogIn(page: Page) {
  for (const next of [/\/auth\/login/, /\/app\/$/]) {
    await page.fill('#username', USER.username);
    await page.fill('#password', USER.password);
    await page.click('button[type=submit]');
    await page.waitForURL(next);
  }
}

/** Sign up the first user (an admin) and log in. */
export async function login(page: Page, base: string) {
  await page.goto(`${base}/auth/signup`);
  await signUpAndLogIn(page);
}

/**
 * The page's uncaught errors and console errors, collected as they come; console errors containing
 * `expected` (an answer the test provokes on purpose) are left out.
 */
export function pageErrors(page: Page, expected?: string): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !(expected !== undefined && m.text().includes(expected))) errors.push(`${m.text()}${m.location().url ? ` (${m.location().url})` : ''}`);
  });
  return errors;
}
