import type { BrowserContext } from 'playwright-core';
import type { AppContext } from '../../../../context';
import { resolveHost } from '../../net/resolve';

/**
 * Every request a page of `context` makes passes resolveHost first (monitorNet's host overrides, and
 * BELFRY_BLOCK_PRIVATE_TARGETS for non-admins), so the browser reaches nothing a plain HTTP check could not.
 * `refused()` is the error of the last top-frame navigation that was refused (`private address refused`).
 */
export async function guardRequests(
  ctx: AppContext,
  context: BrowserContext,
  allowPrivate: boolean,
): Promise<{ refused(): string | null }> {
  let refused: string | null = null;
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return route.continue();
    const r = await resolveHost(ctx, url.hostname, { allowPrivate });
    if ('error' in r) {
      if (route.request().isNavigationRequest() && route.request().frame().parentFrame() === null)
        refused = r.error;
      return route.abort('addressunreachable');
    }
    return route.continue();
  });
  return { refused: () => refused };
}
