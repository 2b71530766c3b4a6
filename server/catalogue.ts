/**
 * Every route labdeck serves, in one list: the home page shows it (`routes()`), the API document is built
 * from it (`allRoutes()`). Paths are relative to the mount (`/app` or `/`).
 *
 * Each route is declared once, beside its handler (server/route.ts, DESIGN.md §14), and the declarations are
 * gathered in server/routes/declared.ts; this file only puts them in the order the home page and the API
 * document show them: by section, and in a section as they are declared.
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

let sorted: Route[] | null = null;
/** Every declared route, by section (computed on first use, once every module is loaded). */
export function allRoutes(): Route[] {
  if (sorted) return sorted;
  const order = (s: string) => (SECTIONS.includes(s) ? SECTIONS.indexOf(s) : SECTIONS.length);
  sorted = declaredRoutes()
    .map((r, i) => ({ r, i }))
    .sort((a, b) => order(a.r.section) - order(b.r.section) || a.i - b.i)
    .map(({ r }) => r);
  return sorted;
}

let all: RouteInfo[] | null = null;
/** Every route as the home page's list (and its JSON) shows it. */
export function routes(): RouteInfo[] {
  return (all ??= allRoutes().map(routeInfo));
}
