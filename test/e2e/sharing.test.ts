import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel, makeUser, sendMessage } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  type BrowserHandle,
  deviceTokenOf,
  ensureRendererBuilt,
  hasChromium,
  launchBrowser,
  signInToInbox,
} from './browser';

/**
 * Sharing a channel through the UI, both people in their own browser: the owner invites by email, the
 * recipient accepts, receives, mutes it on this device, and leaves; the owner sees each step.
 */
describe.skipIf(!hasChromium)('sharing a channel in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;
  let owner: Page;
  let friend: Page;
  const people = { owner: { email: '', password: '' }, friend: { email: '', password: '' } };
  let channel: { id: number; token: string };

  const signIn = (p: Page, who: { email: string; password: string }) => signInToInbox(p, t.url, who);
  const openChannels = (p: Page) => p.getByRole('link', { name: 'Channels', exact: true }).click();
  const treeButton = (p: Page, name: string) =>
    p.getByRole('list', { name: 'Channel tree' }).getByRole('button', { name: new RegExp(`^${name}`) });

  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer();
    b = await launchBrowser();
    people.owner = makeUser(t, { email: 'owner@example.com' });
    people.friend = makeUser(t, { email: 'friend@example.com' });
    channel = await makeChannel(t, (await deviceToken(t, people.owner, 'setup')).token, { name: 'Deploys' });
    ({ page: owner } = await b.newPage());
    ({ page: friend } = await b.newPage());
    for (const p of [owner, friend]) p.on('dialog', (d) => void d.accept());
    await signIn(owner, people.owner);
    await signIn(friend, people.friend);
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it('the owner invites by email and sees the share pending', async () => {
    await openChannels(owner);
    await treeButton(owner, 'Deploys').click();
    await owner.getByRole('textbox', { name: 'Invite by email' }).fill(people.friend.email);
    await owner.getByRole('button', { name: 'Invite' }).click();
    const details = owner.getByRole('region', { name: 'Channel details' });
    await expect
      .poll(() => details.getByRole('listitem').filter({ hasText: people.friend.email }).textContent())
      .toContain('pending');
  });

  it('the recipient accepts, gets the channel in the tree, and receives its messages', async () => {
    await openChannels(friend);
    const incoming = friend.getByRole('region', { name: 'Shared with you' });
    await expect.poll(() => incoming.getByText('Deploys').isVisible()).toBe(true);
    expect(await incoming.getByText(`from ${people.owner.email}`, { exact: false }).isVisible()).toBe(true);
    await incoming.getByRole('button', { name: 'Accept' }).click();
    await expect.poll(() => treeButton(friend, 'Deploys').isVisible()).toBe(true);
    expect(await treeButton(friend, 'Deploys').textContent()).toContain('shared (view)');
    await friend.getByRole('link', { name: 'Inbox', exact: true }).click();
    await expect.poll(() => friend.getByText('Live', { exact: true }).isVisible()).toBe(true);
    await sendMessage(t, channel.token, { title: 'Deployed v2', message: 'to production' });
    await expect.poll(() => friend.getByRole('heading', { name: 'Deployed v2' }).isVisible()).toBe(true);
  });

  it('the recipient mutes the shared channel on this device', async () => {
    await friend.getByRole('link', { name: 'Devices', exact: true }).click();
    await friend
      .locator('.device', { hasText: 'this device' })
      .getByRole('button', { name: /^Mutes on/ })
      .click();
    const dialog = friend.getByRole('dialog');
    await dialog.getByLabel('Mute Deploys', { exact: true }).check();
    await dialog.getByRole('button', { name: 'Save mutes' }).click();
    await expect.poll(() => friend.getByRole('dialog').count()).toBe(0);
    const token = await deviceTokenOf(friend);
    const mutes = await t.request('GET', '/device/me/subscriptions', { token });
    expect(mutes.body).toEqual({ channelIds: [channel.id] });
  });

  it('the recipient leaves; the channel is gone for them and the owner sees the share declined', async () => {
    await openChannels(friend);
    await treeButton(friend, 'Deploys').click();
    await friend.getByRole('button', { name: 'Leave channel' }).click();
    await expect.poll(() => treeButton(friend, 'Deploys').count()).toBe(0);
    await owner.reload();
    await treeButton(owner, 'Deploys').click();
    const details = owner.getByRole('region', { name: 'Channel details' });
    await expect
      .poll(() => details.getByRole('listitem').filter({ hasText: people.friend.email }).textContent())
      .toContain('declined');
  });

  it('a signed-out person follows the emailed invitation, signs in, and joins with a sending token', async () => {
    const late = makeUser(t, { email: 'late@example.com' });
    await owner.getByRole('textbox', { name: 'Invite by email' }).fill(late.email);
    await owner.getByLabel('Permission', { exact: true }).selectOption('send');
    await owner.getByRole('button', { name: 'Invite' }).click();
    let link = '';
    await expect
      .poll(() => {
        const row = t.server.ctx.db.first<{ text: string }>(
          'SELECT text FROM mail_outbox WHERE to_addr = ? ORDER BY id DESC LIMIT 1',
          [late.email],
        );
        link = /https?:\/\/\S+share\/join\?token=[A-Za-z0-9_-]+/.exec(row?.text ?? '')?.[0] ?? '';
        return link;
      })
      .not.toBe('');
    const { context, page } = await b.newPage();
    await page.goto(link);
    await page.getByLabel('Email', { exact: true }).fill(late.email);
    await page.getByLabel('Password', { exact: true }).fill(late.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Join with this account' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('You joined “Deploys”');
    const sending = page.getByLabel('Your sending token (shown once)', { exact: true });
    const token = await sending.inputValue();
    const sent = await t.request('POST', '/message', { token, json: { message: 'from the late joiner' } });
    expect(sent.status).toBe(200);
    expect(sent.body.appid).toBe(channel.id);
    await page.getByRole('link', { name: 'Open its messages' }).click();
    await expect.poll(() => page.getByText('from the late joiner').isVisible()).toBe(true);
    await context.close();
  });

  it('both sides see a share offered and accepted as it happens, with no reload', async () => {
    const setup = await deviceToken(t, people.owner, 'setup 2');
    const alerts = await makeChannel(t, setup.token, { name: 'Alerts' });
    await openChannels(friend);
    await friend.getByRole('heading', { name: 'Channels', level: 1 }).waitFor();
    await owner.reload();
    await treeButton(owner, 'Alerts').click();
    const offered = await t.request('POST', `/application/${alerts.id}/share`, {
      token: setup.token,
      json: { email: people.friend.email, permission: 'view' },
    });
    expect(offered.status).toBe(200);
    // The recipient's open Channels page shows the offer (signalled over the SSE stream).
    const incoming = friend.getByRole('region', { name: 'Shared with you' });
    await expect.poll(() => incoming.getByText('Alerts').isVisible()).toBe(true);
    const row = owner
      .getByRole('region', { name: 'Channel details' })
      .getByRole('listitem')
      .filter({ hasText: people.friend.email });
    await expect.poll(() => row.textContent()).toContain('pending');
    await incoming.getByRole('button', { name: 'Accept' }).click();
    await expect.poll(() => treeButton(friend, 'Alerts').isVisible()).toBe(true);
    // The owner's open share list turns to accepted.
    await expect.poll(() => row.textContent()).toContain('accepted');
  });
});
