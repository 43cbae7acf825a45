import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import type { AppContext } from '../context';

/** The check outcome's error when no Chromium can be found or launched (§2.3). */
export const NO_CHROMIUM = 'no Chromium available (set BELFRY_CHROMIUM_PATH)';
/** Debian's package, used when BELFRY_CHROMIUM_PATH is unset. */
export const SYSTEM_CHROMIUM = '/usr/bin/chromium';
/** A browser nobody used for this long is closed; the next render launches it again. */
export const CHROMIUM_IDLE_MS = 5 * 60_000;

const LAUNCH_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-default-apps',
  '--disable-sync',
  '--no-first-run',
];

/** The Chromium executable of this server: BELFRY_CHROMIUM_PATH, else Debian's; null when neither exists. */
export function chromiumExecutable(ctx: AppContext): string | null {
  const path = ctx.config.chromiumPath ?? SYSTEM_CHROMIUM;
  return existsSync(path) ? path : null;
}

interface Shared {
  browser: Promise<Browser> | null;
  users: number;
  idle: NodeJS.Timeout | null;
}

/** One browser per server, launched on first use (never module-global: tests run several servers). */
const shared = new WeakMap<AppContext, Shared>();

function state(ctx: AppContext): Shared {
  let s = shared.get(ctx);
  if (!s) {
    s = { browser: null, users: 0, idle: null };
    shared.set(ctx, s);
  }
  return s;
}

/**
 * Runs `fn` in a fresh browser context (own cookies and cache) of the server's shared Chromium,
 * launching it when needed. Resolves `{ noChromium: true }` when there is no Chromium to launch.
 * The context is closed afterwards, and when `signal` aborts (`fn` then fails with playwright's error).
 */
export async function withBrowserContext<T>(
  ctx: AppContext,
  signal: AbortSignal,
  fn: (context: BrowserContext) => Promise<T>,
): Promise<T | { noChromium: true }> {
  const s = state(ctx);
  const browser = await launch(ctx, s);
  if (!browser) return { noChromium: true };
  s.users++;
  if (s.idle) clearTimeout(s.idle);
  s.idle = null;
  let context: BrowserContext | null = null;
  const onAbort = () => void context?.close().catch(() => {});
  try {
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    return await fn(context);
  } finally {
    signal.removeEventListener('abort', onAbort);
    await context?.close().catch(() => {});
    s.users--;
    if (s.users === 0 && s.browser) {
      s.idle = setTimeout(() => void closeChromium(ctx), CHROMIUM_IDLE_MS);
      s.idle.unref();
    }
  }
}

async function launch(ctx: AppContext, s: Shared): Promise<Browser | null> {
  if (!s.browser) {
    const executablePath = chromiumExecutable(ctx);
    if (!executablePath) return null;
    s.browser = chromium.launch({ executablePath, headless: true, args: LAUNCH_ARGS });
    const launching = s.browser;
    launching.then(
      (b) =>
        b.on('disconnected', () => {
          if (s.browser === launching) s.browser = null; // crashed or closed: the next use launches again
        }),
      (e: unknown) => {
        ctx.log.warn(`chromium: cannot launch ${executablePath}`, { error: (e as Error).message });
        if (s.browser === launching) s.browser = null;
      },
    );
  }
  return s.browser.catch(() => null);
}

/** Closes the server's browser, if one runs (server stop, idle). */
export async function closeChromium(ctx: AppContext): Promise<void> {
  const s = shared.get(ctx);
  if (!s?.browser) return;
  const browser = s.browser;
  s.browser = null;
  if (s.idle) clearTimeout(s.idle);
  s.idle = null;
  await browser.then((b) => b.close()).catch(() => {});
}
