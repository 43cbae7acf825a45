import { z } from 'zod';
import type { AppContext } from '../../context';
import { pageRequest } from '../../features/messages/routes';
import { escapeHtml } from '../../features/status-pages/render';
import { principalOf, TOK } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { idParam, parseQuery } from '../../http/validate';
import { listDeliveries, readByLink } from './service';
import { DELIVERY_STATUSES } from './store';

const logQuery = z.object({ status: z.enum(DELIVERY_STATUSES as [string, ...string[]]).optional() });
const readQuery = z.object({ token: z.string().max(2000).optional() });

/** The page only shows text: nothing loads, nothing runs. */
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'";

function readPage(title: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Marked as read</title><style>body{font-family:system-ui,sans-serif;margin:3rem auto;max-width:36rem;padding:0 1rem}</style></head><body><main><h1>Marked as read: ${escapeHtml(title)}</h1><p>Belfry will not re-deliver this message.</p></main></body></html>`;
}

/** Routes of the outbox (wire rules §6.2, §6.3); `delivery/test` is mounted with the channel routes. */
export function deliveryRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'delivery');
  t.get('/application/:id/deliveries', TOK, (req) => {
    const status = parseQuery(req, logQuery).status as Parameters<typeof listDeliveries>[3]['status'];
    const page = pageRequest(req);
    return listDeliveries(ctx, principalOf(req), idParam(req), { ...page, ...(status ? { status } : {}) });
  });
  // Public signed link: credentials in headers or cookies are never read (route rule null).
  t.get('/m/read', null, (req, res) => {
    const r = readByLink(ctx, parseQuery(req, readQuery).token);
    const accept = req.headers.accept ?? '';
    if (/application\/json/i.test(accept) && !/text\/html/i.test(accept))
      return { ok: true, messageId: r.messageId, title: r.title };
    res.status(200).type('text/html; charset=utf-8').setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Security-Policy', PAGE_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.send(readPage(r.title));
    return undefined;
  });
  return t;
}
