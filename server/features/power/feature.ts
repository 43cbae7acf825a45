import type { AppContext } from '../../context';
import { TOK } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { presentPower } from '../../lib/power';
import type { Feature } from '../index';

/** `GET /power` (ext): the machine's power state as the monitors see it (server/lib/power.ts). */
function powerRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'power');
  t.get('/power', TOK, () => presentPower(ctx));
  return t;
}

export const powerFeature: Feature = { name: 'power', routes: powerRoutes };
