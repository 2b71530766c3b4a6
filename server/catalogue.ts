/**
 * Every route labdeck serves, in one list (`routes()`): the home page shows it, the API document is built
 * from it. Paths are relative to the mount (`/app` or `/`).
 *
 * A route is declared once, beside its handler (server/route.ts, DESIGN.md §14); the routes below are the
 * ones not moved to a declaration yet (their documentation is in server/openapi.ts's OPERATIONS), and a test
 * fails when a route is in both places.
 */
import { declaredRoutes } from './routes/declared.js';
import type { Route } from './route.js';
export interface RouteInfo {
  method: string;
  path: string;
  summary: string;
  section: string;
  admin?: boolean;
  public?: boolean;
}

/** A section's routes, each tagged with the section (its heading on the home page, its tag in the API). */
function section(name: string, routes: Omit<RouteInfo, 'section'>[]): RouteInfo[] {
  return routes.map((r) => ({ section: name, ...r }));
}

/** The sections in the order the home page and the API document show them. */
const SECTIONS = ['Home', 'Accounts', 'Direct control', 'Temporary devices', 'Workflows', 'Workflow execution', 'Workflow files', 'Workflow records and data', 'API', 'Assets'];

/** A declared route as the list shows it. */
export const routeInfo = (r: Route): RouteInfo => ({
  method: r.method,
  path: r.path,
  summary: r.summary,
  section: r.section,
  ...(r.access === 'admin' ? { admin: true } : {}),
  ...(r.access === 'public' ? { public: true } : {}),
});

let all: RouteInfo[] | null = null;
/** Every route: the declared ones and the rest, by section (computed on first use, once every module is loaded). */
export function routes(): RouteInfo[] {
  if (all) return all;
  const merged = [...LEGACY_ROUTES, ...declaredRoutes().map(routeInfo)];
  const order = (s: string) => (SECTIONS.includes(s) ? SECTIONS.indexOf(s) : SECTIONS.length);
  all = merged.map((r, i) => ({ r, i })).sort((a, b) => order(a.r.section) - order(b.r.section) || a.i - b.i).map(({ r }) => r);
  return all;
}

/** The routes that are not declared yet (see above). */
export const LEGACY_ROUTES: RouteInfo[] = [
  ...section('Workflow execution', [
    { method: 'GET', path: '/executions/config', summary: 'Start a run; the live runner and the queue' },
    { method: 'POST', path: '/executions/config', summary: 'Queue a workflow over config rows or a repeat count (200 { task_id, status })' },
    { method: 'GET', path: '/executions/status', summary: 'Runner status: busy, state, flags, current task, progress' },
    { method: 'GET', path: '/executions/current_task', summary: 'The running task, with its payload' },
    { method: 'GET', path: '/executions/queue', summary: 'The queue and its state' },
    { method: 'GET', path: '/executions/queue/task/{task_id}', summary: 'A queued task with its full payload' },
    { method: 'POST', path: '/executions/queue/delete', summary: 'Remove a pending task: { id }' },
    { method: 'POST', path: '/executions/queue/reorder', summary: 'Move a pending task: { id, direction: up|down|top|bottom }' },
    { method: 'POST', path: '/executions/queue/task/rename', summary: 'Rename a task: { id, new_name }' },
    { method: 'POST', path: '/executions/pause-resume', summary: 'Pause or resume; skip a failed step; continue a pause step; release a held queue' },
    { method: 'POST', path: '/executions/pause', summary: 'Pause the running task after its step in flight (409 when nothing runs or it is paused)' },
    { method: 'POST', path: '/executions/resume', summary: 'Resume a paused task (409 when it is not paused)' },
    { method: 'POST', path: '/executions/continue', summary: 'Continue after a pause step (409 when none waits)' },
    { method: 'POST', path: '/executions/skip', summary: 'Skip the failed step and go on (409 when no step failed)' },
    { method: 'POST', path: '/executions/release', summary: 'Release the held queue (409 when it is not held)' },
    { method: 'POST', path: '/executions/retry', summary: 'Re-run the failed step' },
    { method: 'POST', path: '/executions/abort/next-iteration', summary: 'Finish this iteration, skip the rest, run cleanup' },
    { method: 'POST', path: '/executions/abort/next-task', summary: 'Stop after the in-flight step, run cleanup, hold the queue' },
    { method: 'GET', path: '/executions/events', summary: 'Live events (server-sent events)' },
  ]),
  ...section('Assets', [
    { method: 'GET', path: '/static/{file}', summary: "labdeck's own stylesheet and icon", public: true },
    { method: 'GET', path: '/static/app.js', summary: 'The browser script (bundled by esbuild)', public: true },
    { method: 'GET', path: '/static/vendor/{file}', summary: 'Bootstrap, htmx, SortableJS and uPlot, served from our own origin', public: true },
  ]),
];
