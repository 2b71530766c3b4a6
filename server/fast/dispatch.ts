/**
 * Each request skips the routers that cannot answer it (issue 16, the call path).
 *
 * The app's router holds one router per area (home, accounts, devices, instruments, workflows, …), and
 * Express tries each in turn: a call to an instrument went through some 200 route patterns of the routers
 * before it, a regular expression each, which cost more than the call's own work. `gateRouters` reads the
 * first path segment of every route a router declares ("instruments" of `/instruments/:instrument`), and a
 * request whose first segment is none of them passes the router by with one lookup. A router with anything
 * else in it (middleware, a route starting with a parameter or a wildcard) is left as it is, so what answers
 * a request never changes: only routers that could not have matched are skipped. Part of the fast path
 * (./switch.ts): off, no router is gated.
 */
import type { NextFunction, Request, Response, Router } from 'express';

interface Layer {
  handle: ((req: Request, res: Response, next: NextFunction) => void) & { stack?: Layer[] };
  route?: { path: unknown };
}

/**
 * The first path segment of a route pattern (lower case, as Express matches), or null when it is not a
 * plain word (`/:id`, `/{*rest}`, a RegExp): such a router is never skipped.
 */
export function firstSegment(path: unknown): string | null {
  if (typeof path !== 'string' || !path.startsWith('/')) return null;
  let end = 1;
  while (end < path.length && !'/{}:*()?+!\\'.includes(path[end])) end++;
  const next = path.slice(end, end + 2);
  if (end < path.length && path[end] !== '/' && next !== '{/') return null; // `/a:b`, `/a{b}`: more than a word
  return path.slice(1, end).toLowerCase();
}

/** The first path segment of a request's URL (lower case, without the query). */
export function requestSegment(url: string): string {
  let end = 1;
  while (end < url.length) {
    const c = url.charCodeAt(end);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) break;
    end++;
  }
  return url.slice(1, end).toLowerCase();
}

/** The first segments a router's routes can match, or null when it holds something else too. */
function segmentsOf(router: Layer['handle']): Set<string> | null {
  const stack = router.stack;
  if (!stack?.length) return null;
  const out = new Set<string>();
  for (const layer of stack) {
    const paths = layer.route ? (Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path]) : [null];
    for (const p of paths) {
      const s = firstSegment(p);
      if (s === null) return null;
      out.add(s);
    }
  }
  return out;
}

/**
 * Let `app`'s requests skip each router mounted in it (without a path) whose routes all start with words
 * the request's path does not start with. Call once all routers are mounted. Returns how many were gated.
 */
export function gateRouters(app: Router): number {
  let gated = 0;
  for (const layer of (app as unknown as { stack: Layer[] }).stack) {
    const router = layer.handle;
    if (layer.route || !router.stack) continue;
    const segments = segmentsOf(router);
    if (!segments) continue;
    layer.handle = Object.assign(
      function gate(req: Request, res: Response, next: NextFunction) {
        if (segments.has(requestSegment(req.url))) return router(req, res, next);
        next();
      },
      { stack: router.stack },
    );
    gated++;
  }
  return gated;
}
