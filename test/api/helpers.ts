/**
 * API test harness: a real runtime (real database: SQLite in a temp dir, or PostgreSQL when
 * LABDECK_TEST_DB=postgres), the demo deck, and the express app driven by supertest.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp, type App, type AppOptions } from '../../server/app.js';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../core/runtime.js';
import { testDbUrl } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

export interface TestLab {
  app: App;
  runtime: Runtime;
  dataDir: string;
  /** A supertest agent (keeps cookies) logged in as the admin `ada`. */
  admin: ReturnType<typeof request.agent>;
  close(): Promise<void>;
}

export const PASSWORD = 'correct horse';

export async function signupAndLogin(app: App, username: string, password = PASSWORD) {
  const agent = request.agent(app);
  await agent.post('/app/auth/signup').type('form').send({ username, password }).expect(302);
  await agent.post('/app/auth/login').type('form').send({ username, password }).expect(302);
  return agent;
}

/** A lab on a fresh database; `appOpts` are createApp's (the fast path: LABDECK_FAST_PATH unless given). */
export async function startLab(opts: RuntimeOptions = {}, appOpts: AppOptions = {}): Promise<TestLab> {
  const dataDir = await mkdtemp(join(tmpdir(), 'labdeck-api-'));
  const db = await testDbUrl();
  const runtime = await createRuntime({ dataDir, db: db.url, watch: false, pluginDirs: [], ...opts });
  const app = await createApp(runtime, appOpts);
  const admin = await signupAndLogin(app, 'ada');
  return {
    app,
    runtime,
    dataDir,
    admin,
    async close() {
      (app.locals.sessionStore as { close(): void }).close();
      await runtime.close();
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export { REACTOR } from '../helpers/workflows.js';

/** Poll `check` until it holds (the runner works on its own loop); throws after `ms`. */
export async function until(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  await waitFor(check, 'the condition', ms, 25);
}
