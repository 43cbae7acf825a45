import { z } from 'zod';
import type { AppContext } from '../../context';
import { principalOf, TOK } from '../../http/auth';
import { errors } from '../../http/errors';
import { RouteTable } from '../../http/routes';
import { parseQuery } from '../../http/validate';
import { findUserById } from '../users/store';
import { DAY_MS, quotaBreakdown, utcDay } from './service';

const breakdownQuery = z.object({
  day: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'expected YYYY-MM-DD')
    .refine(
      (d) =>
        !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d),
      'not a date',
    )
    .optional(),
});

/** Spec "Current user ... plan": GET /user/quota-breakdown (the day is the UTC day of the contract). */
export function quotaRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'quota');
  t.get('/user/quota-breakdown', TOK, (req) => {
    const p = principalOf(req);
    const q = parseQuery(req, breakdownQuery);
    const user = findUserById(ctx.db, p.userId);
    if (!user) throw errors.unauthorized();
    const start = q.day ? Date.parse(`${q.day}T00:00:00Z`) : utcDay(ctx.clock.now()) * DAY_MS;
    return quotaBreakdown(ctx, user, start);
  });
  return t;
}
