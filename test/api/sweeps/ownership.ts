import { afterAll, beforeAll, expect, it } from 'vitest';
import { saveShot } from '../../../server/features/monitors/kinds/browser/shots';
import {
  apiToken,
  deviceToken,
  makeChannel,
  makeUser,
  sendMessage,
  separateIdRanges,
  sudo,
} from '../../helpers/factories';
import { fakeMonitorKind } from '../../helpers/fake-monitor-kind';
import { mountedRoutes } from '../../helpers/routes';
import { type ApiResponse, startTestServer, type TestServer } from '../../helpers/test-server';
import { sendMail } from '../email-inboxes-helpers';
import { eachBounded, expectShardsCoverEveryRoute, shardFromFile, shardRoutes } from './shards';

/**
 * "Someone else's resource", for every mounted route at once: user A owns one of each kind of thing
 * (devices, channels, a key, a webhook, a share, an API token, messages); user B, signed in with sudo
 * open but no admin rights, calls every route that takes an id with each of A's ids. No call may
 * succeed, and A's things must be unchanged afterwards.
 *
 * Split into shards (./shards.ts): `test/api/ownership.shard-<n>.test.ts` each call `ownershipSweep`, which
 * builds user A's things on a server of its own and has B call the shard's routes only.
 */

/** The body of a 200, or a thrown error naming the setup step that failed. */
function ok<T>(res: ApiResponse, what: string): T {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.body as T;
}

/** Every name and text of A's carries this, so any of it in an answer to B is a leak. */
const MARK = 'zqa';

/** How many of B's calls to one route may be in flight at once (a 2-core machine shared with other files). */
const IN_FLIGHT = 4;

/** Registers the ownership sweep of the shard named by the calling file (`ownership.shard-<n>.test.ts`). */
export function ownershipSweep(fileUrl: string): void {
  const shard = shardFromFile('ownership', fileUrl);
  let t: TestServer;
  beforeAll(async () => {
    // A monitor kind whose routes are the engine's (the built-in kinds add theirs when they land).
    // The SMTP listener, so A's inbox has an event that made a message (issue 18).
    t = await startTestServer({
      extraFeatures: [fakeMonitorKind().feature],
      config: { smtpListen: '127.0.0.1:0' },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('every mounted route is in exactly one ownership shard', () => {
    const routes = mountedRoutes(t);
    expect(routes.length).toBeGreaterThan(50);
    expectShardsCoverEveryRoute('ownership', routes);
  });

  it("no route lets a user read, change or delete another user's resources", () => sweep(t, shard), 180_000);
}

async function sweep(t: TestServer, shard: number): Promise<void> {
  // B first, so that A's ids are the newer ones in every table.
  const b = makeUser(t);
  const bDevice = await deviceToken(t, b, 'b');
  await sudo(t, bDevice, b.password);

  // Every table's next id starts in a range of its own, so one of A's ids names one thing only.
  separateIdRanges(t);

  const a = makeUser(t);
  const aDevice = await deviceToken(t, a, 'zqa phone');
  const aOther = await deviceToken(t, a, 'zqa laptop');
  // An adapter that never comes due during the sweep, so A's messages have outbox entries (issue 15).
  const parent = await makeChannel(t, aDevice.token, {
    name: 'zqa parent',
    deliveryConfig: { webhook: { url: 'https://zqa.example/hook', delaySec: 86_400 } },
  });
  const child = await makeChannel(t, aDevice.token, { name: 'zqa child', parentId: parent.id });
  const key: { id: number } = ok(
    await t.request('POST', `/application/${parent.id}/token`, {
      token: aDevice.token,
      json: { name: 'zqa key' },
    }),
    'channel key',
  );
  const hook: { id: number } = ok(
    await t.request('POST', `/application/${parent.id}/webhook`, {
      token: aDevice.token,
      json: { name: 'zqa hook' },
    }),
    'webhook',
  );
  const share: { id: number } = ok(
    await t.request('POST', `/application/${parent.id}/share`, {
      token: aDevice.token,
      json: { email: 'someone-else@example.com', permission: 'view' },
    }),
    'share',
  );
  const token = await apiToken(t, aDevice, { name: 'zqa token' });
  const heartbeat: { id: number; token: string } = ok(
    await t.request('POST', '/heartbeat', {
      token: aDevice.token,
      json: { appid: parent.id, name: 'zqa heartbeat', alertMessage: 'zqa down' },
    }),
    'heartbeat',
  );
  // A metric source with a series (fed through its public URL) and an alert on it (issue 17).
  const metricSource: { id: number; token: string } = ok(
    await t.request('POST', '/metric-source', {
      token: aDevice.token,
      json: { appid: parent.id, name: 'zqa metrics' },
    }),
    'metric source',
  );
  ok(
    await t.request('POST', `/metric/${metricSource.token}`, {
      json: { name: 'zqa_load', value: 1, tags: { host: 'zqa' } },
    }),
    'metric point',
  );
  const [series] = ok<{ id: number }[]>(
    await t.request('GET', `/metric-source/${metricSource.id}/metrics`, { token: aDevice.token }),
    'metric series',
  );
  const metricAlert: { id: number } = ok(
    await t.request('POST', `/metric-source/${metricSource.id}/alerts`, {
      token: aDevice.token,
      json: { metric: 'zqa_load', condition: 'above', threshold: 5, message: 'zqa high' },
    }),
    'metric alert',
  );
  // A web script with an issue (fed through its public URL) and a source map (issue 18).
  const webScript: { id: number; token: string } = ok(
    await t.request('POST', '/web-script', {
      token: aDevice.token,
      json: { appid: parent.id, name: 'zqa web', allowedOrigins: ['https://zqa.example'] },
    }),
    'web script',
  );
  ok(
    await t.request('POST', `/script/${webScript.token}`, {
      body: JSON.stringify({
        flushReason: 'error',
        events: [
          { type: 'error', message: 'zqa is not a function', stack: 'zqa@https://zqa.example/a.js:1:2' },
        ],
      }),
      headers: { 'Content-Type': 'text/plain' },
    }),
    'web script batch',
  );
  const [webIssue] = ok<{ id: number }[]>(
    await t.request('GET', `/web-script/${webScript.id}/issues`, { token: aDevice.token }),
    'web script issues',
  );
  const mapForm = new FormData();
  mapForm.set(
    'file',
    new Blob(['{"version":3,"sources":["zqa.ts"],"names":[],"mappings":"AAAA"}']),
    'a.js.map',
  );
  mapForm.set('url', 'https://zqa.example/a.js');
  const webMap: { id: number } = ok(
    await t.request('POST', `/web-script/${webScript.id}/sourcemaps`, {
      token: aDevice.token,
      body: mapForm,
    }),
    'web script source map',
  );
  const monitor: { id: number } = ok(
    await t.request('POST', '/fake-monitor', {
      token: aDevice.token,
      json: { appid: parent.id, name: 'zqa monitor', target: 'zqa target', secret: 'zqa secret' },
    }),
    'monitor',
  );
  // Paused: no check runs; its screenshot row is written directly (no browser needed for the sweep).
  const browser: { id: number } = ok(
    await t.request('POST', '/browser-workflow', {
      token: aDevice.token,
      json: {
        appid: parent.id,
        name: 'zqa browser',
        paused: true,
        variables: { apiToken: 'zqa secret' },
        steps: [{ action: 'goto', url: 'http://127.0.0.1:9/zqa' }],
      },
    }),
    'browser workflow',
  );
  const shotKey = saveShot(t.server.ctx, {
    userId: a.id,
    monitorId: browser.id,
    jpeg: Buffer.from([0xff, 0xd8, 0xff, 0xd9]),
  })!;
  // A verified host (the proof marked passed in the store: this sweep is about access, not proofs) and a
  // port scan of it; `.invalid` never resolves, so the scan fails at once without any traffic.
  const verifiedHost: { id: number } = ok(
    await t.request('POST', '/verified-host/start', {
      token: aDevice.token,
      json: { host: 'zqa.invalid', method: 'dns' },
    }),
    'verified host',
  );
  t.server.ctx.db.transaction(() =>
    t.server.ctx.db.run('UPDATE verified_hosts SET verified_at = 1 WHERE id = ?', [verifiedHost.id]),
  );
  const scan: { id: number } = ok(
    await t.request('POST', '/port-scan', {
      token: aDevice.token,
      json: { appid: parent.id, host: 'zqa.invalid', ports: '1', name: 'zqa scan', notes: 'zqa notes' },
    }),
    'port scan',
  );
  await expect
    .poll(async () => (await t.request('GET', `/port-scan/${scan.id}`, { token: aDevice.token })).body.status)
    .toBe('failed');
  const statusPage: { id: number; slug: string } = ok(
    await t.request('POST', '/status-page', {
      token: aDevice.token,
      json: { appid: parent.id, slug: 'zqa-status', title: 'zqa status' },
    }),
    'status page',
  );
  ok(
    await t.request('POST', `/status/${statusPage.slug}/subscribe`, {
      json: { email: 'zqa-reader@example.com' },
    }),
    'subscriber',
  );
  const subscriberId = t.server.ctx.db.first<{ id: number }>(
    'SELECT id FROM status_subscribers WHERE page_id = ?',
    [statusPage.id],
  )!.id;
  const window: { id: number } = ok(
    await t.request('POST', '/maintenance-window', {
      token: aDevice.token,
      json: {
        name: 'zqa window',
        channelIds: [parent.id],
        monitors: [{ kind: 'heartbeat', id: heartbeat.id }],
        schedule: { type: 'once', startsAt: '2099-01-01T00:00:00Z', endsAt: '2099-01-02T00:00:00Z' },
      },
    }),
    'maintenance window',
  );
  const m1 = await sendMessage(t, parent.token, { message: 'zqa first' });
  const m2 = await sendMessage(t, child.token, { message: 'zqa second' });
  // A pending question (issue 16), with a follow-up and a callback secret B must never see or change.
  const question: { id: number; messageId: number } = ok(
    await t.request('POST', '/ask', {
      token: parent.token,
      json: {
        question: 'zqa question?',
        options: ['zqa yes', 'zqa no'],
        callbackUrl: 'http://127.0.0.1:9/zqa',
        callbackSecret: 'zqa secret',
        next: { 'zqa yes': { question: 'zqa follow-up?' } },
      },
    }),
    'question',
  );
  // The webhook router (issue 17): a rule and an event that made a message (user-level records).
  const router: { token: string } = ok(
    await t.request('GET', '/webhook-router', { token: aDevice.token }),
    'router',
  );
  const routerRule: { id: number } = ok(
    await t.request('POST', '/webhook-router/rule', {
      token: aDevice.token,
      json: { name: 'zqa rule', appid: parent.id, title: 'zqa routed' },
    }),
    'router rule',
  );
  const routed: { id: number; messageId: number } = ok(
    await t.request('POST', `/router/${router.token}/zqa`, { json: { zqa: 'payload' } }),
    'router event',
  );
  // An email inbox (issue 18) with a rule and a received mail that made a message.
  const inbox: { id: number; address: string } = ok(
    await t.request('POST', '/email-inbox', {
      token: aDevice.token,
      json: { appid: parent.id, name: 'zqa inbox', localPart: 'zqa-inbox' },
    }),
    'inbox',
  );
  const inboxRule: { id: number } = ok(
    await t.request('POST', `/email-inbox/${inbox.id}/rules`, {
      token: aDevice.token,
      json: { name: 'zqa mail rule', match: { subject: 'zqa' }, title: 'zqa {{subject}}' },
    }),
    'inbox rule',
  );
  await sendMail(t, { from: 'zqa@sender.example', to: inbox.address, subject: 'zqa mail', text: 'zqa body' });
  const mailEvents: { events: { id: number; messageId: number }[] } = ok(
    await t.request('GET', '/email-inbox/event', { token: aDevice.token }),
    'inbox events',
  );
  const mail = mailEvents.events[0]!;
  // An assistant thread (issue 19): a user-level record with its two messages.
  const thread: { threadId: number } = ok(
    await t.request('POST', '/assistant/chat', { token: aDevice.token, json: { message: 'zqa question' } }),
    'assistant thread',
  );
  const delivery: { deliveries: { id: number; messageId: number }[] } = ok(
    await t.request('GET', `/application/${parent.id}/deliveries`, { token: aDevice.token }),
    'deliveries',
  );
  // The channel's re-deliveries: m1's, and the failed scan's message (a source message like any other).
  delivery.deliveries = delivery.deliveries.filter((d) => d.messageId === m1.id);
  expect(delivery.deliveries).toHaveLength(1);
  const aIds = [
    a.id,
    aDevice.id,
    aOther.id,
    parent.id,
    child.id,
    key.id,
    hook.id,
    share.id,
    token.id,
    heartbeat.id,
    metricSource.id,
    series!.id,
    metricAlert.id,
    webScript.id,
    webIssue!.id,
    webMap.id,
    monitor.id,
    browser.id,
    verifiedHost.id,
    scan.id,
    statusPage.id,
    subscriberId,
    window.id,
    m1.id,
    m2.id,
    question.id,
    question.messageId,
    delivery.deliveries[0]!.id,
    routerRule.id,
    routed.id,
    routed.messageId,
    inbox.id,
    inboxRule.id,
    mail.id,
    mail.messageId,
    thread.threadId,
  ];

  // Ids B owns itself (its user, device, system channel, welcome messages) would answer 2xx rightly.
  const bOwn = new Set<number>([b.id, bDevice.id]);
  for (const c of ok<{ id: number }[]>(
    await t.request('GET', '/application', { token: bDevice.token }),
    'b channels',
  ))
    bOwn.add(c.id);
  const bMessages: { messages: { id: number }[] } = ok(
    await t.request('GET', '/message', { token: bDevice.token }),
    'b messages',
  );
  for (const m of bMessages.messages) bOwn.add(m.id);
  const ids = [...new Set(aIds)].filter((id) => !bOwn.has(id));
  expect(ids.length).toBeGreaterThan(5);

  const succeeded: string[] = [];
  const leaked: string[] = [];
  let calls = 0;
  let expected = 0;
  const routes = shardRoutes('ownership', shard, mountedRoutes(t));
  const idRoutes = routes.filter((r) => r.takesParams && r.path !== '/webhook/:token');
  expect(idRoutes.length).toBeGreaterThan(0);
  for (const { method, fill } of idRoutes) {
    const bodies = (id: number) =>
      method === 'GET' ? [undefined] : [{}, { name: 'taken by b', message: 'x', ids: [id] }];
    const tries = ids.flatMap((id) => bodies(id).map((json) => ({ path: fill(() => String(id)), json })));
    expected += ids.length * (method === 'GET' ? 1 : 2);
    await eachBounded(tries, IN_FLIGHT, async ({ path, json }) => {
      calls++;
      const res = await t.request(method, path, { token: bDevice.token, ...(json ? { json } : {}) });
      if (res.text.includes(MARK)) leaked.push(`${method} ${path}: ${res.text.slice(0, 200)}`);
      if (res.status < 400) succeeded.push(`${method} ${path} ${JSON.stringify(json ?? '')}: ${res.status}`);
    });
  }
  expect(succeeded).toEqual([]);

  // Routes without an id, given A's ids in the body and the query: whatever they answer, nothing of
  // A's may come back and nothing of A's may change (checked below).
  const refs = {
    id: parent.id,
    ids: [m1.id, m2.id],
    appId: parent.id,
    appIds: [parent.id, child.id],
    channelId: parent.id,
    channelIds: [parent.id, child.id],
    parentId: parent.id,
    shareId: share.id,
    appid: parent.id,
    workflowId: browser.id,
    name: 'b thing',
    message: 'b says',
    monitors: [{ kind: 'heartbeat', id: heartbeat.id }],
    schedule: { type: 'once', startsAt: '2099-01-01T00:00:00Z', endsAt: '2099-01-02T00:00:00Z' },
  };
  const query = `?appId=${parent.id}&q=first&recursive=1&channelId=${parent.id}&limit=100`;
  const sessionEnders = new Set(['POST /auth/logout', 'GET /stream']);
  for (const { route, method, path, takesParams } of routes) {
    if (takesParams || sessionEnders.has(route)) continue;
    calls++;
    expected++;
    const res = await t.request(method, path + query, {
      token: bDevice.token,
      ...(method === 'GET' ? {} : { json: refs }),
    });
    if (res.text.includes(MARK)) leaked.push(`${route}: ${res.text.slice(0, 200)}`);
  }
  // Every call of the shard was made (the shards together: more than 7000).
  expect(calls).toBe(expected);
  expect(leaked).toEqual([]);
  // B is still signed in: the sweep really ran as B to the end.
  expect((await t.request('GET', '/current/user', { token: bDevice.token })).status).toBe(200);

  // A's things are all still there and unchanged.
  const channels: { id: number; name: string }[] = ok(
    await t.request('GET', '/application', { token: aDevice.token }),
    'a channels',
  );
  expect(channels.filter((c) => c.id === parent.id || c.id === child.id).map((c) => c.name)).toEqual([
    'zqa parent',
    'zqa child',
  ]);
  const messages: { messages: { id: number; read?: boolean }[] } = ok(
    await t.request('GET', '/message', { token: aDevice.token }),
    'a messages',
  );
  expect(messages.messages.filter((m) => m.id === m1.id || m.id === m2.id)).toHaveLength(2);
  expect(messages.messages.some((m) => m.read)).toBe(false);
  // A's outbox entry is still queued: no read mark, test or config change of B's reached it.
  const after: { deliveries: { id: number; status: string }[] } = ok(
    await t.request('GET', `/application/${parent.id}/deliveries`, { token: aDevice.token }),
    'a deliveries',
  );
  expect(
    after.deliveries.filter((d) => d.id === delivery.deliveries[0]!.id).map((d) => [d.id, d.status]),
  ).toEqual([[delivery.deliveries[0]!.id, 'queued']]);
  const devices: { id: number; name: string }[] = ok(
    await t.request('GET', '/client', { token: aDevice.token }),
    'a devices',
  );
  expect(devices.map((d) => d.name).sort()).toEqual(['zqa laptop', 'zqa phone']);
  const scans: { id: number; name: string; notes: string; status: string }[] = ok(
    await t.request('GET', '/port-scan', { token: aDevice.token }),
    'a scans',
  );
  expect(scans.map((x) => [x.id, x.name, x.notes, x.status])).toEqual([
    [scan.id, 'zqa scan', 'zqa notes', 'failed'],
  ]);
  const hosts: { id: number; host: string }[] = ok(
    await t.request('GET', '/verified-host', { token: aDevice.token }),
    'a verified hosts',
  );
  expect(hosts.map((h) => [h.id, h.host])).toEqual([[verifiedHost.id, 'zqa.invalid']]);
  const windows: { id: number; name: string; channelIds: number[] }[] = ok(
    await t.request('GET', '/maintenance-window', { token: aDevice.token }),
    'a windows',
  );
  expect(windows.map((w) => [w.id, w.name, w.channelIds])).toEqual([[window.id, 'zqa window', [parent.id]]]);
  const keys: { id: number }[] = ok(
    await t.request('GET', `/application/${parent.id}/token`, { token: aDevice.token }),
    'a keys',
  );
  expect(keys.map((k) => k.id)).toContain(key.id);
  const hooks: { id: number; name: string }[] = ok(
    await t.request('GET', `/application/${parent.id}/webhook`, { token: aDevice.token }),
    'a webhooks',
  );
  expect(hooks.map((w) => w.name)).toEqual(['zqa hook']);
  const tokens: { id: number }[] = ok(
    await t.request('GET', '/api-token', { token: aDevice.token }),
    'a tokens',
  );
  expect(tokens.map((x) => x.id)).toContain(token.id);
  const shares: { id: number }[] = ok(
    await t.request('GET', `/application/${parent.id}/share`, { token: aDevice.token }),
    'a shares',
  );
  expect(shares.map((s) => s.id)).toContain(share.id);
  const q: { id: number; status: string; answer: unknown; expiresAt: string } = ok(
    await t.request('GET', `/ask-question/${question.id}`, { token: aDevice.token }),
    'a question',
  );
  expect([q.id, q.status, q.answer]).toEqual([question.id, 'pending', null]);
  const heartbeats: { id: number; name: string; status: string; token: string }[] = ok(
    await t.request('GET', '/heartbeat', { token: aDevice.token }),
    'a heartbeats',
  );
  expect(heartbeats.map((h) => [h.id, h.name, h.status])).toEqual([[heartbeat.id, 'zqa heartbeat', 'new']]);
  expect(heartbeats[0]!.token).toBe(
    `${heartbeat.token.slice(0, 3)}${'*'.repeat(16)}${heartbeat.token.slice(-4)}`,
  );
  const metricSources: { id: number; name: string; status: string }[] = ok(
    await t.request('GET', '/metric-source', { token: aDevice.token }),
    'a metric sources',
  );
  expect(metricSources.map((m) => [m.id, m.name, m.status])).toEqual([
    [metricSource.id, 'zqa metrics', 'ok'],
  ]);
  const metricSeries: { id: number; name: string; lastValue: number; unit: string }[] = ok(
    await t.request('GET', `/metric-source/${metricSource.id}/metrics`, { token: aDevice.token }),
    'a metric series',
  );
  expect(metricSeries.map((m) => [m.id, m.name, m.lastValue, m.unit])).toEqual([
    [series!.id, 'zqa_load', 1, ''],
  ]);
  const metricAlerts: { id: number; message: string; enabled: boolean }[] = ok(
    await t.request('GET', `/metric-source/${metricSource.id}/alerts`, { token: aDevice.token }),
    'a metric alerts',
  );
  expect(metricAlerts.map((m) => [m.id, m.message, m.enabled])).toEqual([[metricAlert.id, 'zqa high', true]]);
  const webScripts: { id: number; name: string; status: string; allowedOrigins: string[] }[] = ok(
    await t.request('GET', '/web-script', { token: aDevice.token }),
    'a web scripts',
  );
  expect(webScripts.map((w) => [w.id, w.name, w.status, w.allowedOrigins])).toEqual([
    [webScript.id, 'zqa web', 'issues', ['https://zqa.example']],
  ]);
  const webIssues: { id: number; status: string; count: number }[] = ok(
    await t.request('GET', `/web-script/${webScript.id}/issues?status=all`, { token: aDevice.token }),
    'a web script issues',
  );
  expect(webIssues.map((i) => [i.id, i.status, i.count])).toEqual([[webIssue!.id, 'unresolved', 1]]);
  const webMaps: { id: number }[] = ok(
    await t.request('GET', `/web-script/${webScript.id}/sourcemaps`, { token: aDevice.token }),
    'a web script maps',
  );
  expect(webMaps.map((m) => m.id)).toEqual([webMap.id]);
  const monitors: { id: number; name: string; paused: boolean }[] = ok(
    await t.request('GET', '/fake-monitor', { token: aDevice.token }),
    'a monitors',
  );
  expect(monitors.map((m) => [m.id, m.name, m.paused])).toEqual([[monitor.id, 'zqa monitor', false]]);
  const browsers: { id: number; name: string; paused: boolean }[] = ok(
    await t.request('GET', '/browser-workflow', { token: aDevice.token }),
    'a browser workflows',
  );
  expect(browsers.map((m) => [m.id, m.name, m.paused])).toEqual([[browser.id, 'zqa browser', true]]);
  // A's screenshot: B gets 404, A the JPEG
  expect((await t.request('GET', `/browser-shot/${shotKey}`, { token: bDevice.token })).status).toBe(404);
  expect((await t.request('GET', `/browser-shot/${shotKey}`, { token: aDevice.token })).status).toBe(200);
  const pages: { id: number; title: string; enabled: boolean }[] = ok(
    await t.request('GET', '/status-page', { token: aDevice.token }),
    'a status pages',
  );
  expect(pages.map((p) => [p.id, p.title, p.enabled])).toEqual([[statusPage.id, 'zqa status', true]]);
  const subscribers: { id: number }[] = ok(
    await t.request('GET', `/status-page/${statusPage.id}/subscribers`, { token: aDevice.token }),
    'a subscribers',
  );
  expect(subscribers.map((x) => x.id)).toEqual([subscriberId]);
  const rules: { id: number; name: string }[] = ok(
    await t.request('GET', '/webhook-router/rule', { token: aDevice.token }),
    'a router rules',
  );
  expect(rules.map((r) => [r.id, r.name])).toEqual([[routerRule.id, 'zqa rule']]);
  const routerEvents: { events: { id: number; messageId: number }[] } = ok(
    await t.request('GET', '/webhook-router/event', { token: aDevice.token }),
    'a router events',
  );
  expect(routerEvents.events.map((e) => [e.id, e.messageId])).toEqual([[routed.id, routed.messageId]]);
  const inboxes: { id: number; name: string; localPart: string }[] = ok(
    await t.request('GET', '/email-inbox', { token: aDevice.token }),
    'a inboxes',
  );
  expect(inboxes.map((x) => [x.id, x.name, x.localPart])).toEqual([[inbox.id, 'zqa inbox', 'zqa-inbox']]);
  const inboxRules: { id: number; name: string }[] = ok(
    await t.request('GET', `/email-inbox/${inbox.id}/rules`, { token: aDevice.token }),
    'a inbox rules',
  );
  expect(inboxRules.map((r) => [r.id, r.name])).toEqual([[inboxRule.id, 'zqa mail rule']]);
  const mailsAfter: { events: { id: number; messageId: number; matchedRuleId: number }[] } = ok(
    await t.request('GET', '/email-inbox/event', { token: aDevice.token }),
    'a inbox events',
  );
  expect(mailsAfter.events.map((e) => [e.id, e.messageId, e.matchedRuleId])).toEqual([
    [mail.id, mail.messageId, inboxRule.id],
  ]);
  const threadMessages: { role: string; content: string }[] = ok(
    await t.request('GET', `/assistant/threads/${thread.threadId}/messages`, { token: aDevice.token }),
    'a assistant messages',
  );
  expect(threadMessages.map((m) => m.role)).toEqual(['user', 'assistant']);
  expect(threadMessages[0]!.content).toBe('zqa question');
}
