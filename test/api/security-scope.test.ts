import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { saveShot } from '../../server/features/monitors/kinds/browser/shots';
import {
  apiToken,
  deviceToken,
  makeChannel,
  makeUser,
  sendMessage,
  separateIdRanges,
} from '../helpers/factories';
import { fakeMonitorKind } from '../helpers/fake-monitor-kind';
import { mountedRoutes } from '../helpers/routes';
import { startTestServer, type TestServer } from '../helpers/test-server';

// Issue 21, item 2: a scoped API token acts only inside its scope, creating and moving channels
// included (docs/api.md "What an API token reaches"); a read-only token changes and triggers nothing.

let t: TestServer;

beforeAll(async () => {
  // A monitor kind whose routes are the engine's (the built-in kinds add theirs when they land).
  t = await startTestServer({ extraFeatures: [fakeMonitorKind().feature] });
});
afterAll(async () => {
  await t.close();
});

const NO_PARENT = { error: 'Bad Request', errorCode: 400, errorDescription: 'parentId: no such channel' };
const restricted = (what: string) => ({
  error: 'Forbidden',
  errorCode: 403,
  errorDescription: `an API token with a restricted scope cannot ${what}`,
});

/** A user with a channel in scope by id, one by tag, one outside, and tokens scoped to them. */
async function account() {
  const u = makeUser(t);
  const phone = await deviceToken(t, u, 'phone');
  const byId = await makeChannel(t, phone.token, { name: 'by id' });
  const byTag = await makeChannel(t, phone.token, { name: 'by tag', tags: ['ops'] });
  const outside = await makeChannel(t, phone.token, { name: 'outside', tags: ['private'] });
  const idScoped = await apiToken(t, phone, { access: 'write', appIds: [byId.id] });
  const tagScoped = await apiToken(t, phone, { access: 'write', appTags: ['ops'] });
  return { u, phone, byId, byTag, outside, idScoped, tagScoped };
}

async function channelNames(token: string): Promise<string[]> {
  const res = await t.request('GET', '/application', { token });
  expect(res.status).toBe(200);
  return res.body.map((c: { name: string }) => c.name).filter((n: string) => n !== 'Belfry');
}

async function channelOf(token: string, id: number): Promise<{ parentId?: number; tags: string[] }> {
  const res = await t.request('GET', '/application', { token });
  return res.body.find((c: { id: number }) => c.id === id);
}

describe('creating channels with a scoped API token', () => {
  test('POST /application answers 403 for a token scoped by ids and creates no channel', async () => {
    const a = await account();
    for (const json of [
      { name: 'escape' },
      { name: 'escape', parentId: a.byId.id },
      { name: 'x', tags: ['ops'] },
    ]) {
      const res = await t.request('POST', '/application', { token: a.idScoped.token, json });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(restricted('create a channel without one of its tags'));
      expect(res.text).not.toMatch(/"token":"A/);
    }
    expect(await channelNames(a.phone.token)).toEqual(['by id', 'by tag', 'outside']);
  });

  test('POST /application answers 403 for a tag-scoped token when the channel carries none of its tags', async () => {
    const a = await account();
    for (const json of [{ name: 'escape' }, { name: 'escape', tags: ['private'] }]) {
      const res = await t.request('POST', '/application', { token: a.tagScoped.token, json });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(restricted('create a channel without one of its tags'));
    }
    expect(await channelNames(a.phone.token)).toEqual(['by id', 'by tag', 'outside']);
  });

  test('POST /application creates a channel with one of the tags of a tag-scoped token, which then sees it', async () => {
    const a = await account();
    const res = await t.request('POST', '/application', {
      token: a.tagScoped.token,
      json: { name: 'new ops', tags: ['ops', 'extra'], parentId: a.byTag.id },
    });
    expect(res.status).toBe(200);
    expect(res.body.token).toMatch(/^A[A-Za-z0-9]{22}$/);
    expect(res.body.parentId).toBe(a.byTag.id);
    expect(await channelNames(a.tagScoped.token)).toEqual(['by tag', 'new ops']);
  });

  test('POST /application answers 400 for a parentId outside the token scope, as for no such channel', async () => {
    const a = await account();
    const res = await t.request('POST', '/application', {
      token: a.tagScoped.token,
      json: { name: 'under outside', tags: ['ops'], parentId: a.outside.id },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(NO_PARENT);
    expect(await channelNames(a.phone.token)).toEqual(['by id', 'by tag', 'outside']);
  });

  test('POST /application still creates any channel for a device, Basic and an unscoped API token', async () => {
    const a = await account();
    const wide = await apiToken(t, a.phone, { access: 'write' });
    const byDevice = await t.request('POST', '/application', {
      token: a.phone.token,
      json: { name: 'd', parentId: a.outside.id },
    });
    const byBasic = await t.request('POST', '/application', { basic: a.u, json: { name: 'b' } });
    const byWide = await t.request('POST', '/application', { token: wide.token, json: { name: 'w' } });
    expect([byDevice.status, byBasic.status, byWide.status]).toEqual([200, 200, 200]);
  });
});

describe('changing channels with a scoped API token', () => {
  test('PUT /application/{id} answers 400 when a scoped token moves an in-scope channel under an out-of-scope parent', async () => {
    const a = await account();
    for (const [token, id] of [
      [a.idScoped.token, a.byId.id],
      [a.tagScoped.token, a.byTag.id],
    ] as const) {
      const res = await t.request('PUT', `/application/${id}`, { token, json: { parentId: a.outside.id } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(NO_PARENT);
      expect((await channelOf(a.phone.token, id)).parentId).toBeUndefined();
    }
  });

  test('PUT /application/{id} answers 403 when the new tags would take the channel out of a tag scope', async () => {
    const a = await account();
    const res = await t.request('PUT', `/application/${a.byTag.id}`, {
      token: a.tagScoped.token,
      json: { tags: ['private'] },
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(restricted('take a channel out of its scope'));
    expect((await channelOf(a.phone.token, a.byTag.id)).tags).toEqual(['ops']);
    // Tags that keep it in scope, and any tags on a channel in scope by id, are fine.
    const keep = await t.request('PUT', `/application/${a.byTag.id}`, {
      token: a.tagScoped.token,
      json: { tags: ['ops', 'more'] },
    });
    expect(keep.status).toBe(200);
    const byId = await t.request('PUT', `/application/${a.byId.id}`, {
      token: a.idScoped.token,
      json: { tags: ['private'], parentId: null },
    });
    expect(byId.status).toBe(200);
    expect(byId.body.tags).toEqual(['private']);
  });

  test('PUT /application/{id} accepts a parent inside the token scope', async () => {
    const a = await account();
    const second = await makeChannel(t, a.phone.token, { name: 'second ops', tags: ['ops'] });
    const res = await t.request('PUT', `/application/${second.id}`, {
      token: a.tagScoped.token,
      json: { parentId: a.byTag.id },
    });
    expect(res.status).toBe(200);
    expect(res.body.parentId).toBe(a.byTag.id);
  });
});

describe('what a scoped API token sees of the tree', () => {
  test('GET and PUT /application show a scoped token no parentId when the parent is outside its scope', async () => {
    const a = await account();
    const moved = await t.request('PUT', `/application/${a.byId.id}`, {
      token: a.phone.token,
      json: { parentId: a.outside.id },
    });
    expect(moved.body.parentId).toBe(a.outside.id);
    const listed = await t.request('GET', '/application', { token: a.idScoped.token });
    expect(listed.body.map((c: { id: number }) => c.id)).toEqual([a.byId.id]);
    expect(listed.body[0]).not.toHaveProperty('parentId');
    const renamed = await t.request('PUT', `/application/${a.byId.id}`, {
      token: a.idScoped.token,
      json: { name: 'renamed' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).not.toHaveProperty('parentId');
    expect(JSON.stringify([listed.body, renamed.body])).not.toContain(String(a.outside.id));
    // A parent in scope is shown, and the owner's device still sees the whole tree.
    const tagged = await makeChannel(t, a.phone.token, {
      name: 'child of ops',
      tags: ['ops'],
      parentId: a.byTag.id,
    });
    const tagList = await t.request('GET', '/application', { token: a.tagScoped.token });
    expect(tagList.body.find((c: { id: number }) => c.id === tagged.id).parentId).toBe(a.byTag.id);
    expect((await channelOf(a.phone.token, a.byId.id)).parentId).toBe(a.outside.id);
  });
});

describe('read-only API tokens trigger nothing', () => {
  test('POST /application/{id}/delivery/test answers 403 for a read-only API token', async () => {
    const a = await account();
    const withAdapter = await makeChannel(t, a.phone.token, {
      name: 'delivering',
      deliveryConfig: { webhook: { enabled: true, url: 'https://example.com/hook' } },
    });
    const reader = await apiToken(t, a.phone, { access: 'read' });
    const res = await t.request('POST', `/application/${withAdapter.id}/delivery/test`, {
      token: reader.token,
      json: {},
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: 'Forbidden',
      errorCode: 403,
      errorDescription: 'token lacks the write permission',
    });
  });
});

/** Every row of every table (not the full-text index, which mirrors messages), for before/after checks. */
function dumpDb(skip: (table: string, column: string) => boolean = () => false): Record<string, unknown[]> {
  const db = t.server.ctx.db;
  const tables = db
    .all<{ name: string }>(
      // The search index is derived data: its tables and its watermark (a search indexes what waits first).
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%fts%' AND name <> 'search_index_state' ORDER BY name",
    )
    .map((r) => r.name);
  return Object.fromEntries(
    tables.map((table) => [
      table,
      db
        .all<Record<string, unknown>>(`SELECT * FROM ${table}`)
        .map((row) => Object.fromEntries(Object.entries(row).filter(([column]) => !skip(table, column)))),
    ]),
  );
}

/** A user's channel with a child, a second key, a webhook, a pending share and two messages; `ids` names them all. */
async function furnishedChannel(device: { token: string }, mark: string, tags: string[]) {
  const ok = (res: { status: number; text: string; body: any }, what: string) => {
    if (res.status !== 200) throw new Error(`${what}: ${res.status} ${res.text}`);
    return res.body;
  };
  const channel = await makeChannel(t, device.token, { name: `${mark} channel`, tags });
  const child = await makeChannel(t, device.token, { name: `${mark} child`, parentId: channel.id, tags });
  const key = ok(
    await t.request('POST', `/application/${channel.id}/token`, {
      token: device.token,
      json: { name: `${mark} key`, canRead: true, canWrite: false },
    }),
    'key',
  );
  const hook = ok(
    await t.request('POST', `/application/${channel.id}/webhook`, {
      token: device.token,
      json: { name: `${mark} hook` },
    }),
    'webhook',
  );
  const share = ok(
    await t.request('POST', `/application/${channel.id}/share`, {
      token: device.token,
      json: { email: `friend-${mark}@example.com`, permission: 'send' },
    }),
    'share',
  );
  const primaryKeyId = t.server.ctx.db.first<{ id: number }>(
    'SELECT id FROM channel_keys WHERE channel_id = ? AND is_primary = 1',
    [channel.id],
  )!.id;
  // Paused, so no check changes its row while the sweep runs.
  const monitor = ok(
    await t.request('POST', '/fake-monitor', {
      token: device.token,
      json: { appid: channel.id, name: `${mark} monitor`, target: `${mark} target`, paused: true },
    }),
    'monitor',
  );
  const browser = ok(
    await t.request('POST', '/browser-workflow', {
      token: device.token,
      json: {
        appid: channel.id,
        name: `${mark} browser`,
        paused: true,
        steps: [{ action: 'goto', url: `http://127.0.0.1:9/${mark}` }],
      },
    }),
    'browser workflow',
  );
  const owner = t.server.ctx.db.first<{ user_id: number }>('SELECT user_id FROM channels WHERE id = ?', [
    channel.id,
  ])!.user_id;
  saveShot(t.server.ctx, { userId: owner, monitorId: browser.id, jpeg: Buffer.from([0xff, 0xd8]) });
  const statusPage = ok(
    await t.request('POST', '/status-page', {
      token: device.token,
      json: { appid: channel.id, slug: `${mark}-status`, title: `${mark} status` },
    }),
    'status page',
  );
  // A verified host (marked passed in the store) and a port scan of it; `.invalid` fails at once, no traffic.
  const verifiedHost = ok(
    await t.request('POST', '/verified-host/start', {
      token: device.token,
      json: { host: `${mark}.invalid`, method: 'dns' },
    }),
    'verified host',
  );
  t.server.ctx.db.transaction(() =>
    t.server.ctx.db.run('UPDATE verified_hosts SET verified_at = 1 WHERE id = ?', [verifiedHost.id]),
  );
  const scan = ok(
    await t.request('POST', '/port-scan', {
      token: device.token,
      json: { appid: channel.id, host: `${mark}.invalid`, ports: '1', name: `${mark} scan` },
    }),
    'port scan',
  );
  // The scan of `.invalid` fails at once (no traffic); waited for by hand, as this also runs in a beforeAll.
  const deadline = Date.now() + 10_000;
  while (
    (await t.request('GET', `/port-scan/${scan.id}`, { token: device.token })).body.status !== 'failed'
  ) {
    if (Date.now() > deadline) throw new Error('the port scan of .invalid did not fail within 10 s');
    await new Promise((r) => setTimeout(r, 20));
  }
  const window = ok(
    await t.request('POST', '/maintenance-window', {
      token: device.token,
      json: { name: `${mark} window`, channelIds: [channel.id], schedule: FAR_WINDOW },
    }),
    'maintenance window',
  );
  const m1 = await sendMessage(t, channel.token, { message: `${mark} first` });
  const m2 = await sendMessage(t, child.token, { message: `${mark} second` });
  return {
    channel,
    child,
    key,
    ids: [
      channel.id,
      child.id,
      key.id,
      hook.id,
      share.id,
      m1.id,
      m2.id,
      primaryKeyId,
      monitor.id,
      browser.id,
      statusPage.id,
      window.id,
      verifiedHost.id,
      scan.id,
    ],
  };
}

/** A maintenance window's schedule that never starts while the sweeps run. */
const FAR_WINDOW = { type: 'once', startsAt: '2099-01-01T00:00:00Z', endsAt: '2099-01-02T00:00:00Z' };

interface SweepCall {
  route: string;
  /** The path as called: with an id, or with the query of references for the routes without one. */
  url: string;
  withId: boolean;
  status: number;
  text: string;
}

/** Calls every mounted route with each id in the path, then the id-less ones with `refs` in body and query. */
async function sweep(token: string | undefined, ids: number[], refs: Record<string, unknown>) {
  const calls: SweepCall[] = [];
  // The public webhook runs on its URL token, not on a credential; /stream would stay open.
  const skipped = new Set([
    'POST /webhook/:token',
    'GET /webhook/:token',
    'GET /stream',
    'POST /auth/logout',
  ]);
  const query = `?appId=${refs.appId}&q=zq&recursive=1&channelId=${refs.appId}&limit=200`;
  for (const { route, method, path, takesParams, fill } of mountedRoutes(t)) {
    if (skipped.has(route)) continue;
    const urls = takesParams ? ids.map((id) => fill(() => String(id))) : [path + query];
    for (const url of urls)
      for (const json of method === 'GET' ? [undefined] : [{}, refs]) {
        const res = await t.request(method, url, { ...(token ? { token } : {}), ...(json ? { json } : {}) });
        calls.push({ route, url, withId: takesParams, status: res.status, text: res.text });
      }
  }
  return calls;
}

/** The rows that belong to these channels: themselves, their children and everything hanging off them. */
function rowsOf(channelIds: number[]): Record<string, unknown[]> {
  const db = t.server.ctx.db;
  const list = channelIds.join(', ');
  const byChannel = (table: string) => db.all(`SELECT * FROM ${table} WHERE channel_id IN (${list})`);
  return {
    channels: db.all(`SELECT * FROM channels WHERE id IN (${list}) OR parent_id IN (${list}) ORDER BY id`),
    messages: byChannel('messages'),
    channel_keys: byChannel('channel_keys'),
    webhooks: byChannel('webhooks'),
    shares: byChannel('shares'),
    channel_reads: byChannel('channel_reads'),
    device_mutes: byChannel('device_mutes'),
    monitors: byChannel('monitors'),
    browser_shots: db.all(
      `SELECT * FROM browser_shots WHERE monitor_id IN (SELECT id FROM monitors WHERE channel_id IN (${list}))`,
    ),
    port_scans: byChannel('port_scans'),
    verified_hosts: db.all(
      `SELECT * FROM verified_hosts WHERE user_id IN (SELECT user_id FROM channels WHERE id IN (${list}))`,
    ),
    status_pages: byChannel('status_pages'),
    maintenance_windows: db.all(
      `SELECT * FROM maintenance_windows WHERE user_id IN (SELECT user_id FROM channels WHERE id IN (${list}))`,
    ),
    message_reads: db.all(
      `SELECT * FROM message_reads WHERE message_id IN (SELECT id FROM messages WHERE channel_id IN (${list}))`,
    ),
  };
}

describe('sweeps over every mounted route', () => {
  /** A mark of each attempt's own: a retry on CI starts afresh (its status page's slug is its own too). */
  let writeSweeps = 0;
  test('no route lets a scoped write API token change or reveal a channel of the same user outside its scope', async () => {
    separateIdRanges(t, 100_000 + 1_000_000 * writeSweeps++);
    const mark = `zqo${writeSweeps}`; // zqo1, zqo2 on a retry
    const u = makeUser(t);
    const phone = await deviceToken(t, u, 'phone');
    const inside = await makeChannel(t, phone.token, { name: 'inside', tags: ['ops'] });
    const outside = await furnishedChannel(phone, mark, ['private']);
    const scopedTokens = [
      await apiToken(t, phone, { access: 'write', appIds: [inside.id] }),
      await apiToken(t, phone, { access: 'write', appTags: ['ops'] }),
    ];
    const [channel, child] = [outside.channel.id, outside.child.id];
    const refs = {
      id: channel,
      ids: outside.ids,
      appid: channel,
      appId: channel,
      appIds: [channel, child],
      channelId: channel,
      channelIds: [channel, child],
      parentId: channel,
      shareId: outside.ids[4],
      name: 'by a scoped token',
      message: 'x',
      tags: ['ops'],
      email: 'someone@example.com',
      permission: 'send',
      schedule: FAR_WINDOW,
    };
    const before = rowsOf([channel, child]);
    for (const scoped of scopedTokens) {
      const calls = await sweep(scoped.token, outside.ids, refs);
      expect(calls.length).toBeGreaterThan(300);
      // With an id of the channel, its child, key, webhook, share or messages: never a success.
      expect(calls.filter((c) => c.withId && c.status < 400).map((c) => `${c.url}: ${c.status}`)).toEqual([]);
      // Nothing of the channel in any answer (every name and text of it carries the mark).
      expect(
        calls.filter((c) => c.text.includes(mark)).map((c) => `${c.url}: ${c.text.slice(0, 200)}`),
      ).toEqual([]);
      // The token still works: the sweep really ran with it to the end.
      expect(
        (await t.request('GET', `/application/${inside.id}/status`, { token: scoped.token })).status,
      ).toBe(200);
    }
    expect(rowsOf([channel, child])).toEqual(before);
  }, 120_000);
});

/**
 * The read-only sweep, one reader per test: each sweep is some 350 calls, and the three in one test ran
 * past its two minutes on a loaded CI machine. The fixture and the anonymous sweep are made once.
 */
describe('sweeps over every mounted route with a read-only credential', () => {
  let ids: number[];
  let refs: Record<string, unknown>;
  let readers: Record<string, string>;
  let credentialed: Set<string>;
  let before: ReturnType<typeof dumpDb>;

  beforeAll(async () => {
    separateIdRanges(t, 200_000);
    const u = makeUser(t);
    const phone = await deviceToken(t, u, 'phone');
    const laptop = await deviceToken(t, u, 'laptop');
    const owned = await furnishedChannel(phone, 'zqr', []);
    // An enabled adapter, so that a delivery test would really be attempted.
    await t.request('PUT', `/application/${owned.channel.id}`, {
      token: phone.token,
      json: { deliveryConfig: { webhook: { enabled: true, url: 'https://example.com/hook' } } },
    });
    const other = await apiToken(t, phone, { access: 'write' });
    const unscoped = await apiToken(t, phone, { access: 'read' });
    const scoped = await apiToken(t, phone, { access: 'read', appIds: [owned.channel.id] });
    readers = {
      'an unscoped read-only API token': unscoped.token,
      'a read-only API token scoped to the channel': scoped.token,
      // The read-only channel key (canRead, no canWrite).
      'a read-only channel key': owned.key.token as string,
    };
    ids = [...owned.ids, u.id, phone.id, laptop.id, other.id, unscoped.id, scoped.id];
    refs = {
      id: owned.channel.id,
      ids: owned.ids,
      appid: owned.channel.id,
      appId: owned.channel.id,
      channelIds: [owned.channel.id],
      parentId: owned.channel.id,
      name: 'by a reader',
      message: 'x',
      schedule: FAR_WINDOW,
      email: 'someone@example.com',
      permission: 'send',
      status: 'revoked',
    };
    // Routes that answer without credentials are public (they act on what the body names, never on the
    // caller's account); every other writing route must refuse a read-only credential outright.
    const anonymous = await sweep(undefined, ids, refs);
    credentialed = new Set(anonymous.filter((c) => c.status === 401).map((c) => c.route));
    // Bookkeeping of use (when a token or key was last used) is the only thing reading may write.
    before = dumpDb((_table, column) => column === 'last_used');
  }, 180_000);

  test.each([
    'an unscoped read-only API token',
    'a read-only API token scoped to the channel',
    'a read-only channel key',
  ])(
    'no route lets %s change anything',
    async (which) => {
      const calls = await sweep(readers[which], ids, refs);
      expect(calls.length).toBeGreaterThan(300);
      // The credential is valid: it reads.
      expect(calls.some((c) => c.route === 'GET /application' && c.status === 200)).toBe(true);
      const writes = calls.filter((c) => !c.route.startsWith('GET ') && credentialed.has(c.route));
      expect(writes.length).toBeGreaterThan(200);
      expect(
        writes.filter((c) => c.status !== 401 && c.status !== 403).map((c) => `${c.route}: ${c.status}`),
      ).toEqual([]);
      expect(dumpDb((_table, column) => column === 'last_used')).toEqual(before);
    },
    120_000,
  );
});
