import type { AppContext } from '../../context';
import { type AuthRule, principalOf } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { presentTunnel } from './present';
import { TunnelService, tunnelService } from './service';

/** §0.2 `/tunnel`: a device token, or an unscoped API token (write for changes) of an administrator. */
const READ_RULE: AuthRule = { kinds: ['device', 'api'], forbid: ['app', 'share'], access: 'read' };
const WRITE_RULE: AuthRule = { ...READ_RULE, access: 'write' };

/** `GET /tunnel`, `PUT /tunnel`, `POST /tunnel/check` (ext; docs/api.md "Public listener and tunnel"). */
export function tunnelRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'tunnel');
  const s = tunnelService(ctx);
  t.get('/tunnel', READ_RULE, (req) => {
    TunnelService.authorize(principalOf(req));
    return presentTunnel(ctx, s);
  });
  t.put('/tunnel', WRITE_RULE, async (req) => {
    const p = principalOf(req);
    TunnelService.authorize(p);
    return s.configure(p, req.body ?? {}, () => presentTunnel(ctx, s));
  });
  t.post('/tunnel/check', WRITE_RULE, async (req) => {
    TunnelService.authorize(principalOf(req));
    await s.check();
    return presentTunnel(ctx, s);
  });
  return t;
}
