import { z } from 'zod';
import type { AppContext } from '../../context';
import { principalOf, TOK } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { idParam, parseBody } from '../../http/validate';
import { presentVerifiedHost } from './present';
import {
  checkVerification,
  listVerifiedHosts,
  parseHost,
  removeVerifiedHost,
  startVerification,
} from './service';

const startBody = z.object({
  host: z.string(),
  method: z.enum(['http', 'dns']),
  httpPort: z.number().int().min(1).max(65_535).optional(),
});
const checkBody = z.object({ id: z.number().int().positive() });

/** User-level class (§0.2): device token or unscoped API token (`read` for GET, `write` otherwise). */
const READ_RULE = TOK;
const WRITE = { ...TOK, access: 'write' } as const;

export function verifiedHostRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'verified-hosts');
  t.get('/verified-host', READ_RULE, (req) =>
    listVerifiedHosts(ctx, principalOf(req)).map(presentVerifiedHost),
  );
  t.post('/verified-host/start', WRITE, (req) => {
    const body = parseBody(req, startBody);
    const host = parseHost(body.host);
    return presentVerifiedHost(
      startVerification(ctx, principalOf(req), { host, method: body.method, httpPort: body.httpPort }),
    );
  });
  t.post('/verified-host/check', WRITE, async (req) => {
    const { id } = parseBody(req, checkBody);
    return presentVerifiedHost(await checkVerification(ctx, principalOf(req), id));
  });
  t.delete('/verified-host/:id', WRITE, (req) => {
    removeVerifiedHost(ctx, principalOf(req), idParam(req));
    return {};
  });
  return t;
}
