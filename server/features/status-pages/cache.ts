import type { AppContext } from '../../context';
import { renderPage } from './render';
import type { PageRow } from './store';
import { buildSummary, type Summary } from './summary';

/**
 * Public status pages are read far more often than anything on them changes (every visitor's browser
 * refreshes every 60 s, and an outage brings everyone at once), so the summary and its HTML are kept
 * per page and served again while nothing in the database has been written since (`db.writeCount`:
 * a status change, a check, a ping, a window, a page or plan edit all write) and for at most
 * STATUS_CACHE_MS, after which the time-dependent figures (uptime over a moving window, windows
 * entering the 7-day horizon, the UTC day) are computed afresh. Exactly what a fresh build would
 * answer, at most STATUS_CACHE_MS older.
 */
export const STATUS_CACHE_MS = 5_000;
/** Pages kept; the oldest entry goes first beyond it. */
const MAX_PAGES = 256;

interface Entry {
  writes: number;
  at: number;
  summary: Summary;
  html: string | null;
}

const caches = new WeakMap<AppContext, Map<number, Entry>>();

function entryFor(ctx: AppContext, page: PageRow): Entry {
  let cache = caches.get(ctx);
  if (!cache) {
    cache = new Map();
    caches.set(ctx, cache);
  }
  const now = ctx.clock.now();
  const writes = ctx.db.writeCount;
  const hit = cache.get(page.id);
  if (hit && hit.writes === writes && now >= hit.at && now - hit.at < STATUS_CACHE_MS) return hit;
  const entry: Entry = { writes, at: now, summary: buildSummary(ctx, page), html: null };
  cache.delete(page.id);
  cache.set(page.id, entry);
  if (cache.size > MAX_PAGES) cache.delete(cache.keys().next().value as number);
  return entry;
}

/** `GET /status/{slug}/summary`'s answer for an enabled page. */
export function pageSummary(ctx: AppContext, page: PageRow): Summary {
  return entryFor(ctx, page).summary;
}

/** `GET /status/{slug}`'s HTML for an enabled page. */
export function pageHtml(ctx: AppContext, page: PageRow): string {
  const e = entryFor(ctx, page);
  e.html ??= renderPage(e.summary);
  return e.html;
}
