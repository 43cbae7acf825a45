import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  axeFindings,
  type BrowserHandle,
  deviceTokenOf,
  ensureRendererBuilt,
  hasChromium,
  launchBrowser,
  screenshot,
  signInToInbox,
} from './browser';

/** GitHub's real `push` delivery (test/fixtures/router), its repository renamed to octo/repo. */
function githubPush(): { headers: Record<string, string>; body: Record<string, unknown> } {
  const f = JSON.parse(readFileSync(join(__dirname, '../fixtures/router/github-push.json'), 'utf8')) as {
    headers: Record<string, string>;
    body: Record<string, unknown> & { repository: Record<string, unknown> };
  };
  f.body.repository.full_name = 'octo/repo';
  return f;
}

interface IngestAnswer {
  id: number;
  matchedRuleId: number | null;
  messageId: number | null;
}

/**
 * The webhook router end to end (issue 17, wire-families §11): the page makes the router, its copied URL
 * takes a GitHub push over plain HTTP, the event shows up by itself, a rule made from it previews its
 * title against that event, and the next push is routed by it. Steps build on each other.
 */
describe.skipIf(!hasChromium)('webhook router in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;
  let context: BrowserContext;
  let page: Page;
  let channel: { id: number };
  let url = '';
  const ids: { event?: number; rule?: number; other?: number } = {};
  const token = () => deviceTokenOf(page);
  const api = async <T>(method: string, path: string, json?: unknown) => {
    const res = await t.request(method, path, { token: await token(), ...(json ? { json } : {}) });
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body as T;
  };
  const send = async (to: string) => {
    const push = githubPush();
    const res = await fetch(`${to}/github`, {
      method: 'POST',
      headers: push.headers,
      body: JSON.stringify(push.body),
    });
    return { status: res.status, body: (await res.json()) as IngestAnswer };
  };
  const events = () => page.getByRole('list', { name: 'Latest events' }).getByRole('listitem');
  const rules = () =>
    page.getByRole('list', { name: 'Rules, in the order they are tried' }).getByRole('listitem');

  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer();
    channel = await makeChannel(t, (await deviceToken(t, t.admin, 'setup')).token, { name: 'Deploys' });
    b = await launchBrowser();
    ({ context, page } = await b.newPage());
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
    page.on('dialog', (d) => void d.accept());
    await signInToInbox(page, t.url, t.admin);
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it('opens the Router page, which makes the router and shows its full URL to copy', async () => {
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Router', exact: true })
      .click();
    await page.getByRole('heading', { name: 'Webhook router', level: 1 }).waitFor();
    const field = page.getByLabel('Router URL (shown now only)', { exact: true });
    await expect.poll(() => field.inputValue()).toMatch(new RegExp(`^${t.url}/router/[A-Za-z0-9_-]+$`));
    url = await field.inputValue();
    await page.getByRole('button', { name: 'Copy Router URL (shown now only)' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    // The page's GET made it: from now on the server shows the token masked.
    const rec = await api<{ token: string; url: string; enabled: boolean; defaultAppid: number | null }>(
      'GET',
      '/webhook-router',
    );
    expect(rec).toMatchObject({ enabled: true, defaultAppid: null });
    expect(rec.token).toContain('*');
    expect(url.endsWith(rec.token)).toBe(false);
    // The curl lines carry the same URL.
    await page.getByText('Examples: curl, GitHub, GitLab, Stripe, Docker Hub').click();
    expect(await page.getByLabel('Send a JSON event (path /github)', { exact: true }).inputValue()).toMatch(
      new RegExp(`^curl -X POST ${url}/github -H 'Content-Type: application/json' -d '\\{.*\\}'$`),
    );
    await expect
      .poll(() => page.getByRole('listitem').filter({ hasText: 'Stripe' }).textContent())
      .toContain(`${url}/stripe`);
    // Events no rule takes go to the default channel.
    await page.getByLabel('Default channel', { exact: true }).selectOption({ label: 'Deploys' });
    await expect
      .poll(async () => (await api<{ defaultAppid: number }>('GET', '/webhook-router')).defaultAppid)
      .toBe(channel.id);
    // The PUT answers the token masked; the one shown on this visit stays full.
    expect(await field.inputValue()).toBe(url);
    expect(await page.getByText('No events yet.', { exact: false }).isVisible()).toBe(true);
    await page.getByText('Examples: curl, GitHub, GitLab, Stripe, Docker Hub').click();
  });

  it('shows a GitHub push sent to the copied URL without a reload, with its headers, query and body', async () => {
    const sent = await send(url);
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ matchedRuleId: null, messageId: expect.any(Number) });
    ids.event = sent.body.id;
    const row = events().filter({ hasText: '/github' });
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.textContent()).toContain('POST');
    expect(await row.textContent()).toContain('no rule (default channel)');
    expect(await row.getByRole('link', { name: `message #${sent.body.messageId}` }).count()).toBe(1);
    await screenshot(page, 'router');

    await row.getByRole('link', { name: '/github' }).click();
    await page.getByRole('heading', { name: 'POST /github', level: 1 }).waitFor();
    const headers = page.getByRole('table', { name: 'Headers' });
    expect(await headers.getByRole('row').filter({ hasText: 'x-github-event' }).textContent()).toContain(
      'push',
    );
    expect(await headers.textContent()).not.toContain('authorization');
    expect(await page.getByText('No query.').isVisible()).toBe(true);
    const body = page.getByRole('region', { name: 'Body' });
    expect(await body.textContent()).toContain('"full_name": "octo/repo"');
    expect(await body.textContent()).toContain('"ref": "refs/heads/main"');
    expect(await axeFindings(page)).toEqual([]);
  });

  it('makes a rule from the event; the preview renders the title against it; a 400 shows under its field', async () => {
    await page.getByRole('button', { name: 'Make a rule from this' }).click();
    const form = page.getByRole('form', { name: 'New rule' });
    await form.waitFor();
    // The server's draft: the event's path and method, the router's default channel.
    await expect.poll(() => form.getByLabel('Path pattern', { exact: true }).inputValue()).toBe('/github');
    expect(await form.getByLabel('Method', { exact: true }).inputValue()).toBe('POST');
    expect(await form.getByLabel('Channel', { exact: true }).inputValue()).toBe(String(channel.id));
    const preview = form.getByRole('region', { name: 'Preview' });
    expect(await preview.getByLabel('Preview with event', { exact: true }).inputValue()).toBe(
      String(ids.event),
    );
    expect(await preview.getByTestId('preview-title').textContent()).toBe('POST /github');

    await form.getByLabel('Name', { exact: true }).fill('GitHub pushes');
    await form
      .getByLabel('Title template', { exact: true })
      .fill('{{headers.x-github-event}} to {{repository.full_name}}');
    await expect.poll(() => preview.getByTestId('preview-title').textContent()).toBe('push to octo/repo');
    await form
      .getByLabel('Message template', { exact: true })
      .fill('{{head_commit.message}} by {{pusher.name}}');
    const commit = (githubPush().body.head_commit as { message: string }).message;
    const pusher = (githubPush().body.pusher as { name: string }).name;
    await expect
      .poll(() => preview.getByTestId('preview-message').textContent())
      .toBe(`${commit} by ${pusher}`);
    expect(await preview.textContent()).toContain('This rule would take this event.');

    // A condition on the body; one that does not hold says so in the preview.
    await form.getByRole('button', { name: 'Add condition' }).click();
    await form.getByLabel('Condition 1 path', { exact: true }).fill('$.ref');
    await form.getByLabel('Condition 1 value', { exact: true }).fill('"refs/heads/dev"');
    await expect.poll(() => preview.textContent()).toContain('would not take this event: condition 1');
    await form.getByLabel('Condition 1 value', { exact: true }).fill('"refs/heads/main"');
    await expect.poll(() => preview.textContent()).toContain('This rule would take this event.');
    await preview.scrollIntoViewIfNeeded();
    await screenshot(page, 'router-rule');

    // The server's 400 stands under the field it names.
    await form.getByLabel('Path pattern', { exact: true }).fill('github');
    await form.getByRole('button', { name: 'Create rule' }).click();
    await expect
      .poll(() => form.getByRole('alert').textContent())
      .toBe('pathPattern: must start with / (or be **)');
    expect(await axeFindings(page)).toEqual([]);
    await form.getByLabel('Path pattern', { exact: true }).fill('/github');
    await form.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('heading', { name: 'Webhook router', level: 1 }).waitFor();
    await expect.poll(() => rules().count()).toBe(1);
    const saved = await api<Record<string, unknown>[]>('GET', '/webhook-router/rule');
    expect(saved).toMatchObject([
      {
        name: 'GitHub pushes',
        pathPattern: '/github',
        method: 'POST',
        match: [{ path: '$.ref', op: 'equals', value: 'refs/heads/main' }],
        appid: channel.id,
        title: '{{headers.x-github-event}} to {{repository.full_name}}',
        message: '{{head_commit.message}} by {{pusher.name}}',
        priority: null,
        enabled: true,
        position: 1,
      },
    ]);
    ids.rule = saved[0]!.id as number;
  });

  it('routes the next push by the rule: the event names it and the message is listed and in the inbox', async () => {
    const sent = await send(url);
    expect(sent.body).toMatchObject({ matchedRuleId: ids.rule, messageId: expect.any(Number) });
    const row = events().first();
    await expect.poll(() => row.textContent()).toContain('rule “GitHub pushes”');
    const routed = page
      .getByRole('list', { name: 'Routed messages' })
      .getByRole('listitem', { name: 'push to octo/repo' });
    await expect.poll(() => routed.count()).toBe(1);
    expect(await routed.textContent()).toContain('rule “GitHub pushes”');
    await row.getByRole('link', { name: `message #${sent.body.messageId}` }).click();
    const message = page.locator(`#message-${sent.body.messageId}`);
    await expect.poll(() => message.textContent()).toContain('push to octo/repo');
    expect(await message.textContent()).toContain('GitHub pushes');
  });

  it('reorders two rules with up and down, and the first that holds takes the event', async () => {
    await page.goto(`${t.url}/routing?rule=new`);
    const form = page.getByRole('form', { name: 'New rule' });
    await form.getByLabel('Name', { exact: true }).fill('Everything');
    await form.getByLabel('Channel', { exact: true }).selectOption({ label: 'Deploys' });
    await form.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('heading', { name: 'Webhook router', level: 1 }).waitFor();
    await expect
      .poll(() => rules().allTextContents())
      .toEqual([expect.stringContaining('GitHub pushes'), expect.stringContaining('Everything')]);
    ids.other = (await api<{ id: number; name: string }[]>('GET', '/webhook-router/rule')).find(
      (r) => r.name === 'Everything',
    )!.id;

    await page.getByRole('button', { name: 'Move “Everything” up' }).click();
    await expect
      .poll(() => rules().allTextContents())
      .toEqual([expect.stringContaining('Everything'), expect.stringContaining('GitHub pushes')]);
    const order = await api<{ id: number; position: number }[]>('GET', '/webhook-router/rule');
    expect(order.map((r) => [r.id, r.position]).sort((a, b) => a[1]! - b[1]!)).toEqual([
      [ids.other, 1],
      [ids.rule, 2],
    ]);
    expect((await send(url)).body.matchedRuleId).toBe(ids.other);

    // Disabled, it is skipped; moved back down, the push rule is first again.
    await rules().filter({ hasText: 'Everything' }).getByLabel('Enabled').uncheck();
    await expect
      .poll(
        async () =>
          (await api<{ id: number; enabled: boolean }[]>('GET', '/webhook-router/rule')).find(
            (r) => r.id === ids.other,
          )?.enabled,
      )
      .toBe(false);
    expect((await send(url)).body.matchedRuleId).toBe(ids.rule);
    await page.getByRole('button', { name: 'Move “Everything” down' }).click();
    await expect
      .poll(() => rules().allTextContents())
      .toEqual([expect.stringContaining('GitHub pushes'), expect.stringContaining('Everything')]);
    expect(await rules().filter({ hasText: 'Everything' }).textContent()).toContain('disabled: skipped');
    expect(await axeFindings(page)).toEqual([]);
    await page.getByRole('button', { name: 'Delete “Everything”' }).click();
    await expect.poll(() => rules().count()).toBe(1);
  });

  it('makes a new URL after a confirm: the old one answers 404', async () => {
    await page.getByRole('button', { name: 'New URL' }).click();
    const field = page.getByLabel('Router URL (shown now only)', { exact: true });
    await expect.poll(() => field.inputValue()).not.toBe(url);
    const next = await field.inputValue();
    expect(next).toMatch(new RegExp(`^${t.url}/router/[A-Za-z0-9_-]+$`));
    expect((await send(url)).status).toBe(404);
    expect((await send(next)).status).toBe(200);
    url = next;
  });

  it('works at phone width, with the URL masked on a later visit', async () => {
    const phone = await b.newPage({ phone: true });
    await signInToInbox(phone.page, t.url, t.admin);
    await phone.page.goto(`${t.url}/routing`);
    await phone.page.getByRole('heading', { name: 'Webhook router', level: 1 }).waitFor();
    // Another visit: the token is masked, nothing to copy.
    await expect.poll(() => phone.page.locator('.router-url').textContent()).toContain('*');
    expect(await phone.page.getByRole('button', { name: /^Copy Router URL/ }).count()).toBe(0);
    await expect
      .poll(() => phone.page.getByRole('list', { name: 'Latest events' }).getByRole('listitem').count())
      .toBeGreaterThan(0);
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await axeFindings(phone.page)).toEqual([]);
    await screenshot(phone.page, 'router-phone');
    await phone.page.goto(`${t.url}/routing?rule=${ids.rule}`);
    await phone.page.getByRole('form', { name: 'Edit rule “GitHub pushes”' }).waitFor();
    await expect.poll(() => phone.page.getByTestId('preview-title').textContent()).toBe('push to octo/repo');
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await axeFindings(phone.page)).toEqual([]);
    await phone.context.close();
  });
});
