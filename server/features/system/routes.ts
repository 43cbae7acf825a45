import { PLAIN_HTTP_LAN_WARNING } from '../../config';
import type { AppContext } from '../../context';
import { DEV } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { buildInfo } from '../../lib/version';

/** Spec "Health and info" and "Versioning"; /gotifyinfo answers like /serverinfo (contract). */
export function systemRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'system');
  t.get('/health', null, (_req, res) => {
    // Which Belfry answered (both listeners): the tunnel's reachability check compares it with its own.
    res.setHeader('X-Belfry-Instance', ctx.instanceId);
    let ok = ctx.store.healthy();
    if (ok) {
      try {
        ctx.store.check();
      } catch (err) {
        ctx.log.warn('health check: database unusable', { err });
        ok = false;
      }
    }
    if (!ok) res.status(503);
    return ok ? { health: 'green', database: 'green' } : { health: 'red', database: 'red' };
  });
  t.get('/version', null, () => buildInfo(ctx.config));
  // LAN mode (--lan) is said once at start and to every client, whose UI shows a standing warning.
  if (ctx.config.lan) ctx.log.warn(PLAIN_HTTP_LAN_WARNING);
  const serverinfo = () => ({
    version: buildInfo(ctx.config).version,
    register: ctx.config.registration,
    oidc: false,
    ...(ctx.config.lan ? { plainHttpLan: true } : {}),
  });
  t.get('/serverinfo', null, serverinfo);
  t.get('/gotifyinfo', null, serverinfo);
  // Compatibility addition: the older protocol's Android app lists plugins after signing in and treats
  // anything but a list as a failure. Belfry has no plugins; a device token, as the older /plugin takes.
  t.get('/plugin', DEV, () => []);
  return t;
}
