import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { ensureRendererBuilt as buildIfStale } from '../../scripts/renderer-build';
import { deviceToken, sudo } from '../helpers/factories';
import type { TestServer } from '../helpers/test-server';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The built UI the server serves at `/`, (re)built when missing or stale (shared with `npm run serve`). */
export function ensureRendererBuilt(): void {
  buildIfStale();
}

export interface BrowserHandle {
  browser: Browser;
  newPage(opts?: { phone?: boolean }): Promise<{ context: BrowserContext; page: Page }>;
  close(): Promise<void>;
}

/** Debian's Chromium, headless; Playwright gives every launch a fresh temporary profile. */
export async function launchBrowser(): Promise<BrowserHandle> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  return {
    browser,
    newPage: async (opts = {}) => {
      const context = await browser.newContext(
        opts.phone
          ? { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true }
          : { viewport: { width: 1280, height: 820 } },
      );
      // A click or fill on an element that never shows fails after 15 s naming the locator, instead of
      // waiting out the test's timeout with no word on what it was waiting for.
      context.setDefaultTimeout(15_000);
      const page = await context.newPage();
      return { context, page };
    },
    close: async () => {
      await browser.close();
    },
  };
}

/** README screenshots go to docs/screenshots/ when UPDATE_SCREENSHOTS=1, else to test/e2e/screenshots/. */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir =
    process.env.UPDATE_SCREENSHOTS === '1'
      ? join(ROOT, 'docs', 'screenshots')
      : join(ROOT, 'test', 'e2e', 'screenshots');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: false });
}

/** Fills in and sends the sign-in screen; what follows (inbox, second step, an error) is the caller's. */
export async function submitSignIn(page: Page, url: string, who: { email: string; password: string }) {
  await page.goto(url);
  await page.getByLabel('Email', { exact: true }).fill(who.email);
  await page.getByLabel('Password', { exact: true }).fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Signs in and waits for the inbox (an account without two-factor sign-in). */
export async function signInToInbox(page: Page, url: string, who: { email: string; password: string }) {
  await submitSignIn(page, url, who);
  await page.getByRole('heading', { name: 'All messages' }).waitFor({ timeout: 20_000 });
}

/** The device token the page stored after sign-in. */
export async function deviceTokenOf(page: Page): Promise<string> {
  return (await page.evaluate(() => localStorage.getItem('belfry.token'))) ?? '';
}

/**
 * The link to `path` in the outbox mail to `to` (no SMTP server in tests), read through the outbox API
 * as the administrator's phone; waits until it is there and is a `path?token=` link on this server.
 */
export async function mailedLink(
  t: TestServer,
  admin: { email: string; password: string },
  to: string,
  path: string,
): Promise<string> {
  const phone = await deviceToken(t, admin, 'phone');
  await sudo(t, phone, admin.password);
  const start = new RegExp(`^${`${t.url}${path}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\?token=`);
  let link = '';
  await expect
    .poll(async () => {
      const mails = (await t.request('GET', '/admin/outbox', { token: phone.token })).body as {
        to: string;
        text: string;
      }[];
      // The mail may carry other links first (a status page's address): the one to `path` is wanted.
      const links = (mails.find((m) => m.to === to)?.text ?? '').match(/http:\/\/\S+/g) ?? [];
      link = links.find((l) => start.test(l)) ?? links[0] ?? '';
      return link;
    })
    .toMatch(start);
  return link;
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's WCAG A/AA and best-practice findings on the page, as `impact id at targets` lines; `skip`
 * names rules a page breaks on purpose (the public status page's spec-mandated meta refresh).
 */
export async function axeFindings(page: Page, skip: string[] = []): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(async (skipped) => {
    type Found = { id: string; impact: string; nodes: { target: string[] }[] };
    type Axe = { run(d: Document, o: object): Promise<{ violations: Found[] }> };
    const rules = Object.fromEntries(skipped.map((id) => [id, { enabled: false }]));
    const { violations } = await (window as unknown as { axe: Axe }).axe.run(document, { rules });
    return violations.map(
      (v) => `${v.impact} ${v.id} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    );
  }, skip);
}
