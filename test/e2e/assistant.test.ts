import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel, sendMessage } from '../helpers/factories';
import {
  type ChatRequest,
  type FakeAnswer,
  type FakeAssistant,
  startFakeAssistant,
} from '../helpers/fake-assistant';
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

const LOCAL_LINE = 'No AI model is configured, so this answer comes from local rules.';
/** What the fake model answers (Markdown). */
const REPLY = 'All **quiet**: nothing is down right now.';

/** The fake model: a polish request (the insights as JSON) gets them reworded, a question gets REPLY. */
function answerFor(r: ChatRequest): FakeAnswer {
  let asked: { items?: { n: number }[] } = {};
  try {
    asked = JSON.parse(r.body.messages.at(-1)?.content ?? '');
  } catch {
    return { content: REPLY };
  }
  return {
    content: JSON.stringify({
      items: (asked.items ?? []).map((i) => ({
        n: i.n,
        title: 'The nightly backup stopped checking in',
        detail: 'No ping for over an hour.',
      })),
    }),
  };
}

/** The composer's textarea, the conversation list and the thread list of the assistant page. */
const composer = (page: Page) => page.getByLabel('Message', { exact: true });
const conversation = (page: Page) => page.getByRole('list', { name: 'Conversation' });
/** The conversation's messages (its own items, not those of a list inside a reply). */
const bubbles = (page: Page) => conversation(page).locator(':scope > li');
const threadList = (page: Page) => page.getByRole('list', { name: 'Threads' });

/**
 * A channel with two messages and a heartbeat that pinged once, missed its deadline (300 s + 60 s grace)
 * and has been down for over an hour since: the `source_down` insight. Answers the heartbeat's id.
 */
async function seedDownHeartbeat(t: TestServer, token: string): Promise<number> {
  const channel = await makeChannel(t, token, { name: 'Backups' });
  await sendMessage(t, channel.token, { title: 'Backup started', message: 'nightly run' });
  await sendMessage(t, channel.token, { title: 'Backup finished', message: '12 GB' });
  const hb = await t.request('POST', '/heartbeat', {
    token,
    json: { appid: channel.id, name: 'Nightly backup', intervalSec: 300, graceSec: 60 },
  });
  expect(hb.status).toBe(200);
  expect((await t.request('GET', `/heartbeat/ping/${hb.body.token}`)).status).toBe(200);
  t.clock.advance(400_000);
  await t.server.scheduler.tick();
  t.clock.advance(3_700_000);
  await t.server.scheduler.tick();
  expect((await t.request('GET', `/heartbeat/${hb.body.id}`, { token })).body.status).toBe('down');
  return hb.body.id;
}

/**
 * The assistant end to end (docs/api.md "Assistant"): the insights card on the inbox and the assistant
 * page in Chromium against a real server, first answering from local rules, then through an
 * OpenAI-compatible provider (a loopback fake) that answers and then fails.
 */
describe.skipIf(!hasChromium)('the assistant in Chromium', () => {
  let b: BrowserHandle;

  beforeAll(async () => {
    ensureRendererBuilt();
    b = await launchBrowser();
  }, 240_000);
  afterAll(async () => {
    await b?.close();
  });

  describe('without a model: local rules', () => {
    let t: TestServer;
    let page: Page;
    let heartbeatId = 0;

    beforeAll(async () => {
      t = await startTestServer();
      const setup = (await deviceToken(t, t.admin, 'setup')).token;
      heartbeatId = await seedDownHeartbeat(t, setup);
      ({ page } = await b.newPage());
      // Deleting a thread asks first: accepted.
      page.on('dialog', (d) => void d.accept());
      await signInToInbox(page, t.url, t.admin);
    }, 120_000);
    afterAll(async () => {
      await page?.context().close();
      await t?.close();
    });

    it('shows the down heartbeat on the inbox insights card, whose link opens the heartbeat', async () => {
      const card = page.getByRole('region', { name: /^Insights/ });
      const item = card.getByRole('listitem').filter({ hasText: 'Nightly backup' });
      await item.waitFor();
      expect(await item.textContent()).toMatch(/Critical|Warning/);
      await screenshot(page, 'assistant-insights');
      // The card passes axe (the a11y sweep's inbox has no insight to show).
      expect(await axeFindings(page)).toEqual([]);
      // Without a model there is nothing to polish with.
      expect(await card.getByRole('button', { name: 'Polish with AI' }).count()).toBe(0);
      // Refresh asks the server to compute them again.
      const refreshed = page.waitForResponse((r) => /\/assistant\/insights\?.*refresh=1/.test(r.url()));
      await card.getByRole('button', { name: 'Refresh' }).click();
      expect((await refreshed).status()).toBe(200);
      await item.waitFor();
      // Back on the inbox the card is there at once, from the session's copy, while the server's answer is
      // still on its way (held here until the card has been seen).
      let release = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      await page.route(/\/assistant\/insights/, async (route) => {
        await held;
        await route.continue();
      });
      await page.getByRole('link', { name: 'Channels', exact: true }).click();
      await page.getByRole('heading', { name: 'Channels', level: 1 }).waitFor();
      await page.getByRole('link', { name: 'Inbox', exact: true }).click();
      await item.waitFor();
      const answered = page.waitForResponse(/\/assistant\/insights/);
      release();
      expect((await answered).status()).toBe(200);
      await page.unroute(/\/assistant\/insights/);
      // Hide collapses the card (remembered), Show opens it again.
      await card.getByRole('button', { name: 'Hide' }).click();
      await item.waitFor({ state: 'detached' });
      await card.getByRole('button', { name: 'Show' }).click();
      await item.getByRole('link', { name: 'Nightly backup' }).click();
      await page.getByRole('heading', { name: 'Nightly backup', level: 1 }).waitFor();
      expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe(`/heartbeats?id=${heartbeatId}`);
    });

    it('answers “what is down?” from local rules in a new thread, which can be deleted', async () => {
      await page.getByRole('link', { name: 'Assistant', exact: true }).click();
      await page.getByRole('heading', { name: 'Assistant', level: 1 }).waitFor();
      await page.getByText('No threads yet.').waitFor();
      // Shift+Enter is a new line, not a send; the counter follows the text.
      await composer(page).fill('what is');
      await composer(page).press('Shift+Enter');
      await composer(page).pressSequentially('down?');
      expect(await composer(page).inputValue()).toBe('what is\ndown?');
      await page.getByText('13 / 4,000 characters').waitFor();
      await composer(page).fill('what is down?');
      const asked = page.waitForRequest((r) => r.url().endsWith('/assistant/chat'));
      await composer(page).press('Enter');
      // A new thread (no threadId), in the browser's language (Chromium here speaks en-US).
      expect((await asked).postDataJSON()).toEqual({ message: 'what is down?', lang: 'en' });
      const reply = bubbles(page).filter({ hasText: LOCAL_LINE });
      await reply.waitFor();
      expect(await reply.textContent()).toContain('Nightly backup');
      // The provider line now says the answers are local, and how to configure a model.
      await page.getByText('BELFRY_ASSISTANT_URL').waitFor();
      // The question is shown above the reply, the composer is empty and has the focus back.
      await expect.poll(() => bubbles(page).count()).toBe(2);
      expect(await bubbles(page).first().textContent()).toContain('what is down?');
      expect(await composer(page).inputValue()).toBe('');
      await expect.poll(() => composer(page).evaluate((el) => el === document.activeElement)).toBe(true);
      // The reply is announced to screen readers.
      expect(
        await page.locator('[aria-live="polite"]').filter({ hasText: 'Assistant replied' }).count(),
      ).toBe(1);
      // A new thread, titled by the question, open in the address.
      const thread = threadList(page).getByRole('listitem').filter({ hasText: 'what is down?' });
      await thread.waitFor();
      const threads = await t.request('GET', '/assistant/threads', { token: await deviceTokenOf(page) });
      expect(threads.body).toMatchObject([{ title: 'what is down?' }]);
      expect(new URL(page.url()).searchParams.get('thread')).toBe(String(threads.body[0].id));
      await screenshot(page, 'assistant');
      // A reload shows the stored conversation.
      await page.reload();
      await bubbles(page).filter({ hasText: LOCAL_LINE }).waitFor();
      // The composer keeps to 4,000 characters.
      await composer(page).fill('x'.repeat(4_100));
      expect((await composer(page).inputValue()).length).toBe(4_000);
      await page.getByText('4,000 / 4,000 characters').waitFor();
      await composer(page).fill('');
      await thread.getByRole('button', { name: 'Delete “what is down?”' }).click();
      await thread.waitFor({ state: 'detached' });
      await page.getByText('No threads yet.').waitFor();
      expect(new URL(page.url()).searchParams.get('thread')).toBeNull();
      expect(
        (await t.request('GET', '/assistant/threads', { token: await deviceTokenOf(page) })).body,
      ).toEqual([]);
    });
  });

  describe('with a model: an OpenAI-compatible provider', () => {
    let t: TestServer;
    let fake: FakeAssistant;
    let page: Page;

    beforeAll(async () => {
      fake = await startFakeAssistant({ model: 'fake-model-1', key: 'sk-test-key' });
      fake.answer(answerFor);
      t = await startTestServer({
        config: { assistantUrl: fake.url, assistantModel: fake.model, assistantKey: 'sk-test-key' },
      });
      await seedDownHeartbeat(t, (await deviceToken(t, t.admin, 'setup')).token);
      ({ page } = await b.newPage());
      await signInToInbox(page, t.url, t.admin);
    }, 120_000);
    afterAll(async () => {
      await page?.context().close();
      await t?.close();
      await fake?.close();
    });

    it('shows the model’s reply as Markdown and names the model', async () => {
      await page.getByRole('link', { name: 'Assistant', exact: true }).click();
      await page.getByRole('heading', { name: 'Assistant', level: 1 }).waitFor();
      // Before any answer this browser does not know the provider yet: no claim either way.
      expect(await page.getByText('BELFRY_ASSISTANT_URL').count()).toBe(0);
      await composer(page).fill('is anything down?');
      await page.getByRole('button', { name: 'Send' }).click();
      const reply = bubbles(page).filter({ hasText: 'nothing is down right now' });
      await reply.waitFor();
      expect(await reply.locator('strong').textContent()).toBe('quiet');
      expect(await reply.textContent()).not.toContain(LOCAL_LINE);
      await page.getByText('Model: fake-model-1').waitFor();
      // The provider got the thread's question after the system prompt, with the key and the model.
      // (The fake refuses a wrong path, key, model or message shape: none was refused.)
      expect(fake.refused).toEqual([]);
      expect(fake.requests.at(-1)?.body.messages.at(-1)).toEqual({
        role: 'user',
        content: 'is anything down?',
      });
    });

    it('shows a provider failure inline, and Retry asks again', async () => {
      fake.answer({ status: 503, body: { error: { message: 'model overloaded' } } });
      await composer(page).fill('and the backups?');
      await composer(page).press('Enter');
      const alert = page.getByRole('alert').filter({ hasText: 'assistant provider failed' });
      await alert.waitFor();
      const retry = page.getByRole('button', { name: 'Retry' });
      await retry.waitFor();
      expect(await axeFindings(page)).toEqual([]);
      fake.answer(answerFor);
      await retry.click();
      await alert.waitFor({ state: 'detached' });
      await expect.poll(() => bubbles(page).filter({ hasText: 'nothing is down right now' }).count()).toBe(2);
      expect(await retry.count()).toBe(0);
    });

    it('offers to polish the insights with the model, and shows its wording', async () => {
      await page.getByRole('link', { name: 'Inbox', exact: true }).click();
      const card = page.getByRole('region', { name: /^Insights/ });
      await card.getByText('Nightly backup is down').waitFor();
      await card.getByRole('button', { name: 'Polish with AI' }).click();
      await card.getByText('The nightly backup stopped checking in').waitFor();
      await card.getByText('Worded by fake-model-1', { exact: false }).waitFor();
      // The wording changed, not what the insight is about: its link still opens the heartbeat.
      expect(await card.getByRole('link', { name: 'Nightly backup' }).getAttribute('href')).toMatch(
        /^\/heartbeats\?id=\d+$/,
      );
    });
  });
});
