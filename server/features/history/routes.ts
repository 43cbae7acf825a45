import type { Request } from 'express';
import type { AppContext } from '../../context';
import { type Principal, principalOf, TOK } from '../../http/auth';
import { errors } from '../../http/errors';
import type { Paging } from '../../http/paging';
import { RouteTable } from '../../http/routes';
import { idParam } from '../../http/validate';
import { rfc3339, rfc3339OrNull } from '../../lib/clock';
import { inScope, receivedChannel } from '../channels/access';
import { pageRequest } from '../messages/routes';
import { type SourceSummary, sourceKind } from '../sources/registry';
import { type CheckRow, historySummary, pageChecks } from './service';

/** The 404 noun of a kind (§0.2): `heartbeat not found`, `monitor not found` for every monitor kind. */
export function notFoundNoun(kind: string): string {
  return kind === 'heartbeat' ? 'heartbeat' : 'monitor';
}

/**
 * The source behind `/monitor-history/{kind}/{id}`, found through the event-sources registry, if the
 * caller may see it: on a channel they receive and (for an API token) in scope; on a channel shared
 * with them only their own sources. Anything else, an unknown kind included: 404.
 */
export function requireSource(ctx: AppContext, p: Principal, kind: string, id: number): SourceSummary {
  const s = sourceKind(ctx, kind)?.find(ctx, id);
  const channel = s ? receivedChannel(ctx, p.userId, s.appid) : undefined;
  if (!s || !channel || !inScope(p, channel.row) || (!channel.owned && s.userId !== p.userId))
    throw errors.notFound(notFoundNoun(kind));
  return s;
}

function presentCheck(r: CheckRow) {
  const extra = r.extra ? (JSON.parse(r.extra) as Record<string, unknown>) : {};
  return {
    ...extra,
    id: r.id,
    at: rfc3339(r.at),
    ok: r.ok === 1,
    status: r.status,
    responseTimeMs: r.response_ms,
    ...(r.error !== null ? { error: r.error } : {}),
  };
}

export function historyRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'history');
  const target = (req: Request) => {
    const kind = req.params.kind;
    if (typeof kind !== 'string') throw errors.notFound('monitor');
    return requireSource(ctx, principalOf(req), kind, idParam(req));
  };
  t.get('/monitor-history/:kind/:id', TOK, (req) => {
    const s = target(req);
    return {
      kind: s.kind,
      id: s.id,
      name: s.name,
      status: s.status,
      statusSince: rfc3339OrNull(s.statusSince),
      ...historySummary(ctx, s.kind, s.id, ctx.clock.now()),
    };
  });
  // Paging exactly as GET /message: newest first, `since` is the cursor (an id), `next` the next page.
  t.get('/monitor-history/:kind/:id/log', TOK, (req) => {
    const s = target(req);
    const page = pageRequest(req);
    const rows = pageChecks(ctx, s.kind, s.id, page.since, page.limit + 1);
    const shown = rows.slice(0, page.limit);
    const paging: Paging = { size: shown.length, limit: page.limit };
    if (rows.length > page.limit) {
      paging.since = shown[shown.length - 1]!.id;
      paging.next = page.nextUrl(paging.since);
    } else if (page.legacy) paging.since = 0;
    return { paging, checks: shown.map(presentCheck) };
  });
  return t;
}
