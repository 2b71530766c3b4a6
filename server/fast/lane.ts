/**
 * The direct lane (issue 16, the call path). Express finds a request's handler by walking the app's router:
 * some thirty layers before the instrument call route, each a function call and most a pattern match, and
 * that walk cost more than the call's own work. The lane reads the router once, when the app is made, and
 * learns what a call goes through: the middleware before its route (host check, body parsers,
 * authentication, CSRF), then the route's own handlers (the first checks its access as declared). A request
 * for the route then runs exactly those, in that order, and errors reach the router's error handler, as
 * they would have.
 *
 * Nothing is answered differently. The lane takes a request only when the router would give it to the same
 * route: its method, and a path of the route's word and one plain value (`/instruments/hotplate`, under any
 * mount) that no route before it owns (`/instruments/new` is the new-device form's). Anything else (another
 * segment, a query, an escape) goes on to the router untouched. A router the lane cannot read with certainty
 * (middleware inside a sub-router, a route pattern that could take the same paths) stops the app from
 * being made, so a change there is caught by any test. Part of the fast path (./switch.ts): off, the app
 * mounts no lane and the router finds the call's route as it finds every other.
 */
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { firstSegment } from './dispatch.js';

/** What the lane reads of express's router (the `router` package's Layer and Route). */
interface Layer {
  handle: RequestHandler & { stack?: Layer[] };
  route?: Route;
  /** A route's layer: the method it serves (lower case), or undefined for all. */
  method?: string;
  /** Mounted without a path (on every request). */
  slash?: boolean;
  /** The path it is mounted at. */
  rawPath?: unknown;
  match(path: string): unknown;
}
interface Route {
  path: unknown;
  methods: Record<string, boolean>;
  stack: Layer[];
}

const VALUE = /^[\w.-]+$/;

/**
 * The lane for `route` (its method and express path, `/word/:param`) of `router`, served at `mounts`
 * (`/app`, and `` for `/`). Throws when the router cannot be read with certainty (see above).
 */
export function directLane(router: Router, route: { method: string; expressPath: string }, mounts: string[], onError: ErrorRequestHandler): RequestHandler {
  const m = /^\/(\w+)\/:(\w+)$/.exec(route.expressPath);
  if (!m) throw new Error(`directLane: ${route.expressPath} is not /word/:param`);
  const word = m[1]!.toLowerCase();
  const param = m[2]!;
  const method = route.method.toLowerCase();
  const probe = `/${word}/lane-probe-${process.pid}`;
  /** Values other routes of the method own (`new` of `/instruments/new`): the router gives those to them. */
  const taken = new Set<string>();
  const before: RequestHandler[] = [];
  let target: Route | null = null;

  /** Read `stack` in the router's order until the target route; false when it is not in there. */
  const read = (stack: Layer[], top: boolean): boolean => {
    for (const layer of stack) {
      const r = layer.route;
      if (!r) {
        if (!layer.slash) {
          // mounted at a path (`/static`): it takes none of the route's requests, unless the path is its word's
          if (layer.match(probe) || String(layer.rawPath).toLowerCase().startsWith(`/${word}`)) throw new Error(`directLane: ${String(layer.rawPath)} is mounted where the lane's requests go`);
          continue;
        }
        if (layer.handle.stack) {
          if (read(layer.handle.stack, false)) return true;
          continue;
        }
        if (layer.handle.length === 4) continue; // an error handler: the lane passes errors to onError
        if (!top) throw new Error('directLane: the router has middleware the lane cannot place');
        before.push(layer.handle);
        continue;
      }
      if (!r.methods[method] && !r.methods._all) continue;
      const path = String(r.path);
      if (path === route.expressPath && !r.methods._all) {
        target = r;
        return true;
      }
      const first = firstSegment(path);
      if (first !== word && first !== null) continue; // another word's: none of the lane's requests
      if (first === null || layer.match(probe) || /[{}*()?+]/.test(path)) throw new Error(`directLane: the route ${route.method} ${path} could take requests of ${route.expressPath}`);
      const parts = path.toLowerCase().split('/').filter(Boolean);
      if (parts.length === 2) taken.add(parts[1]!);
    }
    return false;
  };
  if (!read((router as unknown as { stack: Layer[] }).stack, true) || !target) throw new Error(`directLane: no route ${route.method} ${route.expressPath}`);
  const handlers = (target as Route).stack.filter((l) => !l.method || l.method === method).map((l) => l.handle);
  const chain = [...before, ...handlers];
  const prefixes = mounts.map((mount) => ({ mount, prefix: `${mount}/${word}/` }));
  const METHOD = route.method.toUpperCase();

  return function lane(req: Request, res: Response, next: NextFunction) {
    if (req.method !== METHOD) return next();
    const u = req.url;
    const at = prefixes.find((p) => u.startsWith(p.prefix));
    if (!at) return next();
    const value = u.slice(at.prefix.length);
    if (!VALUE.test(value) || taken.has(value.toLowerCase())) return next();
    // as the router sets them when it enters the mount and matches the route
    req.baseUrl = at.mount;
    req.url = u.slice(at.mount.length);
    req.params = { [param]: value };
    req.route = target;
    // as in the router: what the error handler itself throws goes on to express's final handler
    const fail = (e: unknown): void => {
      try {
        const out = onError(e, req, res, next) as unknown;
        if (out instanceof Promise) out.catch(next);
      } catch (e2) {
        next(e2);
      }
    };
    let i = 0;
    const step = (err?: unknown): void => {
      if (err) return fail(err);
      if (i === chain.length) return fail(new Error(`${route.method} ${route.expressPath} went on past its handler`));
      const fn = chain[i++]!;
      try {
        const out = fn(req, res, step) as unknown;
        if (out instanceof Promise) out.catch(fail);
      } catch (e) {
        fail(e);
      }
    };
    step();
  };
}

/**
 * A middleware that only sets headers, the same on every response (helmet's, as configured), run once here
 * to learn them: the app then sets them in one step instead of through helmet's chain of eleven.
 */
export function fixedHeaders(mw: RequestHandler): RequestHandler {
  const set: [string, string | number | readonly string[]][] = [];
  const removed: string[] = [];
  const probe = {
    setHeader: (k: string, v: string | number | readonly string[]) => set.push([k, v]),
    removeHeader: (k: string) => removed.push(k),
  };
  let called = false;
  void mw({ headers: {}, method: 'GET', url: '/' } as Request, probe as unknown as Response, () => (called = true));
  if (!called) throw new Error('fixedHeaders: the middleware did not go on at once');
  return (_req, res, next) => {
    for (const k of removed) res.removeHeader(k);
    for (const [k, v] of set) res.setHeader(k, v);
    next();
  };
}
