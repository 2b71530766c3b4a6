/**
 * Route groups and the catalogue made of them (issue 27 item 2: one HTTP mechanism).
 *
 * Each route file exports one group: its declarations (server/route.ts) and what mounts their handlers.
 * server/app.tsx mounts an ordered list of groups (`ROUTE_GROUPS`), and the catalogue, every route the home
 * page lists, the API document documents, the generated clients call, is made from that same list and passed
 * on (`MountContext.catalogue`): no module reads the list by importing every route file, so there is no
 * import circle to break with a lazy load.
 *
 * A group's routers are checked when they are mounted: each route they register is one the group declares,
 * and each route the group declares is registered (or served by a middleware the group names), so what is
 * listed is what is served. Paths are relative to the mount (`/app` or `/`).
 */
import type { RequestHandler, Router } from 'express';
import type { Runtime } from '../core/runtime.js';
import type { Route } from './route.js';
import { declarationOf } from './answer-check.js';

export interface RouteInfo {
  method: string;
  path: string;
  summary: string;
  section: string;
  admin?: boolean;
  public?: boolean;
}

/** What a group's routers are made with, besides the runtime. */
export interface MountContext {
  /** The session secret (the login routes sign with it). */
  secret: string;
  /** Reads the session or token without refusing anyone (a bare page that says who is logged in). */
  identify: RequestHandler;
  /** Every route of the app, in the catalogue's order. */
  catalogue: Catalogue;
}

export type Mount = (runtime: Runtime, ctx: MountContext) => Router | Router[];

export interface RouteGroup {
  /** The area (`executions`): named in the errors below. */
  name: string;
  /** The routes the group declares and serves. */
  routes: readonly Route[];
  /** Served before authentication and body parsing (health, help, assets: the routes declared `bare`). */
  bare?: Mount;
  /** Served after authentication and the CSRF guard, in the list's order. */
  mount?: Mount;
  /** Routes a middleware of the group serves (express.static), with no handler to register them. */
  servedByMiddleware?: readonly Route[];
}

/** Declare a group: its routes as the file's declarations object (or a list), and its routers. */
export function routeGroup(spec: Omit<RouteGroup, 'routes'> & { routes: Record<string, Route> | readonly Route[] }): RouteGroup {
  const routes = Array.isArray(spec.routes) ? spec.routes : Object.values(spec.routes);
  return { ...spec, routes: routes as Route[] };
}

/** The sections in the order the home page and the API document show them. */
const SECTIONS = ['Home', 'Accounts', 'Direct control', 'Temporary devices', 'Workflows', 'Workflow execution', 'Workflow files', 'Workflow records and data', 'Agents', 'API', 'Assets'];

/** A declared route as the list shows it. */
export const routeInfo = (r: Route): RouteInfo => ({
  method: r.method,
  path: r.path,
  summary: r.summary,
  section: r.section,
  ...(r.access === 'admin' ? { admin: true } : {}),
  ...(r.access === 'public' ? { public: true } : {}),
});

export interface Catalogue {
  /** Every declared route, by section, and in a section in the groups' order. */
  readonly routes: readonly Route[];
  /** The same, as the home page's list (and its JSON) shows it. */
  readonly info: readonly RouteInfo[];
  /** Whether a path (under the mount) is served by a public route: express answers OPTIONS on it to anyone. */
  publicPath(path: string): boolean;
}

/** A route's express path as a pattern of whole paths (`:name`: one segment; a trailing slash allowed, any case). */
const pathPattern = (expressPath: string): RegExp =>
  new RegExp(
    `^${expressPath
      .split(/(:\w+)/)
      .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('')}/?$`,
    'i',
  );

/** The catalogue of `groups`: each route once (a route declared twice stops the app from being made). */
export function catalogueOf(groups: readonly RouteGroup[]): Catalogue {
  const order = (s: string) => (SECTIONS.includes(s) ? SECTIONS.indexOf(s) : SECTIONS.length);
  const seen = new Map<string, string>();
  const all: Route[] = [];
  for (const g of groups) {
    for (const r of g.routes) {
      const other = seen.get(r.key);
      if (other) throw new Error(`The route ${r.key} is declared by the groups ${other} and ${g.name}: a route is declared once`);
      seen.set(r.key, g.name);
      all.push(r);
    }
  }
  const routes = all
    .map((r, i) => ({ r, i }))
    .sort((a, b) => order(a.r.section) - order(b.r.section) || a.i - b.i)
    .map(({ r }) => r);
  const open = routes.filter((r) => r.access === 'public').map((r) => pathPattern(r.expressPath));
  return { routes, info: routes.map(routeInfo), publicPath: (path) => open.some((p) => p.test(path)) };
}

// ---------------------------------------------------------------------------------------------------------
// Mounting a group

interface Layer {
  route?: { path: unknown; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
}

/** Every route a router registers (in sub-routers too): `METHOD /express/path`, and the declaration `handle` registered it for. */
function registered(router: Router): { key: string; declaration: unknown }[] {
  const out: { key: string; declaration: unknown }[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        const declaration = declarationOf(layer.route);
        for (const p of ([] as unknown[]).concat(layer.route.path)) {
          for (const [m, on] of Object.entries(layer.route.methods)) if (on && m !== '_all') out.push({ key: `${m.toUpperCase()} ${String(p)}`, declaration });
        }
      } else if (layer.handle.stack) walk(layer.handle.stack);
    }
  };
  walk((router as unknown as { stack: Layer[] }).stack);
  return out;
}

/**
 * The group's routers of one stage (`bare` or `mount`), checked against its declarations once both stages
 * are made (`checkGroup`).
 */
export function groupRouters(group: RouteGroup, stage: 'bare' | 'mount', runtime: Runtime, ctx: MountContext): Router[] {
  const make = group[stage];
  if (!make) return [];
  const made = make(runtime, ctx);
  return Array.isArray(made) ? made : [made];
}

/**
 * Every route `routers` register is declared by `group` and was registered by `handle` for that declaration
 * (so its access is checked as declared), and every route the group declares is registered.
 */
export function checkGroup(group: RouteGroup, routers: Router[]): void {
  const declared = new Map(group.routes.map((r) => [`${r.method} ${r.expressPath}`, r]));
  const served = new Set((group.servedByMiddleware ?? []).map((r) => `${r.method} ${r.expressPath}`));
  const found = routers.flatMap(registered);
  const stray = found.filter((f) => !declared.has(f.key)).map((f) => f.key);
  if (stray.length) throw new Error(`The route group ${group.name} registers routes it does not declare: ${stray.join(', ')} (declare them in its routes)`);
  const bypass = found.filter((f) => f.declaration !== declared.get(f.key)).map((f) => f.key);
  if (bypass.length) throw new Error(`The route group ${group.name} registers ${bypass.join(', ')} without handle(router, ROUTE, fn): its access would not be checked`);
  const have = new Set(found.map((f) => f.key));
  const missing = [...declared.keys()].filter((k) => !have.has(k) && !served.has(k));
  if (missing.length) throw new Error(`The route group ${group.name} declares routes it does not mount: ${missing.join(', ')} (handle them in its routers)`);
}
