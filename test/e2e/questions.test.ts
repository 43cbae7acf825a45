import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  axeFindings,
  type BrowserHandle,
  ensureRendererBuilt,
  hasChromium,
  launchBrowser,
  screenshot,
  signInToInbox,
} from './browser';

interface Asked {
  id: number;
  status: string;
  messageId: number;
  expiresAt: string;
}

/**
 * Interactive questions end to end (wire-families §7): questions are asked over HTTP with the channel's
 * key (`POST /ask`) and answered from their cards in the inbox, in Chromium, against the real server. The
 * page's clock starts at the server's ManualClock and each ask first brings the server's up to the page's
 * (both read `expiresAt` alike); a deadline passes when the test moves both clocks and runs one scheduler
 * tick. Each test asks its own questions.
 */
describe.skipIf(!hasChromium)('interactive questions in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;
  let context: BrowserContext;
  let page: Page;
  let setup: string;
  let channel: { id: number; token: string };

  /**
   * Asks with the channel's key. The page's clock runs on while the server's stands still, so the
   * server's is first brought up to the page's: a deadline then reads the same on both.
   */
  const ask = async (body: Record<string, unknown>): Promise<Asked> => {
    t.clock.set(Math.max(t.clock.now(), await page.evaluate(() => Date.now())));
    const res = await t.request('POST', '/ask', { token: channel.token, json: body });
    if (res.status !== 200) throw new Error(`POST /ask answered ${res.status} ${res.text}`);
    return res.body as Asked;
  };
  const record = (id: number) => t.request('GET', `/ask-question/${id}`, { token: setup });
  /** The message's list item; its card is the region named by the question's text. */
  const item = (p: Page, q: Asked) => p.locator(`#message-${q.messageId}`);
  const card = (p: Page, q: Asked, text: string) => item(p, q).getByRole('region', { name: text });
  const text = (l: Locator) => l.textContent().then((s) => s ?? '');
  /** Opens the inbox on a page whose clock starts at the server's. */
  const openInbox = async (phone: boolean) => {
    const opened = await b.newPage({ phone });
    await opened.context.clock.install({ time: t.clock.now() });
    await signInToInbox(opened.page, t.url, t.admin);
    return opened;
  };

  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer();
    setup = (await deviceToken(t, t.admin, 'setup')).token;
    channel = (await makeChannel(t, setup, { name: 'Deploys' })) as { id: number; token: string };
    b = await launchBrowser();
    ({ context, page } = await openInbox(false));
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it('a choice question shows one button per option, the default highlighted, a running countdown; a click answers it and marks it read', async () => {
    const q = await ask({
      title: 'Deploy?',
      question: 'Deploy v2.3 to production?',
      options: ['Deploy now', 'Wait until tonight', 'Cancel the release'],
      defaultOption: 'Deploy now',
    });
    expect(q).toMatchObject({ status: 'pending' });
    // It arrives live (no reload) as an unread message with a card.
    const c = card(page, q, 'Deploy v2.3 to production?');
    await c.waitFor();
    expect(await item(page, q).getAttribute('class')).toContain('unread');
    const buttons = c.getByRole('group', { name: 'Deploy v2.3 to production?' }).getByRole('button');
    expect(await buttons.allTextContents()).toEqual([
      'Deploy now',
      'Wait until tonight',
      'Cancel the release',
    ]);
    expect(await buttons.nth(0).getAttribute('class')).toBe('primary');
    expect(await buttons.nth(1).getAttribute('class')).toBeNull();
    // One hour from the server's now; the page's clock runs, so the countdown moves.
    const timer = c.getByRole('timer', { name: 'Time left to answer' });
    expect(await timer.locator('time').getAttribute('datetime')).toBe(q.expiresAt);
    await expect.poll(() => text(timer)).toMatch(/^Time left (1:00:00|59:5\d)$/);
    const first = await text(timer);
    await expect.poll(() => text(timer)).not.toBe(first);
    expect(await text(c)).toContain('Waiting for an answer');
    await screenshot(page, 'question-pending');

    await c.getByRole('button', { name: 'Wait until tonight' }).click();
    const final = c.getByRole('status');
    await expect.poll(() => text(final)).toMatch(/^Answer: Wait until tonightAnswered in Belfry · /);
    expect(await text(c.locator('.q-badge'))).toBe('Answered');
    expect(await c.getByRole('button').count()).toBe(0);
    // Answering marked the message read, on the server and in the list.
    await expect.poll(() => item(page, q).getAttribute('class')).not.toContain('unread');
    const res = await record(q.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'answered', answer: 'Wait until tonight', answeredBy: 'user' });
    expect(await final.locator('time').getAttribute('datetime')).toBe(res.body.answeredAt);
    const listed = await t.request('GET', `/application/${channel.id}/message`, { token: setup });
    expect(listed.body.messages.find((m: { id: number }) => m.id === q.messageId)).toMatchObject({
      read: true,
    });
    await item(page, q).scrollIntoViewIfNeeded();
    await screenshot(page, 'question-answered');
  });

  it('a multi-select question takes checked options and Submit, refusing none', async () => {
    const q = await ask({
      question: 'Which regions?',
      options: ['eu-west-1', 'us-east-1', 'ap-south-1'],
      defaultOption: 'us-east-1',
      multiSelect: true,
    });
    const c = card(page, q, 'Which regions?');
    await c.waitFor();
    // The default option is highlighted, not checked for the user.
    expect(await c.locator('.q-default').allTextContents()).toEqual([' us-east-1']);
    expect(await c.getByRole('checkbox', { checked: true }).count()).toBe(0);
    await c.getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => text(c.getByRole('alert'))).toBe('Choose at least one option.');
    expect((await record(q.id)).body).toMatchObject({ status: 'pending', answer: null });
    await c.getByRole('checkbox', { name: 'ap-south-1' }).check();
    await c.getByRole('checkbox', { name: 'eu-west-1' }).check();
    await c.getByRole('button', { name: 'Submit' }).click();
    await expect
      .poll(() => text(c.getByRole('status')))
      .toMatch(/^Answer: eu-west-1, ap-south-1Answered in Belfry/);
    expect((await record(q.id)).body).toMatchObject({
      status: 'answered',
      answer: ['eu-west-1', 'ap-south-1'],
    });
  });

  it('a form question has one input per field type; an invalid submit names the fields first, then the answer is sent typed', async () => {
    const q = await ask({
      title: 'Release form',
      question: 'Fill in the release form',
      fields: [
        { name: 'name', label: 'Name', type: 'text', required: true, placeholder: 'Your name' },
        { name: 'notes', label: 'Notes', type: 'textarea', placeholder: 'Anything to know' },
        { name: 'count', label: 'Instances', type: 'number', required: true, default: 3 },
        { name: 'urgent', label: 'Urgent', type: 'boolean' },
        { name: 'env', label: 'Environment', type: 'select', options: ['prod', 'staging'], required: true },
        {
          name: 'tags',
          label: 'Parts',
          type: 'multiselect',
          options: ['web', 'api', 'worker'],
          required: true,
        },
        { name: 'day', label: 'Day', type: 'date' },
        { name: 'mail', label: 'Contact', type: 'email', default: 'ops@example.com' },
      ],
    });
    const c = card(page, q, 'Fill in the release form');
    const form = c.getByRole('form', { name: 'Fill in the release form' });
    await form.waitFor();
    // Each field by type, with its placeholder and default; required ones marked.
    const name = form.getByRole('textbox', { name: 'Name', exact: true });
    expect(await name.getAttribute('placeholder')).toBe('Your name');
    expect(await name.getAttribute('required')).toBe('');
    expect(await form.getByLabel('Notes').evaluate((e) => e.tagName)).toBe('TEXTAREA');
    expect(await form.getByRole('textbox', { name: 'Instances' }).inputValue()).toBe('3');
    expect(await form.getByRole('checkbox', { name: 'Urgent' }).isChecked()).toBe(false);
    expect(await form.getByRole('combobox', { name: 'Environment' }).inputValue()).toBe('');
    const parts = form.getByRole('group', { name: 'Parts (required)' });
    expect(await parts.getByRole('checkbox').count()).toBe(3);
    expect(await form.getByLabel('Day').getAttribute('type')).toBe('date');
    expect(await form.getByLabel('Contact').inputValue()).toBe('ops@example.com');
    expect(await form.getByLabel('Contact').getAttribute('type')).toBe('email');
    expect(await form.locator('.q-required').allTextContents()).toEqual([' *', ' *', ' *', ' *']);

    // Sent empty: the required fields are named and nothing reaches the server.
    await form.getByRole('textbox', { name: 'Instances' }).fill('three');
    await form.getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => text(form.getByRole('alert'))).toBe('4 fields need attention.');
    expect(await form.locator('.field-error').allTextContents()).toEqual([
      'Name: required',
      'Instances: must be a number',
      'Environment: required',
      'Parts: required',
    ]);
    expect(await name.getAttribute('aria-invalid')).toBe('true');
    expect((await record(q.id)).body).toMatchObject({ status: 'pending', answer: null });

    await name.fill('Ada');
    await form.getByLabel('Notes').fill('after the backup');
    await form.getByRole('textbox', { name: 'Instances' }).fill('2.5');
    await form.getByRole('checkbox', { name: 'Urgent' }).check();
    await form.getByRole('combobox', { name: 'Environment' }).selectOption('staging');
    await parts.getByRole('checkbox', { name: 'api' }).check();
    await parts.getByRole('checkbox', { name: 'worker' }).check();
    await form.getByLabel('Day').fill('2026-02-01');
    expect(await form.locator('.field-error').count()).toBe(0);

    // A 400 the page did not foresee (here: the request loses `name` on the way) shows the server's
    // text next to its field.
    await page.route(`**/ask-question/${q.id}/answer`, async (route) => {
      const body = route.request().postDataJSON() as { answer: Record<string, unknown> };
      delete body.answer.name;
      await route.continue({ postData: JSON.stringify(body) });
    });
    await form.getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => form.locator('.field-error').allTextContents()).toEqual(['Name: required']);
    expect(await text(form.getByRole('alert'))).toBe('answer.name: required');
    await page.unroute(`**/ask-question/${q.id}/answer`);

    await form.getByRole('button', { name: 'Submit' }).click();
    const final = c.getByRole('status');
    await expect.poll(() => text(final)).toContain('Answered in Belfry');
    expect(
      await final
        .locator('dl > div')
        .evaluateAll((rows) =>
          rows.map((r) => `${r.querySelector('dt')?.textContent}=${r.querySelector('dd')?.textContent}`),
        ),
    ).toEqual([
      'Name=Ada',
      'Notes=after the backup',
      'Instances=2.5',
      'Urgent=yes',
      'Environment=staging',
      'Parts=api, worker',
      'Day=2026-02-01',
      'Contact=ops@example.com',
    ]);
    expect((await record(q.id)).body).toMatchObject({
      status: 'answered',
      answer: {
        name: 'Ada',
        notes: 'after the backup',
        count: 2.5,
        urgent: true,
        env: 'staging',
        tags: ['api', 'worker'],
        day: '2026-02-01',
        mail: 'ops@example.com',
      },
    });
  });

  it('a free-text JSON question checks the JSON before sending it, and gets it back parsed', async () => {
    const q = await ask({ question: 'Send the rollout config', format: 'json' });
    const c = card(page, q, 'Send the rollout config');
    const box = c.getByRole('textbox', { name: 'Your answer (JSON)' });
    await box.fill('{"replicas": 3, "canary": true');
    await c.getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => text(c.getByRole('alert'))).toBe('answer: not valid JSON');
    expect(await box.getAttribute('aria-invalid')).toBe('true');
    expect((await record(q.id)).body).toMatchObject({ status: 'pending' });
    await box.fill('{"replicas": 3, "canary": true}');
    await c.getByRole('button', { name: 'Submit' }).click();
    await expect
      .poll(() => text(c.getByRole('status')))
      .toMatch(/^Answer: \{"replicas":3,"canary":true\}Answered/);
    expect((await record(q.id)).body).toMatchObject({
      status: 'answered',
      answer: { replicas: 3, canary: true },
    });
  });

  it('a question whose deadline passes counts down to "expired", then shows Expired when the server expires it', async () => {
    const q = await ask({ question: 'Restart the worker?', options: ['Yes', 'No'], timeout_sec: 600 });
    const c = card(page, q, 'Restart the worker?');
    const timer = c.getByRole('timer', { name: 'Time left to answer' });
    await expect.poll(() => text(timer)).toMatch(/^Time left (10:00|9:5\d)$/);
    // The page's deadline passes first: the countdown says so and the buttons stop.
    await context.clock.fastForward(Date.parse(q.expiresAt) - (await page.evaluate(() => Date.now())));
    await expect.poll(() => text(timer)).toBe('expired');
    expect(await c.getByRole('button', { name: 'Yes' }).isDisabled()).toBe(true);
    expect(await text(c)).toContain('Waiting for an answer');
    // Then the server's: its question:updated frame brings the final state.
    t.clock.advance(Date.parse(q.expiresAt) - t.clock.now());
    await t.server.scheduler.tick();
    await expect.poll(() => text(c.getByRole('status'))).toBe('Expired: nobody answered in time.');
    expect(await text(c.locator('.q-badge'))).toBe('Expired');
    expect(await c.getByRole('timer').count()).toBe(0);
    const res = await record(q.id);
    expect([res.status, res.body.errorDescription]).toEqual([410, 'question expired']);
    // Opened afterwards, the card reads the same from the 410.
    await page.reload();
    await expect
      .poll(() => text(card(page, q, 'Restart the worker?').getByRole('status')))
      .toBe('Expired: nobody answered in time.');
  });

  it('an answer from another device, an answer link or a cancel updates the open card live', async () => {
    const q = await ask({ question: 'Roll back?', options: ['Roll back', 'Keep'] });
    const viaLink = await ask({ question: 'Page the on-call?', options: ['Page', 'Skip'] });
    const cancelled = await ask({ question: 'Rotate the keys?', options: ['Rotate', 'Later'] });
    for (const [x, s] of [
      [q, 'Roll back?'],
      [viaLink, 'Page the on-call?'],
      [cancelled, 'Rotate the keys?'],
    ] as const)
      await card(page, x, s).getByRole('button').first().waitFor();

    const phone = (await deviceToken(t, t.admin, 'phone')).token;
    const answered = await t.request('POST', `/message/${q.messageId}/answer`, {
      token: phone,
      json: { answer: 'Keep' },
    });
    expect(answered.status).toBe(200);
    await expect
      .poll(() => text(card(page, q, 'Roll back?').getByRole('status')))
      .toMatch(/^Answer: KeepAnswered in Belfry · /);

    const listed = await t.request('GET', `/application/${channel.id}/message`, { token: setup });
    const extras = listed.body.messages.find((m: { id: number }) => m.id === viaLink.messageId).extras;
    const link = extras['service::question'].links.Skip as string;
    expect((await fetch(link)).status).toBe(200);
    await expect
      .poll(() => text(card(page, viaLink, 'Page the on-call?').getByRole('status')))
      .toMatch(/^Answer: SkipAnswered through an answer link · /);

    expect((await t.request('DELETE', `/ask-question/${cancelled.id}`, { token: setup })).status).toBe(200);
    await expect
      .poll(() => text(card(page, cancelled, 'Rotate the keys?').getByRole('status')))
      .toBe('The sender cancelled this question.');
    expect(await text(card(page, cancelled, 'Rotate the keys?').locator('.q-badge'))).toBe('Cancelled');
    // A card answered elsewhere takes no answer here any more.
    expect(await card(page, q, 'Roll back?').getByRole('button').count()).toBe(0);

    // Extended by the sender: the countdown runs to the new deadline.
    const longer = await ask({ question: 'Scale down tonight?', options: ['Yes', 'No'], timeout_sec: 600 });
    const timer = card(page, longer, 'Scale down tonight?').getByRole('timer');
    await expect.poll(() => text(timer)).toMatch(/^Time left (10:00|9:5\d)$/);
    const extended = await t.request('POST', `/ask-question/${longer.id}/extend`, {
      token: setup,
      json: { timeout_sec: 7200 },
    });
    expect(extended.status).toBe(200);
    await expect.poll(() => text(timer)).toMatch(/^Time left (2:00:00|1:59:5\d)$/);
    expect(await timer.locator('time').getAttribute('datetime')).toBe(extended.body.expiresAt);
  });

  it('question cards pass axe, pending and answered', async () => {
    await ask({ question: 'Pick a plan', options: ['A', 'B'], defaultOption: 'B' });
    await ask({ question: 'Any notes?' });
    await ask({
      question: 'Details',
      fields: [
        { name: 'who', type: 'text', required: true },
        { name: 'tags', type: 'multiselect', options: ['x', 'y'] },
        { name: 'ok', type: 'boolean', label: 'Confirmed' },
      ],
    });
    await page.reload();
    await page.getByRole('region', { name: 'Details' }).getByRole('form').waitFor();
    await page.getByRole('region', { name: 'Pick a plan' }).getByRole('timer').waitFor();
    expect(await axeFindings(page)).toEqual([]);
  });

  it('on a phone (390×844) the card fits the screen, its buttons wrap and a tap answers it', async () => {
    const phone = await openInbox(true);
    const p = phone.page;
    const q = await ask({
      question: 'Which build goes out tonight?',
      options: [
        'Release candidate 2.3.0-rc.4',
        'Hotfix 2.2.9 only',
        'Nothing, hold everything',
        'Ask me later',
      ],
      defaultOption: 'Hotfix 2.2.9 only',
    });
    const f = await ask({
      question: 'Sign off the rollout',
      fields: [
        { name: 'by', label: 'Your name', type: 'text', required: true },
        { name: 'note', label: 'Note', type: 'textarea' },
      ],
    });
    const c = card(p, q, 'Which build goes out tonight?');
    await c.waitFor();
    await card(p, f, 'Sign off the rollout').waitFor();
    const fits = () =>
      p.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);
    expect(await fits()).toBe(true);
    // The four buttons take more than one row, each within the card.
    const box = await c.boundingBox();
    const tops = new Set<number>();
    for (const btn of await c.getByRole('button').all()) {
      const bb = await btn.boundingBox();
      if (!box || !bb) throw new Error('not laid out');
      expect(bb.x >= box.x && bb.x + bb.width <= box.x + box.width + 0.5).toBe(true);
      tops.add(Math.round(bb.y));
    }
    expect(tops.size).toBeGreaterThan(1);
    // Inputs take the form's full width.
    const form = card(p, f, 'Sign off the rollout').getByRole('form');
    const formBox = await form.boundingBox();
    const inputBox = await form.getByRole('textbox', { name: 'Your name' }).boundingBox();
    expect(Math.abs((formBox?.width ?? 0) - (inputBox?.width ?? -1))).toBeLessThan(1);
    expect(await axeFindings(p)).toEqual([]);

    await c.getByRole('button', { name: 'Nothing, hold everything' }).tap();
    await expect.poll(() => text(c.getByRole('status'))).toMatch(/^Answer: Nothing, hold everythingAnswered/);
    expect((await record(q.id)).body).toMatchObject({
      status: 'answered',
      answer: 'Nothing, hold everything',
    });
    expect(await fits()).toBe(true);
    await phone.context.close();
  });
});
