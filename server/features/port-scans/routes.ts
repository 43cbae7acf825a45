import { z } from 'zod';
import type { AppContext } from '../../context';
import { principalOf, TOK } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { idParam, parseBody, parseQuery } from '../../http/validate';
import { presentMonitor } from '../monitors/present';
import { parseHost } from '../verified-hosts/service';
import { parsePortSpec } from './ports';
import { presentScan } from './present';
import {
  cancelScan,
  createScan,
  getScan,
  listScans,
  removeScan,
  restartScan,
  scanToMonitor,
  updateScan,
} from './service';

const name = z.string().trim().min(1, 'required').max(200);
const notes = z.string().max(2_000);
const createBody = z.object({
  appid: z.number().int().positive(),
  host: z.string(),
  ports: z.unknown().optional(),
  concurrency: z.number().int().min(1).max(200).default(50),
  timeoutMs: z.number().int().min(100).max(10_000).default(1_000),
  notes: notes.default(''),
  name: name.optional(),
});
const patchBody = z.object({ name: name.optional(), notes: notes.optional() });
const toMonitorBody = z.object({
  port: z.number().int().min(1).max(65_535),
  name: name.optional(),
  intervalSec: z.number().int().min(1).max(86_400).optional(),
});
const listQuery = z.object({ appid: z.coerce.number().int().positive().optional() });

/** Management class (§0.2): device token, API token with `read` for GET and `write` otherwise. */
const READ_RULE = TOK;
const WRITE = { ...TOK, access: 'write' } as const;

export function portScanRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'port-scans');
  const show = (row: Parameters<typeof presentScan>[1]) => presentScan(ctx, row);
  t.get('/port-scan', READ_RULE, (req) =>
    listScans(ctx, principalOf(req), parseQuery(req, listQuery).appid).map(show),
  );
  t.post('/port-scan', WRITE, (req) => {
    const body = parseBody(req, createBody);
    const host = parseHost(body.host);
    const ports = parsePortSpec(body.ports);
    return show(createScan(ctx, principalOf(req), { ...body, host, ports }));
  });
  t.get('/port-scan/:id', READ_RULE, (req) => show(getScan(ctx, principalOf(req), idParam(req))));
  t.patch('/port-scan/:id', WRITE, (req) => {
    const id = idParam(req);
    return show(updateScan(ctx, principalOf(req), id, parseBody(req, patchBody)));
  });
  t.delete('/port-scan/:id', WRITE, (req) => {
    removeScan(ctx, principalOf(req), idParam(req));
    return {};
  });
  t.post('/port-scan/:id/cancel', WRITE, (req) => show(cancelScan(ctx, principalOf(req), idParam(req))));
  t.post('/port-scan/:id/restart', WRITE, (req) => show(restartScan(ctx, principalOf(req), idParam(req))));
  t.post('/port-scan/:id/to-monitor', WRITE, (req) => {
    const id = idParam(req);
    const { kind, row } = scanToMonitor(ctx, principalOf(req), id, parseBody(req, toMonitorBody));
    return presentMonitor(ctx, kind!, row);
  });
  return t;
}
