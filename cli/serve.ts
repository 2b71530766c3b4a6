/** `lab serve`: the web app on the shared runtime. */
import { existsSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type { Server } from 'node:http';
import { resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { attachAgents } from '../server/agents.js';
import { createApp } from '../server/app.js';
import type { ConnectionLimits } from '../server/connection-limits.js';
import { createHttpServer } from '../server/fast/http-server.js';
import { FAST_PATH_ENV, fastPath } from '../server/fast/switch.js';
import { LabError } from '../core/errors.js';
import { errorText } from '../core/deck/util.js';
import { createRuntime, type RuntimeOptions } from '../core/runtime.js';
import { guardProcess } from './guards.js';

export interface ServeOptions extends RuntimeOptions {
  host: string;
  port: number;
  /** More names the lab reaches labdeck by (besides IP addresses, localhost and this machine's name). */
  allowedHosts?: string[];
  /** Connections held at once (in all, per address) and the time a request may take to come in (docs/deploy.md). */
  limits?: ConnectionLimits;
}

/**
 * The user's plugin folders, ready to be watched: a folder that does not exist yet is created (with its
 * parents, as the data folder is), so that a driver saved there after start-up is loaded without a restart.
 * Returns each folder's absolute path and whether it was just created. A path that is a file, or that
 * cannot be created, is a LabError('invalid_input') naming it.
 */
export async function preparePluginDirs(dirs: string[]): Promise<{ dir: string; created: boolean }[]> {
  const out: { dir: string; created: boolean }[] = [];
  for (const dir of dirs.map((d) => resolve(d))) {
    if (existsSync(dir)) {
      if (!statSync(dir).isDirectory()) throw new LabError('invalid_input', `The plugin folder ${dir} is a file: name the folder that holds your drivers (--plugins DIR).`);
      out.push({ dir, created: false });
      continue;
    }
    try {
      await mkdir(dir, { recursive: true });
    } catch (e) {
      throw new LabError('invalid_input', `Cannot create the plugin folder ${dir}: ${errorText(e)}. Check the --plugins path, or create the folder yourself.`);
    }
    out.push({ dir, created: true });
  }
  return out;
}

/**
 * How far V8 lets the old generation grow past what the last full collection kept, in percent. Under load
 * the objects of calls in flight outlive the small young generation (bin/lab caps it at 4 MB) and are
 * promoted; V8's own factor for a large machine (up to 4x) then let ~30 MB of live heap carry ~70 MB of such
 * garbage before collecting it, 200+ MB resident under 32 clients. 1.5x keeps it at ~140 MB, at the cost of
 * a full collection (~10-25 ms, mostly concurrent) every second or so under that load (issue 16 item 4).
 */
export const HEAP_GROWING_PERCENT = 50;

/**
 * Start the web app: the runtime, then the HTTP server. `log` gets the start-up line (the address, the deck,
 * the data folder and the plugin folders it watches) and, while it runs, plugin reloads and errors.
 */
export async function serve(opts: ServeOptions, log: (line: string) => void = console.log) {
  const t0 = performance.now();
  const fast = fastPath(); // a value it does not know stops start-up here, naming the variable
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  const pluginDirs = await preparePluginDirs(opts.pluginDirs ?? ['lab-plugins']);
  const runtime = await createRuntime({ ...opts, pluginDirs: pluginDirs.map((p) => p.dir) });
  const app = await createApp(runtime, { listen: opts.host, allowedHosts: opts.allowedHosts, fastPath: fast });
  const server: Server = await new Promise((resolve, reject) => {
    const s = createHttpServer(app, opts.limits, fast).listen(opts.port, opts.host, () => resolve(s));
    s.once('error', reject);
  });
  server.keepAliveTimeout = 65_000;
  {
    // the links in notifications, unless the settings name a base_url (core/notify)
    const at = server.address();
    const port = at && typeof at === 'object' ? at.port : opts.port;
    const h = !opts.host || opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host.includes(':') ? `[${opts.host}]` : opts.host;
    runtime.notifications.baseUrl = `http://${h}:${port}`;
  }
  attachAgents(server, runtime); // lab agents on instrument PCs connect here (WebSocket)
  // a fault nobody caught is logged and serving goes on where that is safe (./guards.ts says when)
  const unguard = guardProcess(log);
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  for (const e of runtime.plugins.errors()) log(`plugin error: ${e.file}: ${e.message}`);
  runtime.plugins.on('error', (e: { file: string; message: string }) => log(`plugin error: ${e.file}: ${e.message} (the last good version stays)`));
  runtime.plugins.on('reload', (e: { file: string; removed?: boolean }) => log(`plugin ${e.removed ? 'removed' : 'reloaded'}: ${e.file}`));
  runtime.deck.on('warning', (w: { device?: string; driver?: string; message: string }) => log(`deck: ${w.device ?? w.driver ?? ''}: ${w.message}`));
  for (const p of pluginDirs.filter((d) => d.created)) {
    const init = p.dir === resolve('lab-plugins') ? 'lab init plugin NAME' : `lab init plugin NAME --dir ${p.dir}`;
    log(`plugin folder created: ${p.dir} (empty: save your drivers there, or scaffold one with \`${init}\`)`);
  }
  const watched = opts.watch === false ? 'not watched' : 'watched';
  const plugins = pluginDirs.length ? `${pluginDirs.map((p) => p.dir).join(', ')} (${watched})` : 'none';
  const guard = runtime.safety.status();
  if (guard.error) log(`safety: ${guard.error}`);
  else if (guard.file !== null)
    log(`safety: ${guard.config.limits.length} limit(s), ${guard.config.rules.length} rule(s) from ${guard.source}${guard.config.enabled ? '' : ' (enabled: false: not enforced)'}`);
  if (!fast) log(`fast path off (${FAST_PATH_ENV}=${process.env[FAST_PATH_ENV]}): plain Express answers every request, the same answers, slower`);
  log(`labdeck ready in ${Math.round(performance.now() - t0)} ms: http://${host}:${port}/app (deck: ${runtime.deckFile ?? 'none'}, data: ${runtime.dataDir}, plugins: ${plugins})`);

  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    unguard();
    server.close();
    server.closeAllConnections();
    (app.locals.sessionStore as { close(): void }).close();
    await runtime.close();
  };
  return { server, runtime, port, close };
}
