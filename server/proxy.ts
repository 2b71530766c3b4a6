/**
 * The proxy interface: a client file, generated from the live deck's method schemas, that calls labdeck's
 * HTTP API with a Bearer token: instrument methods (`POST {base}/instruments/{instrument}` with
 * `{ method, args }`; a failed call's error keeps its `task_id`), and the runner: queue a run of a workflow
 * or a campaign, wait for its run to end (polling the status and the queue, then reading its record), the
 * status, the queue, run and call records, and the operator's controls. The runner's part is the same for
 * every deck: one method per route declared with `client` (server/route.ts), its arguments and types read
 * from the route's schemas, and the hand-written runtimes, real files in server/clients/ (python-runtime.py, python-lab-methods.py,
 * typescript-runtime.ts); an instrument whose
 * name one of them uses becomes `<name>_`.
 *
 * Every string that comes from a schema (names, descriptions, enum values, defaults) reaches the generated
 * code only as an escaped literal, a sanitised identifier, or comment text with the comment's closing
 * sequence and line breaks neutralised, so a description cannot inject code.
 */
import type { InstrumentSchema } from '../core/contracts/index.js';
import type { ProxyOptions } from './clients/common.js';
import { python } from './clients/python.js';
import { typescript } from './clients/typescript.js';

export type { ProxyOptions };

export function generateProxy(lang: 'python' | 'typescript', instruments: InstrumentSchema[], opts: ProxyOptions): { filename: string; content: string } {
  return lang === 'python' ? { filename: 'labdeck_client.py', content: python(instruments, opts) } : { filename: 'labdeck-client.ts', content: typescript(instruments, opts) };
}
