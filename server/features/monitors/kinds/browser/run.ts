import type { BrowserContext, Cookie, Page } from 'playwright-core';
import type { AppContext } from '../../../../context';
import { NO_CHROMIUM, withBrowserContext } from '../../../../lib/chromium';
import { compileUserRegex, safeTest } from '../../../../lib/safe-regex';
import { browserErrorText } from '../../content/fetch';
import type { CheckOutcome } from '../../kind';
import { SecretValues } from '../redact';
import { substitute } from '../workflow';
import { installGuard, type RequestGuard } from './guard';
import { saveShot } from './shots';
import type { BrowserCookie, BrowserSettings, BrowserStep } from './steps';

/** One run of a browser workflow's steps in a fresh context of the shared Chromium (§2.3). */

export interface StepResult {
  action: string;
  ok: boolean;
  durationMs: number;
  error?: string;
}

export interface RunOptions {
  ctx: AppContext;
  signal: AbortSignal;
  allowPrivate: boolean;
  /** Whose screenshot a failure saves (workflow id, or null for a test run); none without an owner. */
  owner?: { userId: number; monitorId: number | null };
  /** `login`: answer the context's cookies after the steps. */
  captureCookies?: boolean;
}

export interface RunResult {
  outcome: CheckOutcome;
  finalUrl: string;
  title: string;
  screenshotKey?: string;
  cookies?: BrowserCookie[];
}

/** Expectations are retried this often until they hold or the step's timeout passes. */
const POLL_MS = 100;
const SHOT_QUALITY = 60;

class StepError extends Error {}

function timeoutDetail(ms: number, selector?: string): string {
  return selector === undefined ? `timeout after ${ms} ms` : `timeout after ${ms} ms waiting for ${selector}`;
}

/** Playwright's error for one step in this kind's words. */
function stepErrorText(e: unknown, step: BrowserStep, host: string): string {
  if (e instanceof StepError) return e.message;
  const err = e as Error;
  const message = (err?.message ?? String(e)).split('\n')[0]!;
  if (err?.name === 'TimeoutError' || /Timeout \d+ms exceeded/.test(message))
    return timeoutDetail(step.timeoutMs, step.action === 'goto' ? undefined : step.selector);
  if (step.action === 'goto') return browserErrorText(e, host, step.timeoutMs / 1000);
  return message.replace(/^[a-zA-Z.]+: /, '');
}

/** §0.1 pattern: `/source/flags` a RegExp (time-limited), any other string a case-insensitive substring. */
function matchPattern(pattern: string, text: string): { ok: boolean; error?: string } {
  if (/^\/.*\/[a-z]*$/s.test(pattern)) {
    const re = compileUserRegex(pattern);
    // a busy machine can stall one short match past the limit: a pattern cut off twice is the error
    const r = safeTest(re, text);
    const again = r.ok ? r : safeTest(re, text);
    return again.ok ? { ok: again.match } : { ok: false, error: again.error };
  }
  return { ok: text.toLowerCase().includes(pattern.toLowerCase()) };
}

function describePattern(pattern: string): string {
  return /^\/.*\/[a-z]*$/s.test(pattern) ? `does not match ${pattern}` : `does not contain "${pattern}"`;
}

/** Above this many matches one main-world call reads them all instead of one call per match. */
const TEXT_CALLS_MAX = 8;

/**
 * Text of every match of `selector`, whitespace collapsed, joined by `\n` (as content monitors read it).
 * A few matches are read one by one (count, then textContent of each): those calls run in playwright's
 * utility world, whose injected script the earlier steps (fill, click, waitFor) already set up, while
 * `allTextContents` sets up a second one in the page's main world (~150-200 ms on a loaded machine, the
 * bench's step breakdown). When a read fails (the page changed between the calls) one main-world read decides.
 */
async function textOf(page: Page, selector: string, waitMs: number): Promise<string | null> {
  const matches = page.locator(selector);
  const n = await matches.count();
  if (n === 0) return null;
  let texts: string[] | null = null;
  if (n <= TEXT_CALLS_MAX) {
    texts = [];
    for (let i = 0; i < n && texts; i++) {
      const text = await matches
        .nth(i)
        .textContent({ timeout: Math.max(1, Math.round(waitMs)) })
        .catch(() => null);
      if (text === null) texts = null;
      else texts.push(text);
    }
  }
  // many matches, or a read failed (the page changed between the calls, time ran short): one read of all
  texts ??= await matches.allTextContents();
  if (texts.length === 0) return null;
  return texts.map((t) => t.replace(/\s+/g, ' ').trim()).join('\n');
}

/** Retries `probe` until it holds or `ms` pass; the last probe's failure text otherwise. */
async function until(ms: number, probe: (leftMs: number) => Promise<string | null>): Promise<void> {
  const deadline = performance.now() + ms;
  for (;;) {
    const failure = await probe(deadline - performance.now());
    if (failure === null) return;
    if (performance.now() >= deadline) throw new StepError(failure);
    await new Promise((r) => setTimeout(r, Math.min(POLL_MS, Math.max(1, deadline - performance.now()))));
  }
}

function resolve(text: string, vars: ReadonlyMap<string, string>, now: number): string {
  const r = substitute(text, vars, now);
  if ('error' in r) throw new StepError(r.error);
  return r.text;
}

async function runStep(
  page: Page,
  step: BrowserStep,
  vars: ReadonlyMap<string, string>,
  o: { now: number; secrets: SecretValues; refused: () => string | null },
): Promise<void> {
  const timeout = step.timeoutMs;
  switch (step.action) {
    case 'goto': {
      const url = resolve(step.url ?? '', vars, o.now);
      let response: Awaited<ReturnType<Page['goto']>>;
      try {
        response = await page.goto(url, { timeout, waitUntil: 'load' });
      } catch (e) {
        const refused = o.refused();
        if (refused) throw new StepError(refused);
        throw e;
      }
      const status = response?.status() ?? 200;
      if (status >= 400) throw new StepError(`status ${status}`);
      return;
    }
    case 'click':
      await page.click(step.selector!, { timeout });
      return;
    case 'fill': {
      const value = resolve(String(step.value ?? ''), vars, o.now);
      if (step.secret) o.secrets.add(value);
      await page.fill(step.selector!, value, { timeout });
      return;
    }
    case 'press': {
      const key = String(step.value);
      if (step.selector !== undefined) await page.press(step.selector, key, { timeout });
      else await page.keyboard.press(key);
      return;
    }
    case 'waitFor':
      if (step.selector !== undefined)
        await page.waitForSelector(step.selector, { state: 'visible', timeout });
      else await page.waitForTimeout(Number(step.value));
      return;
    case 'expectText': {
      const selector = step.selector ?? 'body';
      const want = resolve(String(step.value), vars, o.now);
      await until(timeout, async (leftMs) => {
        const text = await textOf(page, selector, leftMs);
        if (text === null) return `${selector} matched nothing`;
        const m = matchPattern(want, text);
        if (m.error) return m.error;
        return m.ok ? null : `text ${describePattern(want)}`;
      });
      return;
    }
    case 'expectUrl': {
      const want = resolve(String(step.value), vars, o.now);
      await until(timeout, async () => {
        const url = page.url();
        const m = matchPattern(want, url);
        if (m.error) return m.error;
        return m.ok ? null : `URL ${url} ${describePattern(want)}`;
      });
      return;
    }
  }
}

function toPlaywright(c: BrowserCookie) {
  return {
    name: c.name,
    value: c.value,
    domain: c.domain,
    path: c.path,
    expires: c.expires ?? -1,
    httpOnly: c.httpOnly,
    secure: c.secure,
    sameSite: c.sameSite,
  };
}

function fromPlaywright(c: Cookie): BrowserCookie {
  return {
    name: c.name,
    value: c.value,
    domain: c.domain.replace(/^\./, ''),
    path: c.path,
    expires: c.expires > 0 ? Math.floor(c.expires) : null,
    httpOnly: c.httpOnly,
    secure: c.secure,
    sameSite: c.sameSite,
  };
}

function hostOf(url: string | undefined): string {
  try {
    return new URL(url ?? '').hostname;
  } catch {
    return '';
  }
}

async function screenshot(page: Page, o: RunOptions): Promise<string | undefined> {
  if (!o.owner) return undefined;
  try {
    const jpeg = await page.screenshot({ type: 'jpeg', quality: SHOT_QUALITY, timeout: 5_000 });
    return saveShot(o.ctx, { ...o.owner, jpeg }) ?? undefined;
  } catch {
    return undefined; // the context closed (timeout, server stop): no screenshot
  }
}

/**
 * Runs the steps in order; the first failing step ends the run with `step {n} {action}: {detail}`, a
 * screenshot (when there is an owner) and the page's URL and title. Every secret the run used — secret
 * variables, cookie values, secret fill values — is redacted from the answer's texts (§0.3).
 */
export async function runBrowserSteps(s: BrowserSettings, o: RunOptions): Promise<RunResult> {
  const secrets = new SecretValues();
  secrets.addNamed(s.variables);
  for (const c of s.cookies) secrets.add(c.value);
  for (const st of s.steps) if (st.action === 'fill' && st.secret) secrets.add(String(st.value ?? ''));
  const vars = new Map(Object.entries(s.variables));
  const steps: StepResult[] = [];
  const started = performance.now();
  let final = { finalUrl: '', title: '' };
  let error: string | undefined;
  let screenshotKey: string | undefined;
  let cookies: BrowserCookie[] | undefined;
  // Where a check's time goes (debug log `browser check phases`): ms since the previous mark.
  const phases: Record<string, number> = {};
  let mark = started;
  const lap = (name: string) => {
    const t = performance.now();
    phases[name] = Math.round(t - mark);
    mark = t;
  };
  const run = async (context: BrowserContext, page: Page, guard: RequestGuard) => {
    lap('contextAndPage');
    guard.arm(o.allowPrivate);
    const refused = guard.refused;
    if (s.cookies.length > 0) await context.addCookies(s.cookies.map(toPlaywright));
    const now = o.ctx.clock.now();
    for (const [i, step] of s.steps.entries()) {
      const t0 = performance.now();
      try {
        await runStep(page, step, vars, { now, secrets, refused });
        steps.push({ action: step.action, ok: true, durationMs: Math.round(performance.now() - t0) });
        lap(`step${i + 1}`);
      } catch (e) {
        const detail = stepErrorText(e, step, hostOf(step.url));
        steps.push({
          action: step.action,
          ok: false,
          durationMs: Math.round(performance.now() - t0),
          error: detail,
        });
        error = `step ${i + 1} ${step.action}: ${detail}`;
        lap(`step${i + 1}`);
        screenshotKey = await screenshot(page, o);
        lap('screenshot');
        break;
      }
    }
    final = { finalUrl: page.url(), title: await page.title().catch(() => '') };
    if (o.captureCookies) cookies = (await context.cookies()).map(fromPlaywright);
    lap('final');
  };
  let result: Awaited<ReturnType<typeof withBrowserContext>>;
  try {
    result = await withBrowserContext(o.ctx, o.signal, installGuard, run);
  } catch (e) {
    // the context went away under a step (timeout, server stop) or the browser crashed
    error ??= `step ${steps.length + 1} ${s.steps[steps.length]?.action ?? 'goto'}: ${(e as Error).message.split('\n')[0]}`;
    result = undefined;
  }
  lap('close');
  o.ctx.log.debug('browser check phases', phases);
  if (result && typeof result === 'object' && 'noChromium' in result)
    return {
      outcome: {
        ok: false,
        error: NO_CHROMIUM,
        cannotRun: true,
        responseTimeMs: null,
        details: { steps: [], finalUrl: '' },
      },
      finalUrl: '',
      title: '',
    };
  const details: Record<string, unknown> = { steps, finalUrl: final.finalUrl };
  if (screenshotKey) details.screenshotKey = screenshotKey;
  const outcome: CheckOutcome = secrets.redact({
    ok: error === undefined,
    ...(error === undefined ? {} : { error }),
    responseTimeMs: Math.round(performance.now() - started),
    details,
    ...(screenshotKey ? { extras: { 'service::screenshot': screenshotKey } } : {}),
  });
  return {
    outcome,
    finalUrl: secrets.redactText(final.finalUrl),
    title: secrets.redactText(final.title),
    ...(screenshotKey ? { screenshotKey } : {}),
    ...(cookies ? { cookies } : {}),
  };
}
