import type { AppContext } from '../../../context';
import { NO_CHROMIUM, withBrowserContext } from '../../../lib/chromium';
import { installGuard } from '../kinds/browser/guard';
import { timeoutText } from '../net/errors';
import { httpRequest } from '../net/http';

/** How a content monitor gets its page: a static fetch parsed on the server, or Chromium's rendered DOM. */
export type ContentRender = 'html' | 'browser';

export interface PageRequest {
  url: string;
  render: ContentRender;
  signal: AbortSignal;
  timeoutSec: number;
  allowPrivate: boolean;
}

export type PageResult =
  | { ok: true; html: string; statusCode: number; responseTimeMs: number }
  /** `cannotRun`: no Chromium for `render: "browser"` (the check is `unknown`, not down). */
  | { ok: false; error: string; responseTimeMs: number; cannotRun?: boolean };

/**
 * The page of a content check. Fetch failures carry the http-monitor texts of §2.3; a page answered with
 * a status outside 2xx is a failure too (`status 503 not in 200-299`): an error page's text is not the
 * content being watched.
 */
export async function fetchPage(ctx: AppContext, req: PageRequest): Promise<PageResult> {
  const page = req.render === 'browser' ? await renderPage(ctx, req) : await staticPage(ctx, req);
  if (page.ok && (page.statusCode < 200 || page.statusCode > 299))
    return {
      ok: false,
      error: `status ${page.statusCode} not in 200-299`,
      responseTimeMs: page.responseTimeMs,
    };
  return page;
}

async function staticPage(ctx: AppContext, req: PageRequest): Promise<PageResult> {
  const r = await httpRequest(ctx, {
    method: 'GET',
    url: req.url,
    headers: { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5' },
    followRedirects: true,
    ignoreTlsErrors: false,
    signal: req.signal,
    timeoutSec: req.timeoutSec,
    allowPrivate: req.allowPrivate,
  });
  if (!r.ok) return r;
  return { ok: true, html: r.body, statusCode: r.statusCode, responseTimeMs: r.responseTimeMs };
}

/**
 * The DOM after Chromium loaded the page (scripts ran), serialised for the same extraction as a static
 * page. Every request the page makes passes resolveHost first, so BELFRY_BLOCK_PRIVATE_TARGETS holds
 * for the browser too.
 */
async function renderPage(ctx: AppContext, req: PageRequest): Promise<PageResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  // the page's top-frame navigation refused by the private-target rule, once the context is guarded
  let refused = (): string | null => null;
  let mainHost = '';
  try {
    mainHost = new URL(req.url).hostname;
  } catch {
    return { ok: false, error: `invalid URL: ${req.url}`, responseTimeMs: 0 };
  }
  try {
    const result = await withBrowserContext(ctx, req.signal, installGuard, async (_context, page, guard) => {
      guard.arm(req.allowPrivate);
      refused = guard.refused;
      const response = await page.goto(req.url, { timeout: req.timeoutSec * 1000, waitUntil: 'load' });
      const html = await page.content();
      return { html, statusCode: response?.status() ?? 200 };
    });
    if ('noChromium' in result) return { ok: false, error: NO_CHROMIUM, responseTimeMs: 0, cannotRun: true };
    return { ok: true, html: result.html, statusCode: result.statusCode, responseTimeMs: elapsed() };
  } catch (e) {
    const error =
      refused() ??
      (req.signal.aborted ? timeoutText(req.timeoutSec) : browserErrorText(e, mainHost, req.timeoutSec));
    return { ok: false, error, responseTimeMs: elapsed() };
  }
}

/** Chromium's navigation errors in the http-monitor's words (§2.3 request step). */
export function browserErrorText(e: unknown, host: string, timeoutSec: number): string {
  const err = e as Error;
  const message = (err?.message ?? String(e)).split('\n')[0]!;
  if (err?.name === 'TimeoutError' || /Timeout \d+ms exceeded/.test(message)) return timeoutText(timeoutSec);
  const code = /net::(ERR_[A-Z_]+)/.exec(message)?.[1];
  if (!code) return message.replace(/^page\.goto: /, '');
  if (code === 'ERR_CONNECTION_REFUSED') return 'connection refused';
  if (code === 'ERR_NAME_NOT_RESOLVED') return `DNS lookup failed: ${host}`;
  if (code === 'ERR_TIMED_OUT' || code === 'ERR_CONNECTION_TIMED_OUT') return timeoutText(timeoutSec);
  if (/^ERR_(CERT_|SSL_|BAD_SSL)/.test(code)) return `TLS error: ${code}`;
  return `${code}: ${message.replace(/^page\.goto: /, '')}`;
}
