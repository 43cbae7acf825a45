import { Router } from 'express';
import { errors } from './errors';
import { specRoutes } from './spec-routes';

/**
 * Every spec endpoint that no family mounts answers 501 with the error body, so nothing silently
 * 404s; docs/api.md lists them as not built (route inventory test).
 */
export function notImplementedRouter(mounted: ReadonlySet<string>): Router {
  const router = Router();
  for (const r of specRoutes()) {
    if (mounted.has(`${r.method} ${r.expressPath}`)) continue;
    const method = r.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    router[method](r.expressPath, (_req, _res, next) => next(errors.notImplemented(r.method, r.path)));
  }
  return router;
}
