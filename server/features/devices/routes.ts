import { z } from 'zod';
import type { AppContext } from '../../context';
import { principalOf, requestMeta, TOK_BASIC } from '../../http/auth';
import { errors } from '../../http/errors';
import { RouteTable } from '../../http/routes';
import { parseBody } from '../../http/validate';
import { findUserById } from '../users/store';
import { presentDevice } from './present';
import { createDevice } from './service';
import { listDevices } from './store';

// Spec "Devices (clients)": the legacy noun /client stays here.
const createBody = z.object({
  name: z.string().trim().min(1, 'name is required').max(200),
  platform: z.string().max(100).optional(),
});

export function deviceRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'devices');
  t.get('/client', TOK_BASIC, (req) => {
    const p = principalOf(req);
    return listDevices(ctx.db, p.userId).map((d) => presentDevice(d, p.deviceId));
  });
  t.post('/client', TOK_BASIC, (req) => {
    const p = principalOf(req);
    const body = parseBody(req, createBody);
    const user = findUserById(ctx.db, p.userId);
    if (!user) throw errors.unauthorized();
    const created = createDevice(ctx, user, body, requestMeta(req), 'reject');
    return presentDevice(created.row, p.deviceId, created.token);
  });
  return t;
}
