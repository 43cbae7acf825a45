import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, win32 } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { AppContext } from '../context';
import type { Feature } from '../features/index';

/** The check outcome's error when no Chromium can be found or launched (§2.3). */
export const NO_CHROMIUM = 'no Chromium available (set BELFRY_CHROMIUM_PATH)';
/** Debian's package, the first place looked on Linux. */
export const SYSTEM_CHROMIUM = '/usr/bin/chromium';
/** A browser nobody used for this long is closed (its memory goes back); the next check launches it again. */
export const CHROMIUM_IDLE_MS = 60_000;
/** Browser contexts (checks, assisted runs, renders) open at once; more wait their turn. */
export const CHROMIUM_MAX_CONTEXTS = 2;

export const LAUNCH_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-default-apps',
  '--disable-sync',
  '--no-first-run',
];

/**
 * Where an installed Chrome, Edge or Chromium lives on each platform, most specific first. The user's own
 * browser: Belfry downloads none.
 */
export function browserCandidates(
  platform: NodeJS.Platform,
  env: NodeJS.ProcessEnv = process.env,
  home: string = homedir(),
): string[] {
  if (platform === 'darwin') {
    const apps = [
      'Google Chrome.app/Contents/MacOS/Google Chrome',
      'Chromium.app/Contents/MacOS/Chromium',
      'Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
      'Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary',
    ];
    return [...apps.map((a) => `/Applications/${a}`), ...apps.map((a) => join(home, 'Applications', a))];
  }
  if (platform === 'win32') {
    const roots = [env.LOCALAPPDATA, env.PROGRAMFILES, env['PROGRAMFILES(X86)'], env.ProgramW6432].filter(
      (r): r is string => typeof r === 'string' && r !== '',
    );
    const exes = [
      'Google\\Chrome\\Application\\chrome.exe',
      'Microsoft\\Edge\\Application\\msedge.exe',
      'Chromium\\Application\\chrome.exe',
    ];
    return exes.flatMap((e) => roots.map((r) => win32.join(r, e)));
  }
  return [
    SYSTEM_CHROMIUM,
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
    '/usr/bin/google-chrome-stable',
    '/usr/bin/microsoft-edge',
    '/usr/bin/microsoft-edge-stable',
    '/snap/bin/chromium',
    '/opt/google/chrome/chrome',
    '/opt/microsoft/msedge/msedge',
  ];
}

/**
 * The Chromium executable of this server: BELFRY_CHROMIUM_PATH when set (and only it), else the first
 * installed Chrome, Edge or Chromium of browserCandidates; null when there is none.
 */
export function chromiumExecutable(
  ctx: AppContext,
  exists: (p: string) => boolean = existsSync,
  platform: NodeJS.Platform = process.platform,
): string | null {
  if (ctx.config.chromiumPath) return exists(ctx.config.chromiumPath) ? ctx.config.chromiumPath : null;
  return browserCandidates(platform).find((p) => exists(p)) ?? null;
}

interface Shared {
  browser: Promise<Browser> | null;
  /** Contexts open now (≤ CHROMIUM_MAX_CONTEXTS). */
  users: number;
  /** Callers waiting for a free slot, first come first served. */
  waiting: (() => void)[];
  /** Wall time (ctx.clock) the last context closed; the browser closes CHROMIUM_IDLE_MS later. */
  idleSince: number | null;
  /** Contexts opened since the server started (tests and the bench read it). */
  opened: number;
  /** Launches since the server started. */
  launches: number;
  /** The most contexts that were ever open at once. */
  peak: number;
  /** The next check's context and blank page, made ahead while the browser is warm (see prepareSpare). */
  spare: Spare | null;
  /** Checks that got a context made ahead. */
  spareUsed: number;
}

/**
 * What a caller does to a new context before its first page (the monitors' request guard): the same
 * function for every caller that may take a context another caller's release prepared.
 */
export type PrepareContext<G> = (ctx: AppContext, context: BrowserContext) => Promise<G>;

interface Prepared {
  context: BrowserContext;
  page: Page;
  prepared: unknown;
}

/** A fresh context with one about:blank page, never used yet; `ready` is null when making it failed. */
interface Spare {
  browser: Promise<Browser>;
  prepare: PrepareContext<unknown>;
  ready: Promise<Prepared | null>;
}

/** One browser per server, launched on first use (never module-global: tests run several servers). */
const shared = new WeakMap<AppContext, Shared>();

function state(ctx: AppContext): Shared {
  let s = shared.get(ctx);
  if (!s) {
    s = {
      browser: null,
      users: 0,
      waiting: [],
      idleSince: null,
      opened: 0,
      launches: 0,
      peak: 0,
      spare: null,
      spareUsed: 0,
    };
    shared.set(ctx, s);
  }
  return s;
}

/** What the tests and the bench look at: is a browser running, how many contexts are open or waiting. */
export function chromiumStats(ctx: AppContext) {
  const s = state(ctx);
  return {
    running: s.browser !== null,
    open: s.users,
    waiting: s.waiting.length,
    opened: s.opened,
    launches: s.launches,
    peak: s.peak,
    spare: s.spare !== null,
    spareUsed: s.spareUsed,
  };
}

/** Waits for one of the CHROMIUM_MAX_CONTEXTS slots; rejects when `signal` aborts first. */
function acquire(s: Shared, signal: AbortSignal): Promise<void> {
  if (s.users < CHROMIUM_MAX_CONTEXTS) {
    s.users++;
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    const go = () => {
      signal.removeEventListener('abort', onAbort);
      s.users++;
      resolve();
    };
    const onAbort = () => {
      const i = s.waiting.indexOf(go);
      if (i >= 0) s.waiting.splice(i, 1);
      reject(signal.reason ?? new Error('aborted'));
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    s.waiting.push(go);
  });
}

function release(ctx: AppContext, s: Shared, prepare: PrepareContext<unknown>): void {
  s.users--;
  const next = s.waiting.shift();
  if (next) next();
  else if (s.users === 0 && s.browser) {
    s.idleSince = ctx.clock.now();
    ctx.due.poke(s.idleSince + CHROMIUM_IDLE_MS);
  }
  prepareSpare(ctx, s, prepare);
}

/** A new context of `browser`, prepared (before any page), with its first page. */
async function newPrepared(ctx: AppContext, browser: Browser, prepare: PrepareContext<unknown>) {
  const context = await browser.newContext({ viewport: VIEWPORT });
  try {
    const prepared = await prepare(ctx, context);
    return { context, prepared, page: await context.newPage() };
  } catch (e) {
    await context.close().catch(() => {});
    throw e;
  }
}

const VIEWPORT = { width: 1280, height: 900 };

/**
 * Makes the next check's context and its blank page now, off that check's path, while the browser is
 * warm: a new page starts a renderer process, the largest part of a short check's time (the bench's
 * phase breakdown). It is still a fresh context (own cookies, cache and storage, never used before), so
 * nothing carries over from one check to the next. At most one, and only while fewer than
 * CHROMIUM_MAX_CONTEXTS are open, so contexts open + spare stay within CHROMIUM_MAX_CONTEXTS; it closes
 * with the browser (idle close, server stop).
 */
function prepareSpare(ctx: AppContext, s: Shared, prepare: PrepareContext<unknown>): void {
  const browser = s.browser;
  if (!browser || s.spare || s.users >= CHROMIUM_MAX_CONTEXTS) return;
  const ready = browser.then((b) => newPrepared(ctx, b, prepare)).catch(() => null);
  const spare: Spare = { browser, prepare, ready };
  s.spare = spare;
  // a spare whose making failed (the browser closed meanwhile) is dropped; the next check makes its own
  void ready.then((r) => {
    if (r === null && s.spare === spare) s.spare = null;
  });
}

/** The prepared context of the running browser, or null (none, another browser's or preparation, failed). */
async function takeSpare(s: Shared, browser: Promise<Browser>, prepare: PrepareContext<unknown>) {
  const spare = s.spare;
  if (!spare) return null;
  s.spare = null;
  const r = await spare.ready;
  if (spare.browser === browser && spare.prepare === prepare && r) return r;
  await r?.context.close().catch(() => {});
  return null;
}

/**
 * Runs `fn` in a fresh browser context (own cookies and cache) of the server's shared Chromium, with
 * one blank page, launching the browser when needed; at most CHROMIUM_MAX_CONTEXTS run at once, others
 * wait (within their own timeout). The context was made ahead when the browser was warm (prepareSpare),
 * else now. Resolves `{ noChromium: true }` when there is no Chromium to launch. The context is closed
 * afterwards, and when `signal` aborts (`fn` then fails with playwright's error).
 */
export async function withBrowserContext<T, G>(
  ctx: AppContext,
  signal: AbortSignal,
  prepare: PrepareContext<G>,
  fn: (context: BrowserContext, page: Page, prepared: G) => Promise<T>,
): Promise<T | { noChromium: true }> {
  const s = state(ctx);
  await acquire(s, signal);
  s.idleSince = null;
  let context: BrowserContext | null = null;
  const onAbort = () => void context?.close().catch(() => {});
  try {
    const browser = await launch(ctx, s);
    if (!browser) return { noChromium: true };
    const spare = s.browser ? await takeSpare(s, s.browser, prepare) : null;
    if (spare) s.spareUsed++;
    const made = spare ?? (await newPrepared(ctx, browser, prepare));
    context = made.context;
    s.opened++;
    s.peak = Math.max(s.peak, s.users);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    return await fn(made.context, made.page, made.prepared as G);
  } finally {
    signal.removeEventListener('abort', onAbort);
    await context?.close().catch(() => {});
    release(ctx, s, prepare as PrepareContext<unknown>);
  }
}

async function launch(ctx: AppContext, s: Shared): Promise<Browser | null> {
  if (!s.browser) {
    const executablePath = chromiumExecutable(ctx);
    if (!executablePath) return null;
    s.launches++;
    // playwright-core is loaded on first use: importing it costs ~0.3 s of start-up that a server
    // without browser checks never needs (profile of the redelivery bench's server start).
    s.browser = import('playwright-core').then(({ chromium }) =>
      chromium.launch({ executablePath, headless: true, args: LAUNCH_ARGS }),
    );
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
  s.idleSince = null;
  s.spare = null; // its context closes with the browser
  await browser.then((b) => b.close()).catch(() => {});
}

/**
 * DueSource 'chromium-idle': the browser closes CHROMIUM_IDLE_MS (ctx.clock) after its last context
 * closed, through the one due timer (so a ManualClock drives it in tests).
 */
function idleDueAt(ctx: AppContext): number | null {
  const s = shared.get(ctx);
  if (!s?.browser || s.users > 0 || s.idleSince === null) return null;
  return s.idleSince + CHROMIUM_IDLE_MS;
}

export const chromiumFeature: Feature = {
  name: 'chromium',
  init: (ctx) =>
    ctx.due.register({
      name: 'chromium-idle',
      nextDueAt: idleDueAt,
      runDue: async (c, now) => {
        const at = idleDueAt(c);
        if (at !== null && at <= now) await closeChromium(c);
      },
    }),
  // Content monitors (render: browser) and browser workflows share it: closed at stop.
  stop: closeChromium,
};
