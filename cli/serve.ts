/** `lab serve`: the web app on the shared runtime. */
import type { Server } from 'node:http';
import { createApp } from '../server/app.js';
import { createRuntime, type RuntimeOptions } from '../core/runtime.js';

export interface ServeOptions extends RuntimeOptions {
  host: string;
  port: number;
  /** More names the lab reaches labdeck by (besides IP addresses, localhost and this machine's name). */
  allowedHosts?: string[];
}

export async function serve(opts: ServeOptions, log: (line: string) => void = console.log) {
  const t0 = performance.now();
  const runtime = await createRuntime(opts);
  const app = await createApp(runtime, { listen: opts.host, allowedHosts: opts.allowedHosts });
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(opts.port, opts.host, () => resolve(s));
    s.once('error', reject);
  });
  server.keepAliveTimeout = 65_000;
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  for (const e of runtime.plugins.errors()) log(`plugin error: ${e.file}: ${e.message}`);
  runtime.plugins.on('error', (e: { file: string; message: string }) => log(`plugin error: ${e.file}: ${e.message} (the last good version stays)`));
  runtime.plugins.on('reload', (e: { file: string; removed?: boolean }) => log(`plugin ${e.removed ? 'removed' : 'reloaded'}: ${e.file}`));
  runtime.deck.on('warning', (w: { device?: string; driver?: string; message: string }) => log(`deck: ${w.device ?? w.driver ?? ''}: ${w.message}`));
  log(`labdeck ready in ${Math.round(performance.now() - t0)} ms: http://${host}:${port}/app (deck: ${runtime.deckFile ?? 'none'}, data: ${runtime.dataDir})`);

  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    server.close();
    server.closeAllConnections();
    (app.locals.sessionStore as { close(): void }).close();
    await runtime.close();
  };
  return { server, runtime, port, close };
}
