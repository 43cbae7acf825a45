import type { BrowserContext } from 'playwright-core';
import type { AppContext } from '../../../../context';
import { resolveHost } from '../../net/resolve';

/** A context's request guard, installed before its first page, armed with the check's rule when taken. */
export interface RequestGuard {
  /** Sets whose rule applies (BELFRY_BLOCK_PRIVATE_TARGETS for non-admins) before the first navigation. */
  arm(allowPrivate: boolean): void;
  /** The error of the last top-frame navigation that was refused (`private address refused`). */
  refused(): string | null;
}

/**
 * Every request a page of `context` makes passes resolveHost first (monitorNet's host overrides, and
 * BELFRY_BLOCK_PRIVATE_TARGETS for non-admins), so the browser reaches nothing a plain HTTP check could not;
 * so does every WebSocket the page opens (routeWebSocket: context.route does not see them).
 * Installed when the context is made, before it has a page (with a page open, the interception costs a
 * round trip to its renderer: ~50-250 ms on a loaded machine, the bench's phase breakdown), which may be
 * ahead of the check (server/lib/chromium.ts, prepareSpare); the check arms it with its owner's rule
 * before it navigates. Until armed every http(s) request is refused, so an unarmed guard fails closed.
 */
export async function installGuard(ctx: AppContext, context: BrowserContext): Promise<RequestGuard> {
  let refused: string | null = null;
  let allowPrivate: boolean | null = null;
  /** Why a request to `host` is refused (unarmed, or resolveHost's rule), or null when it may go. */
  const refusal = async (host: string): Promise<string | null> => {
    if (allowPrivate === null) return 'request before the check began';
    const r = await resolveHost(ctx, host, { allowPrivate });
    return 'error' in r ? r.error : null;
  };
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return route.continue();
    const error = await refusal(url.hostname);
    if (error !== null) {
      if (route.request().isNavigationRequest() && route.request().frame().parentFrame() === null)
        refused = error;
      return route.abort('addressunreachable');
    }
    return route.continue();
  });
  // WebSockets do not pass context.route: without their own guard a page's script could open
  // ws://127.0.0.1:… (or any private address) while BELFRY_BLOCK_PRIVATE_TARGETS refuses its pages.
  await context.routeWebSocket(/.*/, async (ws) => {
    const error = await refusal(new URL(ws.url()).hostname);
    if (error !== null) await ws.close({ code: 1008, reason: error });
    else ws.connectToServer();
  });
  return {
    arm: (allow) => {
      allowPrivate = allow;
    },
    refused: () => refused,
  };
}
