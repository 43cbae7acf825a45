import { z } from 'zod';
import type { AppContext } from '../../context';
import { principalOf, TOK } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { idParam, parseQuery } from '../../http/validate';
import { parseCreate, parseTest, parseUpdate } from './fields';
import { type AnyMonitorKind, monitorKinds } from './kind';
import { presentMonitor } from './present';
import {
  checkMonitorNow,
  createMonitor,
  getMonitor,
  listMonitors,
  pauseMonitor,
  removeMonitor,
  resumeMonitor,
  testMonitor,
  updateMonitor,
} from './service';

const listQuery = z.object({ appid: z.coerce.number().int().positive().optional() });

/** Management class (§0.2): device token, API token with `read` for GET and `write` otherwise. */
const READ_RULE = TOK;
const WRITE = { ...TOK, access: 'write' } as const;

/** The routes every kind has (§2.1, §2.6), under its path noun. */
function kindRoutes(t: RouteTable, ctx: AppContext, kind: AnyMonitorKind): void {
  const base = `/${kind.kind}`;
  const show = (row: Parameters<typeof presentMonitor>[2]) => presentMonitor(ctx, kind, row);
  t.get(base, READ_RULE, (req) =>
    listMonitors(ctx, principalOf(req), kind, parseQuery(req, listQuery).appid).map(show),
  );
  t.post(base, WRITE, (req) => {
    const { input, body } = parseCreate(req);
    return show(createMonitor(ctx, principalOf(req), kind, input, body));
  });
  // Before `/:id`: `test` is not an id.
  t.post(`${base}/test`, WRITE, (req) => {
    const { input, body } = parseTest(req);
    return testMonitor(ctx, principalOf(req), kind, input, body);
  });
  t.get(`${base}/:id`, READ_RULE, (req) => show(getMonitor(ctx, principalOf(req), kind, idParam(req))));
  t.put(`${base}/:id`, WRITE, (req) => {
    const id = idParam(req);
    const { input, body } = parseUpdate(req);
    return show(updateMonitor(ctx, principalOf(req), kind, id, input, body));
  });
  t.delete(`${base}/:id`, WRITE, (req) => {
    removeMonitor(ctx, principalOf(req), kind, idParam(req));
    return {};
  });
  t.post(`${base}/:id/pause`, WRITE, (req) => show(pauseMonitor(ctx, principalOf(req), kind, idParam(req))));
  t.post(`${base}/:id/resume`, WRITE, (req) =>
    show(resumeMonitor(ctx, principalOf(req), kind, idParam(req))),
  );
  t.post(`${base}/:id/check-now`, WRITE, (req) => checkMonitorNow(ctx, principalOf(req), kind, idParam(req)));
}

/** One table for every registered kind: the generic routes, then each kind's assisted ones. */
export function monitorRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'monitors');
  for (const kind of monitorKinds(ctx)) {
    kindRoutes(t, ctx, kind);
    kind.routes?.(t, ctx);
  }
  return t;
}
