import { z } from 'zod';
import type { AppContext } from '../../context';
import { DEV } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { parseQuery } from '../../http/validate';
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, PAGE_LIMIT_MIN } from '../../lib/limits';
import { presentOutbox } from './service';
import { listOutbox } from './store';

const outboxQuery = z.object({
  limit: z.coerce.number().int().min(PAGE_LIMIT_MIN).max(PAGE_LIMIT_MAX).default(PAGE_LIMIT_DEFAULT),
  before: z.coerce.number().int().min(1).optional(),
});

/**
 * Belfry extension (no spec endpoint): the mail outbox used when no SMTP server is configured. It holds
 * verification and password-reset links of every user, so it takes an administrator's device with sudo.
 */
export function mailRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'mail');
  t.get('/admin/outbox', { ...DEV, admin: true, sudo: true }, (req) => {
    const q = parseQuery(req, outboxQuery);
    return listOutbox(ctx.db, q.limit, q.before ?? Number.MAX_SAFE_INTEGER).map(presentOutbox);
  });
  return t;
}
