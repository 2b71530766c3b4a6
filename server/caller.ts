/** Who asks, as core/operations knows a caller: the request's account, how it proved it, and the door it came through. */
import type { Request } from 'express';
import type { Caller, Door } from '../core/operations/index.js';

const SCOPE = { session: 'session', token: 'api', mcp: 'mcp' } as const;

/** The caller of an authenticated request through `door` (its route's access check ran before, server/route.ts `handle`: `req.user` is set). */
export function callerOf(req: Request, door: Door): Caller {
  const user = req.user!;
  return {
    userId: user.id,
    name: user.username,
    role: user.role,
    scope: req.authVia ? SCOPE[req.authVia] : 'none',
    door,
    ...(req.agentToken ? { token: req.agentToken } : {}),
  };
}
