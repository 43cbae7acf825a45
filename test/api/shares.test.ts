import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { apiToken, deviceToken, makeChannel, makeUser, sendMessage } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { openWs } from './realtime-helpers';

let t: TestServer;
const changes: { appid: number; userIds: number[] }[] = [];
const invalidated: { kind: string; tokenId: number }[] = [];

beforeAll(async () => {
  t = await startTestServer();
  t.server.ctx.bus.on('share:changed', (e) => changes.push(e));
  t.server.ctx.bus.on('token:invalidated', (e) => invalidated.push(e));
});
afterAll(async () => {
  await t.close();
});

async function person() {
  const u = makeUser(t);
  return { ...u, dev: (await deviceToken(t, u)).token };
}

async function inviteLink(email: string): Promise<string> {
  let token = '';
  await vi.waitFor(() => {
    const row = t.server.ctx.db.first<{ text: string }>(
      'SELECT text FROM mail_outbox WHERE to_addr = ? ORDER BY id DESC LIMIT 1',
      [email],
    );
    const m = row && /share\/join\?token=([A-Za-z0-9_-]+)/.exec(row.text);
    if (!m) throw new Error('no invitation yet');
    token = m[1]!;
  });
  return token;
}

describe('sharing a channel', () => {
  it('POST /application/{id}/share creates a pending share, mails an invitation and tells both sides', async () => {
    const owner = await person();
    const friend = await person();
    const c = await makeChannel(t, owner.dev, { name: 'Alerts' });
    const res = await t.request('POST', `/application/${c.id}/share`, {
      token: owner.dev,
      json: { email: friend.email.toUpperCase(), permission: 'send' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      appid: c.id,
      email: friend.email.toLowerCase(),
      permission: 'send',
      canShare: false,
      status: 'pending',
      createdAt: new Date(t.clock.now()).toISOString(),
    });
    expect(changes).toContainEqual({ appid: c.id, userIds: expect.arrayContaining([owner.id, friend.id]) });
    expect(await inviteLink(friend.email.toLowerCase())).toMatch(/^[A-Za-z0-9_-]{32}$/);
    // The recipient has an account: a notice lands in their internal channel.
    const notice = await t.request('GET', '/message', { token: friend.dev });
    expect(notice.body.messages[0]).toMatchObject({
      title: 'A channel was shared with you',
      senderName: 'Belfry',
    });
    const incoming = await t.request('GET', '/share/incoming', { token: friend.dev });
    expect(incoming.body).toEqual([{ ...res.body, channelName: 'Alerts', ownerEmail: owner.email }]);
    expect((await t.request('GET', `/application/${c.id}/share`, { token: owner.dev })).body).toEqual([
      res.body,
    ]);
    expect((await t.request('GET', '/share/recipients', { token: owner.dev })).body).toEqual([
      friend.email.toLowerCase(),
    ]);
  });

  it('POST /application/{id}/share answers 409 for an address already invited, 400 for yourself, 404 for others', async () => {
    const owner = await person();
    const stranger = await person();
    const c = await makeChannel(t, owner.dev);
    const body = { email: 'nobody@example.com', permission: 'view' };
    expect(
      (await t.request('POST', `/application/${c.id}/share`, { token: owner.dev, json: body })).status,
    ).toBe(200);
    const dup = await t.request('POST', `/application/${c.id}/share`, { token: owner.dev, json: body });
    expect(dup.status).toBe(409);
    expect(dup.body.errorDescription).toBe('already shared with this address');
    expect(
      (
        await t.request('POST', `/application/${c.id}/share`, {
          token: owner.dev,
          json: { ...body, email: owner.email },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await t.request('POST', `/application/${c.id}/share`, {
          token: owner.dev,
          json: { ...body, permission: 'admin' },
        })
      ).status,
    ).toBe(400);
    expect(
      (await t.request('POST', `/application/${c.id}/share`, { token: stranger.dev, json: body })).status,
    ).toBe(404);
    expect((await t.request('GET', `/application/${c.id}/share`, { token: c.token })).status).toBe(403);
  });

  it('accepting gives the recipient the channel, its messages and an S token that sends with send permission', async () => {
    const owner = await person();
    const friend = await person();
    const c = await makeChannel(t, owner.dev, { name: 'Shared' });
    const share = await t.request('POST', `/application/${c.id}/share`, {
      token: owner.dev,
      json: { email: friend.email, permission: 'send' },
    });
    const m = await sendMessage(t, c.token, { message: 'before accept' });
    const acc = await t.request('POST', `/share/${share.body.id}/accept`, { token: friend.dev });
    expect(acc.status).toBe(200);
    expect(acc.body).toMatchObject({
      id: c.id,
      name: 'Shared',
      shared: true,
      sharePermission: 'send',
      canShare: false,
    });
    expect(acc.body).not.toHaveProperty('deliveryConfig');
    expect(acc.body.token).toMatch(/^S[A-Za-z0-9]{22}$/);
    const list = await t.request('GET', '/application', { token: friend.dev });
    expect(list.body.find((x: any) => x.id === c.id)).toMatchObject({
      shared: true,
      token: expect.stringMatching(/\*/),
    });
    const msgs = await t.request('GET', '/message', { token: friend.dev });
    expect(msgs.body.messages.map((x: any) => x.id)).toContain(m.id);
    const sent = await t.request('POST', '/message', {
      token: acc.body.token,
      json: { message: 'from the friend' },
    });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ appid: c.id, senderName: friend.email });
    // The S token reads its channel only.
    const viaS = await t.request('GET', '/message', { token: acc.body.token });
    expect(new Set(viaS.body.messages.map((x: any) => x.appid))).toEqual(new Set([c.id]));
    // A recipient cannot change or delete the owner's channel or messages.
    expect(
      (await t.request('PUT', `/application/${c.id}`, { token: friend.dev, json: { name: 'x' } })).status,
    ).toBe(403);
    expect((await t.request('DELETE', `/message/${m.id}`, { token: friend.dev })).status).toBe(403);
    expect((await t.request('GET', `/application/${c.id}/token`, { token: friend.dev })).status).toBe(403);
  });

  it('an S token with view permission reads but gets 403 when sending; PUT /share/{id} changes the permission', async () => {
    const owner = await person();
    const friend = await person();
    const c = await makeChannel(t, owner.dev);
    const share = await t.request('POST', `/application/${c.id}/share`, {
      token: owner.dev,
      json: { email: friend.email, permission: 'send' },
    });
    const acc = await t.request('POST', `/share/${share.body.id}/accept`, { token: friend.dev });
    const upd = await t.request('PUT', `/share/${share.body.id}`, {
      token: owner.dev,
      json: { permission: 'view' },
    });
    expect(upd.body).toMatchObject({ permission: 'view', status: 'accepted' });
    expect(invalidated).toContainEqual({ kind: 'share', tokenId: share.body.id });
    const denied = await t.request('POST', '/message', { token: acc.body.token, json: { message: 'x' } });
    expect(denied.status).toBe(403);
    expect(denied.body.errorDescription).toBe('token lacks the send permission');
    expect((await t.request('GET', '/message', { token: acc.body.token })).status).toBe(200);
    expect(
      (await t.request('GET', '/application', { token: friend.dev })).body.find((x: any) => x.id === c.id)
        .token,
    ).toBe('');
    expect(
      (await t.request('PUT', `/share/${share.body.id}`, { token: friend.dev, json: { permission: 'send' } }))
        .status,
    ).toBe(404);
  });

  it('POST /share/join accepts by the emailed invitation; a used token is 404', async () => {
    const owner = await person();
    const other = await person();
    const c = await makeChannel(t, owner.dev);
    await t.request('POST', `/application/${c.id}/share`, {
      token: owner.dev,
      json: { email: 'new-person@example.com', permission: 'view' },
    });
    const invite = await inviteLink('new-person@example.com');
    const joined = await t.request('POST', '/share/join', { token: other.dev, json: { token: invite } });
    expect(joined.status).toBe(200);
    expect(joined.body).toMatchObject({ id: c.id, shared: true, sharePermission: 'view', token: '' });
    expect(
      (await t.request('POST', '/share/join', { token: other.dev, json: { token: invite } })).status,
    ).toBe(404);
  });

  it('decline, leave and rotate behave for the recipient; revoke removes access at once', async () => {
    const owner = await person();
    const friend = await person();
    const c = await makeChannel(t, owner.dev);
    const s1 = await t.request('POST', `/application/${c.id}/share`, {
      token: owner.dev,
      json: { email: friend.email, permission: 'send' },
    });
    const dec = await t.request('POST', `/share/${s1.body.id}/decline`, { token: friend.dev });
    expect(dec.body).toMatchObject({ status: 'declined' });
    expect(
      (await t.request('GET', '/application', { token: friend.dev })).body.find((x: any) => x.id === c.id),
    ).toBeUndefined();
    const acc = await t.request('POST', `/share/${s1.body.id}/accept`, { token: friend.dev });
    const rot = await t.request('POST', '/share/rotate', { token: friend.dev, json: { appid: c.id } });
    expect(rot.body).toEqual({ appid: c.id, token: expect.stringMatching(/^S[A-Za-z0-9]{22}$/) });
    expect(
      (await t.request('POST', '/message', { token: acc.body.token, json: { message: 'x' } })).status,
    ).toBe(401);
    expect(
      (await t.request('POST', '/message', { token: rot.body.token, json: { message: 'x' } })).status,
    ).toBe(200);
    expect(
      (await t.request('POST', '/share/leave', { token: friend.dev, json: { appid: c.id } })).body,
    ).toEqual({});
    expect(
      (await t.request('POST', '/message', { token: rot.body.token, json: { message: 'x' } })).status,
    ).toBe(401);
    expect(
      (await t.request('POST', '/share/leave', { token: friend.dev, json: { appid: c.id } })).status,
    ).toBe(404);
    await t.request('POST', `/share/${s1.body.id}/accept`, { token: friend.dev });
    const rev = await t.request('DELETE', `/share/${s1.body.id}`, { token: owner.dev });
    expect(rev.status).toBe(200);
    expect((await t.request('GET', `/application/${c.id}/message`, { token: friend.dev })).status).toBe(404);
    expect(changes.filter((e) => e.appid === c.id).at(-1)!.userIds).toEqual(
      expect.arrayContaining([owner.id, friend.id]),
    );
  });

  it('DELETE /share/{id} of a resharer also revokes the shares they made, transitively, and closes their live access', async () => {
    const a = await person();
    const b = await person();
    const c = await person();
    const d = await person();
    const ch = await makeChannel(t, a.dev);
    const cOwn = await makeChannel(t, c.dev);
    const grant = async (from: string, to: { email: string; dev: string }, canShare: boolean) => {
      const s = await t.request('POST', `/application/${ch.id}/share`, {
        token: from,
        json: { email: to.email, permission: 'send', canShare },
      });
      expect(s.status).toBe(200);
      const acc = await t.request('POST', `/share/${s.body.id}/accept`, { token: to.dev });
      expect(acc.status).toBe(200);
      return { id: s.body.id as number, token: acc.body.token as string };
    };
    const ab = await grant(a.dev, b, true);
    const bc = await grant(b.dev, c, true);
    const cd = await grant(c.dev, d, false);
    // B also has an invitation out that nobody accepted yet.
    const pending = await t.request('POST', `/application/${ch.id}/share`, {
      token: b.dev,
      json: { email: 'later@example.com', permission: 'view' },
    });
    expect(pending.status).toBe(200);
    const cDevice = await openWs(t, '/ws', c.dev);
    const cKey = await openWs(t, '/ws', bc.token);
    try {
      const seen = invalidated.length;
      const res = await t.request('DELETE', `/share/${ab.id}`, { token: a.dev });
      expect(res.status).toBe(200);
      // Every share resting on B's access is gone, not only B's own.
      expect((await t.request('GET', `/application/${ch.id}/share`, { token: a.dev })).body).toEqual([]);
      expect(
        invalidated
          .slice(seen)
          .map((e) => e.tokenId)
          .sort((x, y) => x - y),
      ).toEqual([ab.id, bc.id, cd.id, pending.body.id].sort((x, y) => x - y));
      for (const who of [b, c, d]) {
        expect((await t.request('GET', `/application/${ch.id}/message`, { token: who.dev })).status).toBe(
          404,
        );
        expect((await t.request('GET', '/share/incoming', { token: who.dev })).body).toEqual([]);
      }
      for (const tok of [ab.token, bc.token, cd.token])
        expect((await t.request('POST', '/message', { token: tok, json: { message: 'x' } })).status).toBe(
          401,
        );
      // C is told: its share-token socket closes, the SSE signal names C, and its device stops receiving.
      expect((await cKey.closed).code).toBe(4401);
      expect(changes.filter((e) => e.appid === ch.id).at(-1)!.userIds).toContain(c.id);
      const hidden = await sendMessage(t, ch.token, { message: 'after revoke' });
      const marker = await sendMessage(t, cOwn.token, { message: 'marker' });
      expect(await cDevice.next()).toMatchObject({ id: marker.id });
      expect(cDevice.frames.map((f: any) => f.id)).not.toContain(hidden.id);
    } finally {
      cDevice.ws.terminate();
      cKey.ws.terminate();
    }
  });

  it('POST /share/{id}/decline and /share/leave of a resharer end the shares they made', async () => {
    const a = await person();
    const b = await person();
    const c = await person();
    const ch = await makeChannel(t, a.dev);
    const share = async (from: string, email: string) =>
      (
        await t.request('POST', `/application/${ch.id}/share`, {
          token: from,
          json: { email, permission: 'view', canShare: true },
        })
      ).body.id as number;
    const listed = async () =>
      (await t.request('GET', `/application/${ch.id}/share`, { token: a.dev })).body.map((s: any) => [
        s.id,
        s.status,
      ]);
    const ab = await share(a.dev, b.email);
    await t.request('POST', `/share/${ab}/accept`, { token: b.dev });
    const bc = await share(b.dev, c.email);
    await t.request('POST', `/share/${bc}/accept`, { token: c.dev });
    const cx = await share(c.dev, 'x@example.com');
    expect(await listed()).toEqual([
      [ab, 'accepted'],
      [bc, 'accepted'],
      [cx, 'pending'],
    ]);
    // C declines the share it had accepted: the invitation C sent goes with it.
    expect((await t.request('POST', `/share/${bc}/decline`, { token: c.dev })).status).toBe(200);
    expect(await listed()).toEqual([
      [ab, 'accepted'],
      [bc, 'declined'],
    ]);
    await t.request('POST', `/share/${bc}/accept`, { token: c.dev });
    const cy = await share(c.dev, 'y@example.com');
    expect(cy).toBeGreaterThan(cx);
    // B leaves: B's share to C and C's to y go too.
    expect((await t.request('POST', '/share/leave', { token: b.dev, json: { appid: ch.id } })).status).toBe(
      200,
    );
    expect(await listed()).toEqual([[ab, 'declined']]);
    expect((await t.request('GET', `/application/${ch.id}/message`, { token: c.dev })).status).toBe(404);
  });

  it('a recipient with canShare reshares at most their own permission', async () => {
    const owner = await person();
    const friend = await person();
    const third = await person();
    const c = await makeChannel(t, owner.dev);
    const s = await t.request('POST', `/application/${c.id}/share`, {
      token: owner.dev,
      json: { email: friend.email, permission: 'view', canShare: true },
    });
    await t.request('POST', `/share/${s.body.id}/accept`, { token: friend.dev });
    const tooMuch = await t.request('POST', `/application/${c.id}/share`, {
      token: friend.dev,
      json: { email: third.email, permission: 'send' },
    });
    expect(tooMuch.status).toBe(403);
    const ok = await t.request('POST', `/application/${c.id}/share`, {
      token: friend.dev,
      json: { email: third.email, permission: 'view' },
    });
    expect(ok.status).toBe(200);
    expect(
      (await t.request('GET', `/application/${c.id}/share`, { token: friend.dev })).body.map(
        (x: any) => x.id,
      ),
    ).toEqual([ok.body.id]);
    expect((await t.request('GET', `/application/${c.id}/share`, { token: owner.dev })).body).toHaveLength(2);
    await t.request('PUT', `/share/${s.body.id}`, { token: owner.dev, json: { canShare: false } });
    expect(
      (
        await t.request('POST', `/application/${c.id}/share`, {
          token: friend.dev,
          json: { email: 'z@example.com', permission: 'view' },
        })
      ).status,
    ).toBe(403);
  });

  it('recursive operations reach only the descendants shared with the recipient', async () => {
    const owner = await person();
    const friend = await person();
    const parent = await makeChannel(t, owner.dev);
    const sharedChild = await makeChannel(t, owner.dev, { parentId: parent.id });
    const privateChild = await makeChannel(t, owner.dev, { parentId: parent.id });
    for (const id of [parent.id, sharedChild.id]) {
      const s = await t.request('POST', `/application/${id}/share`, {
        token: owner.dev,
        json: { email: friend.email, permission: 'view' },
      });
      await t.request('POST', `/share/${s.body.id}/accept`, { token: friend.dev });
    }
    const a = await sendMessage(t, sharedChild.token);
    const b = await sendMessage(t, privateChild.token);
    const rec = await t.request('GET', `/application/${parent.id}/message?recursive=1`, {
      token: friend.dev,
    });
    expect(rec.body.messages.map((m: any) => m.id)).toEqual([a.id]);
    expect(rec.body.messages.map((m: any) => m.id)).not.toContain(b.id);
    const list = await t.request('GET', '/application', { token: friend.dev });
    expect(list.body.find((x: any) => x.id === sharedChild.id).parentId).toBe(parent.id);
    const read = await t.request('POST', `/application/${parent.id}/message/read?recursive=1`, {
      token: friend.dev,
    });
    expect(read.body).toEqual({ appids: [parent.id, sharedChild.id] });
  });

  it('share endpoints answer 403 for a channel key and 401 without a token; an API token out of scope gets 404', async () => {
    const owner = await person();
    const c = await makeChannel(t, owner.dev);
    const other = await makeChannel(t, owner.dev);
    expect((await t.request('GET', '/share/incoming', { token: c.token })).status).toBe(403);
    expect((await t.request('GET', '/share/incoming')).status).toBe(401);
    const scoped = await apiToken(t, { token: owner.dev }, { appIds: [other.id] });
    expect(
      (
        await t.request('POST', `/application/${c.id}/share`, {
          token: scoped.token,
          json: { email: 'q@example.com', permission: 'view' },
        })
      ).status,
    ).toBe(404);
  });
});
