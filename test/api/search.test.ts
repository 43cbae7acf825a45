import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEARCH_INDEX_LAG_MS } from '../../server/features/messages/search-index';
import { deviceToken, makeChannel, makeUser, sendMessage } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let dev: string;
let parent: { id: number; token: string };
let child: { id: number; token: string };
let ids: Record<string, number>;

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
  parent = await makeChannel(t, dev);
  child = await makeChannel(t, dev, { parentId: parent.id });
  ids = {
    disk: (
      await sendMessage(t, parent.token, { title: 'Disk almost full', message: 'db-07 /var is 91% full' })
    ).id,
    cafe: (await sendMessage(t, child.token, { title: 'Café', message: 'the backup finished' })).id,
    disk2: (await sendMessage(t, child.token, { message: 'disk replaced on db-03' })).id,
    other: (await sendMessage(t, parent.token, { message: 'nothing to see' })).id,
  };
  const stranger = (await deviceToken(t, makeUser(t))).token;
  await sendMessage(t, (await makeChannel(t, stranger)).token, { message: 'disk of someone else' });
});
afterAll(async () => {
  await t.close();
});

const search = (q: string, token = dev) => t.request('GET', `/message/search?${q}`, { token });

describe('GET /message/search', () => {
  it('GET /message/search finds words and prefixes in title and text, newest first, only in own channels', async () => {
    const res = await search('q=dis');
    expect(res.status).toBe(200);
    expect(res.body.messages.map((m: any) => m.id)).toEqual([ids.disk2, ids.disk]);
    expect(res.body.paging).toEqual({ size: 2, limit: 100 });
    expect((await search('q=cafe')).body.messages.map((m: any) => m.id)).toEqual([ids.cafe]);
    expect((await search('q=db full')).body.messages.map((m: any) => m.id)).toEqual([ids.disk]);
  });

  it('GET /message/search answers 400 when q is shorter than 2 characters or missing', async () => {
    for (const q of ['q=a', 'q=%20a%20', '']) {
      const res = await search(q);
      expect(res.status).toBe(400);
    }
  });

  it('GET /message/search treats FTS syntax as text', async () => {
    const res = await search(`q=${encodeURIComponent('"disk" OR NEAR(')}`);
    expect(res.status).toBe(200);
  });

  it("GET /message/search restricts to appId, with descendants on recursive, and 404s for others' channels", async () => {
    expect((await search(`q=disk&appId=${parent.id}`)).body.messages.map((m: any) => m.id)).toEqual([
      ids.disk,
    ]);
    expect(
      (await search(`q=disk&appId=${parent.id}&recursive=1`)).body.messages.map((m: any) => m.id),
    ).toEqual([ids.disk2, ids.disk]);
    expect((await search('q=disk&appId=999999')).status).toBe(404);
  });

  it('GET /message/search pages with limit and since', async () => {
    const first = await search('q=disk&limit=1');
    expect(first.body.paging).toEqual({
      size: 1,
      limit: 1,
      since: ids.disk2,
      next: `${t.url}/message/search?q=disk&limit=1&since=${ids.disk2}`,
    });
    const second = await search(`q=disk&limit=1&since=${ids.disk2}`);
    expect(second.body.messages.map((m: any) => m.id)).toEqual([ids.disk]);
  });

  it('GET /message/search shows a channel key with read only its own channel', async () => {
    const key = await t.request('POST', `/application/${child.id}/token`, {
      token: dev,
      json: { canRead: true },
    });
    expect((await search('q=disk', key.body.token)).body.messages.map((m: any) => m.id)).toEqual([ids.disk2]);
    expect((await search(`q=disk&appId=${parent.id}`, key.body.token)).status).toBe(404);
  });

  it('GET /message/search finds a message right after POST /message acknowledged it, before its index batch ran', async () => {
    const sent = await sendMessage(t, parent.token, { message: 'zeppelin landed' });
    const indexed = () =>
      t.server.ctx.db.first('SELECT 1 AS x FROM messages_fts_docsize WHERE docid = ?', [sent.id]) !==
      undefined;
    // Not indexed on the request path: the batch is due SEARCH_INDEX_LAG_MS later (the clock stands still).
    expect(indexed()).toBe(false);
    const res = await search('q=zeppelin');
    expect(res.status).toBe(200);
    expect(res.body.messages.map((m: any) => m.id)).toEqual([sent.id]);
    expect(indexed()).toBe(true);
  });

  it('GET /message/search finds a message once SEARCH_INDEX_LAG_MS has passed, indexed by the batch', async () => {
    const sent = await sendMessage(t, parent.token, { message: 'dirigible moored' });
    t.clock.advance(SEARCH_INDEX_LAG_MS);
    await t.server.scheduler.tick();
    expect(
      t.server.ctx.db.first('SELECT 1 AS x FROM messages_fts_docsize WHERE docid = ?', [sent.id]),
    ).toEqual({
      x: 1,
    });
    expect((await search('q=dirigible')).body.messages.map((m: any) => m.id)).toEqual([sent.id]);
  });

  it('GET /message/search matches the last word as typed when it is a whole word in the scope, else as a prefix', async () => {
    const owner = (await deviceToken(t, makeUser(t))).token;
    const ch = await makeChannel(t, owner);
    const sent = async (message: string) => (await sendMessage(t, ch.token, { message })).id;
    const h12 = await sent('host12 down');
    const h1 = await sent('host1 down');
    const h123 = await sent('host123 up');
    const g7 = await sent('gateway7 up');
    // Another user's whole word `gateway` does not turn this user's search exact (nor tells them it exists).
    await sendMessage(t, (await makeChannel(t, dev)).token, { message: 'gateway rebooted' });
    const found = async (q: string, extra = '') =>
      (await search(`q=${encodeURIComponent(q)}${extra}`, owner)).body.messages.map((m: any) => m.id);
    // Whole words: only messages with that word (before, `host1` also found host12 and host123).
    expect(await found('host1')).toEqual([h1]);
    expect(await found('host12')).toEqual([h12]);
    expect(await found('down host1')).toEqual([h1]);
    // A whole word that no message has together with the others: nothing, not the prefix's matches.
    expect(await found('up host1')).toEqual([]);
    // Not a word of any message in the scope: an unfinished word, matched as a prefix, newest first.
    expect(await found('host')).toEqual([h123, h1, h12]);
    expect(await found('down hos')).toEqual([h1, h12]);
    expect(await found('gateway')).toEqual([g7]);
    // Pages of a prefix search stay a prefix search (the choice never depends on since).
    expect(await found('host', '&limit=1')).toEqual([h123]);
    expect(await found('host', `&limit=1&since=${h123}`)).toEqual([h1]);
    expect(await found('host', `&limit=1&since=${h1}`)).toEqual([h12]);
    expect(await found('host1', `&limit=1&since=${h123}`)).toEqual([h1]);
  });

  it('GET /message/search no longer finds deleted messages', async () => {
    await t.request('DELETE', `/message/${ids.disk2}`, { token: dev });
    expect((await search('q=replaced')).body.messages).toEqual([]);
  });
});
