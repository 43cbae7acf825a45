import { z } from 'zod';
import type { AppContext } from '../../context';
import { principalOf, TOK } from '../../http/auth';
import { errors } from '../../http/errors';
import { RouteTable } from '../../http/routes';
import { idParam } from '../../http/validate';
import { isTimeZone } from '../heartbeats/schedule';
import { createWindow, getWindow, listWindows, presentWindow, putWindow, removeWindow } from './service';

const rfc3339Time = z
  .string()
  .refine(
    (s) => /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s)),
    'expected an RFC 3339 timestamp',
  )
  .transform((s) => Date.parse(s));
const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM (00:00-23:59)');

const schedule = z.discriminatedUnion(
  'type',
  [
    z.object({ type: z.literal('once'), startsAt: rfc3339Time, endsAt: rfc3339Time }),
    z.object({
      type: z.literal('weekly'),
      timezone: z.string().refine(isTimeZone, 'unknown time zone').default('UTC'),
      days: z
        .array(
          z
            .number()
            .int()
            .min(1, 'days are 1 (Monday) to 7 (Sunday)')
            .max(7, 'days are 1 (Monday) to 7 (Sunday)'),
        )
        .min(1, 'at least one day')
        .max(7)
        .refine((d) => new Set(d).size === d.length, 'days must be distinct'),
      start: hhmm,
      end: hhmm,
    }),
  ],
  { error: 'type must be "once" or "weekly"' },
);

/** The create body; PUT takes the same body and replaces the record (§4). */
const body = z.object({
  name: z.string().trim().min(1, 'required').max(200),
  channelIds: z.array(z.number().int().positive()).max(1000).default([]),
  includeSubtree: z.boolean().default(false),
  monitors: z
    .array(z.object({ kind: z.string().max(100), id: z.number().int().positive() }))
    .max(1000)
    .default([]),
  schedule,
  enabled: z.boolean().default(true),
});

const READ_RULE = TOK;
const WRITE = { ...TOK, access: 'write' } as const;

/** Zod paths as the wire names them: `monitors[2].id`, `schedule.days[0]`. */
function parseWindow(raw: unknown) {
  const r = body.safeParse(raw ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw errors.badRequest(`${fieldOf(issue.path as (string | number)[]) || 'body'}: ${issue.message}`);
}

function fieldOf(path: (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** Maintenance windows (issue 14): docs/api.md, "Maintenance windows". */
export function maintenanceRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'maintenance');
  t.get('/maintenance-window', READ_RULE, (req) =>
    listWindows(ctx, principalOf(req)).map((r) => presentWindow(ctx, r)),
  );
  t.post('/maintenance-window', WRITE, (req) =>
    presentWindow(ctx, createWindow(ctx, principalOf(req), parseWindow(req.body))),
  );
  t.get('/maintenance-window/:id', READ_RULE, (req) =>
    presentWindow(ctx, getWindow(ctx, principalOf(req), idParam(req))),
  );
  t.put('/maintenance-window/:id', WRITE, (req) => {
    const p = principalOf(req);
    const id = idParam(req);
    getWindow(ctx, p, id);
    return presentWindow(ctx, putWindow(ctx, p, id, parseWindow(req.body)));
  });
  t.delete('/maintenance-window/:id', WRITE, (req, res) => {
    removeWindow(ctx, principalOf(req), idParam(req));
    res.status(204).end();
  });
  return t;
}
