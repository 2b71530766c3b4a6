import type { Request } from 'express';
import type { Runtime } from '../core/runtime.js';
import { url } from './http.js';
import type { ViewCtx } from './views/layout.js';

/** The view context of a request: URL helper, user, display mode and logo. */
export async function ctxOf(req: Request): Promise<ViewCtx> {
  const runtime = req.app.locals.runtime as Runtime;
  const branding = await runtime.ops.settings.branding();
  return {
    url: (p) => url(req, p),
    user: req.user,
    mode: branding.mode,
    logo: !!branding.logo,
    path: req.path,
    attention: req.user ? await runtime.ops.attention.count() : undefined,
  };
}
