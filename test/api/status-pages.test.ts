import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATUS_CACHE_MS } from '../../server/features/status-pages/cache';
import { setPlan } from '../../server/features/users/store';
import { apiToken, deviceToken, insertChannelKeyRow, makeChannel, makeUser } from '../helpers/factories';
import { type FakeKind, fakeMonitorKind } from '../helpers/fake-monitor-kind';
import { type FakeSmtp, startSmtp } from '../helpers/fake-smtp';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let smtp: FakeSmtp;
let fake: FakeKind;
/** The admin (business plan) and a free user. */
let dev: string;
let free: { id: number; token: string };

const SEC = 1000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const err = (status: number, errorDescription: string) => ({
  error: { 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict' }[status],
  errorCode: status,
  errorDescription,
});

beforeAll(async () => {
  smtp = await startSmtp();
  fake = fakeMonitorKind('fake-monitor');
  t = await startTestServer({ config: { smtpUrl: smtp.url }, extraFeatures: [fake.feature] });
  dev = (await deviceToken(t)).token;
  const u = makeUser(t);
  free = { id: u.id, token: (await deviceToken(t, u)).token };
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

let slugs = 0;
const slug = () => `page-${++slugs}`;

async function createPage(body: Record<string, unknown>, token = dev) {
  const res = await t.request('POST', '/status-page', { token, json: { slug: slug(), ...body } });
  if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body as Record<string, any> & { id: number; slug: string };
}

/** Moves the ManualClock and lets the one timer run what became due. */
async function advance(ms: number) {
  t.clock.advance(ms);
  await t.server.scheduler.tick();
}

async function heartbeat(appid: number, name: string, over: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/heartbeat', {
    token: dev,
    json: { appid, name, intervalSec: 30 * 86_400, graceSec: 0, ...over },
  });
  if (res.status !== 200) throw new Error(`heartbeat: ${res.status} ${res.text}`);
  return res.body as { id: number; token: string };
}

const pingHb = (token: string, suffix = '') => t.request('GET', `/heartbeat/ping/${token}${suffix}`);

/** Mail bodies decoded enough to read (quoted-printable soft breaks joined). */
function mails() {
  return smtp.mails.map((m) => {
    const [head = '', ...rest] = m.data.split('\r\n\r\n');
    // Folded header lines unfolded, quoted-printable soft breaks joined.
    const data = `${head.replace(/\r\n[ \t]+/g, ' ')}\r\n\r\n${rest.join('\r\n\r\n')}`
      .replace(/=\r\n/g, '')
      .replace(/=3D/g, '=');
    const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'mi').exec(data)?.[1];
    return {
      to: m.to.join(' '),
      subject: header('Subject') ?? '',
      data,
      unsub: header('List-Unsubscribe')?.trim(),
    };
  });
}
const linkIn = (data: string, path: string) =>
  new RegExp(`${t.url.replace(/[.:/]/g, (c) => `\\${c}`)}${path}\\?token=[A-Za-z0-9_.-]+`)
    .exec(data)![0]
    .slice(t.url.length);

describe('status page records', () => {
  it('POST /status-page creates a page with the defaults and its public url', async () => {
    const c = await makeChannel(t, dev);
    const res = await t.request('POST', '/status-page', {
      token: dev,
      json: { appid: c.id, slug: 'acme-status' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      appid: c.id,
      slug: 'acme-status',
      title: '',
      description: '',
      enabled: true,
      lang: 'en',
      brandingHidden: false,
      url: `${t.url}/status/acme-status`,
      createdAt: iso(t.clock.now()),
    });
    expect((await t.request('GET', `/status-page/${res.body.id}`, { token: dev })).body).toEqual(res.body);
    const list = await t.request('GET', '/status-page', { token: dev });
    expect(list.body.map((p: { slug: string }) => p.slug)).toContain('acme-status');
  });

  it('POST /status-page answers 400 with the field for every invalid value', async () => {
    const c = await makeChannel(t, dev);
    const other = await makeChannel(t, free.token);
    const cases: [Record<string, unknown>, string][] = [
      [{ slug: 'ok-slug' }, 'appid: Invalid input: expected number, received undefined'],
      [{ appid: c.id }, 'slug: 3-60 characters of a-z, 0-9 and -'],
      [{ appid: c.id, slug: 'ab' }, 'slug: 3-60 characters of a-z, 0-9 and -'],
      [{ appid: c.id, slug: 'Upper-Case' }, 'slug: 3-60 characters of a-z, 0-9 and -'],
      [{ appid: c.id, slug: 'under_score' }, 'slug: 3-60 characters of a-z, 0-9 and -'],
      [{ appid: c.id, slug: 'x'.repeat(61) }, 'slug: 3-60 characters of a-z, 0-9 and -'],
      [{ appid: c.id, slug: 'ok-slug', lang: 'de' }, 'lang: must be en or ru'],
      [
        { appid: c.id, slug: 'ok-slug', title: 'x'.repeat(201) },
        'title: Too big: expected string to have <=200 characters',
      ],
      [
        { appid: c.id, slug: 'ok-slug', description: 'x'.repeat(2001) },
        'description: Too big: expected string to have <=2000 characters',
      ],
      [
        { appid: c.id, slug: 'ok-slug', enabled: 'yes' },
        'enabled: Invalid input: expected boolean, received string',
      ],
      [{ appid: other.id, slug: 'ok-slug' }, 'appid: no such channel'],
      [{ appid: 999_999, slug: 'ok-slug' }, 'appid: no such channel'],
    ];
    for (const [json, text] of cases) {
      const res = await t.request('POST', '/status-page', { token: dev, json });
      expect([json, res.status, res.body]).toEqual([json, 400, err(400, text)]);
    }
    expect(
      (await t.request('GET', '/status-page', { token: dev })).body.some(
        (p: { slug: string }) => p.slug === 'ok-slug',
      ),
    ).toBe(false);
  });

  it('POST /status-page answers 400 for a channel shared with the caller, even with send', async () => {
    const owner = makeUser(t, { plan: 'pro' });
    const ownerDev = (await deviceToken(t, owner)).token;
    const c = await makeChannel(t, ownerDev);
    const recipient = makeUser(t, { plan: 'pro' });
    const recipientDev = (await deviceToken(t, recipient)).token;
    const share = await t.request('POST', `/application/${c.id}/share`, {
      token: ownerDev,
      json: { email: recipient.email, permission: 'send' },
    });
    expect(share.status).toBe(200);
    expect((await t.request('POST', `/share/${share.body.id}/accept`, { token: recipientDev })).status).toBe(
      200,
    );
    const res = await t.request('POST', '/status-page', {
      token: recipientDev,
      json: { appid: c.id, slug: slug() },
    });
    expect(res.body).toEqual(err(400, 'appid: no such channel'));
  });

  it('POST and PUT /status-page answer 409 when the slug is taken by any user', async () => {
    const mine = await createPage({ appid: (await makeChannel(t, dev)).id });
    const theirs = await createPage({ appid: (await makeChannel(t, free.token)).id }, free.token);
    const c = await makeChannel(t, dev);
    const res = await t.request('POST', '/status-page', {
      token: dev,
      json: { appid: c.id, slug: theirs.slug },
    });
    expect([res.status, res.body]).toEqual([409, err(409, 'slug: already taken')]);
    const put = await t.request('PUT', `/status-page/${mine.id}`, {
      token: dev,
      json: { slug: theirs.slug },
    });
    expect([put.status, put.body]).toEqual([409, err(409, 'slug: already taken')]);
    // Its own slug again is no conflict.
    const same = await t.request('PUT', `/status-page/${mine.id}`, { token: dev, json: { slug: mine.slug } });
    expect(same.status).toBe(200);
    await t.request('DELETE', `/status-page/${theirs.id}`, { token: free.token });
  });

  it('PUT /status-page/{id} changes only the fields sent; DELETE answers {} and the page is gone', async () => {
    const page = await createPage({
      appid: (await makeChannel(t, dev)).id,
      title: 'Acme',
      description: 'All of it',
    });
    const res = await t.request('PUT', `/status-page/${page.id}`, {
      token: dev,
      json: { lang: 'ru', enabled: false },
    });
    expect(res.body).toEqual({ ...page, lang: 'ru', enabled: false });
    const moved = await makeChannel(t, dev);
    const put = await t.request('PUT', `/status-page/${page.id}`, {
      token: dev,
      json: { appid: moved.id, slug: 'moved-page' },
    });
    expect(put.body).toEqual({
      ...page,
      lang: 'ru',
      enabled: false,
      appid: moved.id,
      slug: 'moved-page',
      url: `${t.url}/status/moved-page`,
    });
    expect(
      (await t.request('PUT', `/status-page/${page.id}`, { token: dev, json: { lang: 'fr' } })).body,
    ).toEqual(err(400, 'lang: must be en or ru'));
    expect((await t.request('DELETE', `/status-page/${page.id}`, { token: dev })).body).toEqual({});
    expect((await t.request('GET', `/status-page/${page.id}`, { token: dev })).body).toEqual(
      err(404, 'status page not found'),
    );
  });

  it("someone else's page is 404 on every management route; channel keys get 403, read-only tokens cannot write", async () => {
    const c = await makeChannel(t, dev);
    const page = await createPage({ appid: c.id });
    for (const [method, path] of [
      ['GET', `/status-page/${page.id}`],
      ['PUT', `/status-page/${page.id}`],
      ['DELETE', `/status-page/${page.id}`],
      ['GET', `/status-page/${page.id}/subscribers`],
      ['DELETE', `/status-page/${page.id}/subscribers/1`],
    ] as const) {
      const res = await t.request(method, path, {
        token: free.token,
        ...(method === 'PUT' ? { json: { title: 'mine now' } } : {}),
      });
      expect([path, res.status, res.body]).toEqual([path, 404, err(404, 'status page not found')]);
    }
    expect(
      (await t.request('GET', '/status-page', { token: free.token })).body.map((p: { id: number }) => p.id),
    ).not.toContain(page.id);
    const key = insertChannelKeyRow(t, c.id, { canRead: true });
    expect((await t.request('GET', '/status-page', { token: key })).status).toBe(403);
    const reader = await apiToken(t, { token: dev }, { access: 'read' });
    expect((await t.request('GET', `/status-page/${page.id}`, { token: reader.token })).status).toBe(200);
    expect(
      (await t.request('PUT', `/status-page/${page.id}`, { token: reader.token, json: { title: 'x' } }))
        .status,
    ).toBe(403);
    // A scoped API token sees only pages of channels in its scope, and cannot create one outside it.
    const other = await makeChannel(t, dev);
    const scoped = await apiToken(t, { token: dev }, { access: 'write', appIds: [other.id] });
    expect((await t.request('GET', `/status-page/${page.id}`, { token: scoped.token })).status).toBe(404);
    const out = await t.request('POST', '/status-page', {
      token: scoped.token,
      json: { appid: c.id, slug: slug() },
    });
    expect(out.body).toEqual(err(400, 'appid: no such channel'));
  });

  it('brandingHidden needs pro or business; a downgraded page keeps it but shows the branding', async () => {
    const c = await makeChannel(t, free.token);
    const res = await t.request('POST', '/status-page', {
      token: free.token,
      json: { appid: c.id, slug: slug(), brandingHidden: true },
    });
    expect([res.status, res.body]).toEqual([403, err(403, 'brandingHidden needs the pro or business plan')]);
    const pro = makeUser(t, { plan: 'pro' });
    const proDev = (await deviceToken(t, pro)).token;
    const page = await createPage({ appid: (await makeChannel(t, proDev)).id, brandingHidden: true }, proDev);
    expect(page.brandingHidden).toBe(true);
    expect((await t.request('GET', `/status/${page.slug}/summary`)).body.brandingHidden).toBe(true);
    expect((await t.request('GET', `/status/${page.slug}`)).text).not.toContain('Powered by Belfry');
    t.server.ctx.db.transaction(() => setPlan(t.server.ctx.db, pro.id, 'free'));
    expect((await t.request('GET', `/status-page/${page.id}`, { token: proDev })).body.brandingHidden).toBe(
      true,
    );
    expect((await t.request('GET', `/status/${page.slug}/summary`)).body.brandingHidden).toBe(false);
    expect((await t.request('GET', `/status/${page.slug}`)).text).toContain('Powered by Belfry');
    // Kept through other changes, but not turned on again on free.
    const put = await t.request('PUT', `/status-page/${page.id}`, {
      token: proDev,
      json: { title: 'still hidden' },
    });
    expect(put.body.brandingHidden).toBe(true);
    await t.request('PUT', `/status-page/${page.id}`, { token: proDev, json: { brandingHidden: false } });
    const again = await t.request('PUT', `/status-page/${page.id}`, {
      token: proDev,
      json: { brandingHidden: true },
    });
    expect([again.status, again.body]).toEqual([
      403,
      err(403, 'brandingHidden needs the pro or business plan'),
    ]);
  });

  it('POST /status-page answers 403 at the plan limit', async () => {
    const u = makeUser(t);
    const d = (await deviceToken(t, u)).token;
    const c = await makeChannel(t, d);
    await createPage({ appid: c.id }, d);
    const res = await t.request('POST', '/status-page', { token: d, json: { appid: c.id, slug: slug() } });
    expect([res.status, res.body]).toEqual([
      403,
      err(403, 'plan limit reached: at most 1 status pages on the free plan'),
    ]);
  });

  it('deleting the channel deletes its pages', async () => {
    const c = await makeChannel(t, dev);
    const page = await createPage({ appid: c.id });
    expect((await t.request('DELETE', `/application/${c.id}`, { token: dev })).status).toBe(200);
    expect((await t.request('GET', `/status-page/${page.id}`, { token: dev })).status).toBe(404);
    expect((await t.request('GET', `/status/${page.slug}/summary`)).status).toBe(404);
  });
});

describe('GET /status/{slug}/summary and the HTML page', () => {
  /** P (the page's channel) with a child C; services on both, plus things that must not show. */
  async function furnished() {
    const p = await makeChannel(t, dev, { name: 'public parent' });
    const c = await makeChannel(t, dev, { name: 'public child', parentId: p.id });
    const elsewhere = await makeChannel(t, dev);
    const page = await createPage({ appid: p.id, title: 'Acme', description: 'Acme services' });
    const api = await heartbeat(p.id, 'API');
    const backups = await heartbeat(c.id, 'Backups');
    await heartbeat(p.id, 'Paused job', { paused: true });
    await heartbeat(elsewhere.id, 'Not on the page');
    fake.set('web-ok', { ok: true });
    const web = await t.request('POST', '/fake-monitor', {
      token: dev,
      json: { appid: c.id, name: 'Web', target: 'web-ok', intervalSec: 3600 },
    });
    expect(web.status).toBe(200);
    return { p, c, page, api, backups, web: web.body as { id: number } };
  }

  it('answers services, uptimes, bars, incidents and overall from the real transitions', async () => {
    const { page, api, backups } = await furnished();
    const summary = () => t.request('GET', `/status/${page.slug}/summary`);
    // The heartbeats are new (pending); the monitor's first check ran on create; no time has passed.
    let res = await summary();
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.body.overall).toBe('operational');
    expect(res.body.overallUptime90d).toBeNull();
    expect(res.body.services.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
      ['API', 'pending'],
      ['Backups', 'pending'],
      ['Web', 'up'],
    ]);

    await advance(HOUR);
    expect((await pingHb(api.token)).status).toBe(200);
    expect((await pingHb(backups.token)).status).toBe(200);
    await advance(2 * DAY);
    const backupsDown = t.clock.now();
    await pingHb(backups.token, '/fail');
    await advance(30 * 60 * SEC);
    const backupsUp = t.clock.now();
    await pingHb(backups.token);
    await advance(HOUR);
    const apiDown = t.clock.now();
    await pingHb(api.token, '/fail');
    await advance(10 * 60 * SEC);

    res = await summary();
    expect(res.status).toBe(200);
    // API: 49.5 h up, 10 min down; Backups: 48 h + 70 min up, 30 min down; Web: up only.
    const apiUptime = Math.floor((178_200 * 100_000) / 178_800) / 1000;
    const backupsUptime = Math.floor((2_950 * 100_000) / 2_980) / 1000;
    expect([apiUptime, backupsUptime]).toEqual([99.664, 98.993]);
    const { services, ...rest } = res.body;
    expect(rest).toEqual({
      slug: page.slug,
      title: 'Acme',
      description: 'Acme services',
      lang: 'en',
      generatedAt: iso(t.clock.now()),
      brandingHidden: false,
      overall: 'degraded',
      overallUptime90d: Math.floor((99_664 + 98_993 + 100_000) / 3) / 1000,
      incidents: [
        { title: 'API is down', status: 'open', startedAt: iso(apiDown) },
        {
          title: 'Backups is down',
          status: 'resolved',
          startedAt: iso(backupsDown),
          resolvedAt: iso(backupsUp),
        },
      ],
      maintenance: [],
    });
    expect(services.map((s: any) => [s.name, s.status, s.uptime90d, s.days.length])).toEqual([
      ['API', 'down', 99.664, 90],
      ['Backups', 'up', 98.993, 90],
      ['Web', 'up', 100, 90],
    ]);
    const today = iso(t.clock.now()).slice(0, 10);
    const backupsDay = services[1].days.find(
      (d: { date: string }) => d.date === iso(backupsDown).slice(0, 10),
    );
    expect(services[1].days[89].date).toBe(today);
    expect(backupsDay.status).toBe('down');
    expect(backupsDay.uptime).toBeLessThan(100);
    expect(Object.keys(backupsDay).sort()).toEqual(['date', 'status', 'uptime']);
    // Days before the first ping have no data.
    expect(services[0].days[0]).toEqual({ date: expect.any(String), uptime: null, status: 'none' });

    // Every judged service down: outage.
    await pingHb(backups.token, '/fail');
    fake.set('web-ok', { ok: false, error: 'refused' });
    await advance(HOUR);
    res = await summary();
    expect(res.body.services.map((s: { status: string }) => s.status)).toEqual(['down', 'down', 'down']);
    expect(res.body.overall).toBe('outage');
    expect(res.body.incidents.map((i: { title: string; status: string }) => [i.title, i.status])).toEqual([
      ['Web is down', 'open'],
      ['Backups is down', 'open'],
      ['API is down', 'open'],
      ['Backups is down', 'resolved'],
    ]);
    fake.set('web-ok', { ok: true });
  });

  it('answers 404 for an unknown or disabled slug: JSON for the summary, an HTML page for the page', async () => {
    const page = await createPage({ appid: (await makeChannel(t, dev)).id, enabled: false });
    for (const s of [page.slug, 'no-such-page']) {
      const res = await t.request('GET', `/status/${s}/summary`);
      expect([res.status, res.body]).toEqual([404, err(404, 'status page not found')]);
      const html = await t.request('GET', `/status/${s}`);
      expect(html.status).toBe(404);
      expect(html.headers.get('content-type')).toMatch(/^text\/html/);
      expect(html.text).toContain('<h1>Status page not found</h1>');
    }
    await t.request('PUT', `/status-page/${page.id}`, { token: dev, json: { enabled: true } });
    expect((await t.request('GET', `/status/${page.slug}`)).status).toBe(200);
  });

  it('renders one section per service with 90 bars, the banner, incidents and the subscribe form, escaped', async () => {
    const p = await makeChannel(t, dev);
    const page = await createPage({
      appid: p.id,
      title: '<b>Acme & "Co"</b>',
      description: "<img src=x onerror='x'>",
    });
    const hb = await heartbeat(p.id, '<script>alert(1)</script>');
    await heartbeat(p.id, 'Second');
    await pingHb(hb.token);
    await advance(HOUR);
    await pingHb(hb.token, '/fail');
    await advance(60 * SEC);
    const res = await t.request('GET', `/status/${page.slug}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'",
    );
    const html = res.text;
    expect(html).toMatch(/^<!doctype html><html lang="en">/);
    expect(html).toContain('<meta http-equiv="refresh" content="60">');
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(html).toContain('@media (prefers-color-scheme:dark)');
    // The only judged service is down (the other is pending): a major outage.
    expect(html).toContain('<body data-overall="outage">');
    expect(html).toContain('Major outage');
    expect(html).not.toMatch(/<script|<img|onerror='/i);
    expect(html).toContain('<h1>&lt;b&gt;Acme &amp; &quot;Co&quot;&lt;/b&gt;</h1>');
    expect(html).toContain('&lt;img src=x onerror=&#39;x&#39;&gt;');
    const sections = html.match(/<section data-status="[a-z]+">.*?<\/section>/g)!;
    expect(sections.map((s) => /data-status="([a-z]+)"/.exec(s)![1])).toEqual(['down', 'pending']);
    expect(sections[0]).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    for (const s of sections)
      expect(s.match(/<li class="[a-z]+" title="\d{4}-\d{2}-\d{2}: [^"]+"><\/li>/g)).toHaveLength(90);
    const today = iso(t.clock.now()).slice(0, 10);
    expect(sections[0]).toMatch(new RegExp(`<li class="down" title="${today}: \\d+(\\.\\d+)?%"></li></ol>`));
    expect(html).toContain('<strong>&lt;script&gt;alert(1)&lt;/script&gt; is down</strong>');
    expect(html).toMatch(
      new RegExp(
        `<form method="post" action="/status/${page.slug}/subscribe" enctype="application/x-www-form-urlencoded">`,
      ),
    );
    expect(html).toContain('<input id="email" type="email" name="email"');
    expect(html).toContain('<footer>Powered by Belfry</footer>');
  });

  it('renders the Russian texts for lang ru and the banner of each overall state', async () => {
    const p = await makeChannel(t, dev);
    const page = await createPage({ appid: p.id, lang: 'ru', title: 'Статус' });
    let html = (await t.request('GET', `/status/${page.slug}`)).text;
    expect(html).toMatch(/^<!doctype html><html lang="ru">/);
    expect(html).toContain('<body data-overall="operational">');
    expect(html).toContain('Все системы работают');
    const hb = await heartbeat(p.id, 'Сервис');
    await pingHb(hb.token, '/fail');
    html = (await t.request('GET', `/status/${page.slug}`)).text;
    expect(html).toContain('<body data-overall="outage">');
    expect(html).toContain('Серьёзный сбой');
    expect(html).toContain('Подписаться');
    await heartbeat(p.id, 'Второй').then((h) => pingHb(h.token));
    html = (await t.request('GET', `/status/${page.slug}`)).text;
    expect(html).toContain('Частичный сбой');
  });
});

describe('subscriptions and incident mails', () => {
  async function subscribed(title: string) {
    const p = await makeChannel(t, dev);
    const page = await createPage({ appid: p.id, title });
    return { p, page };
  }
  const sub = (s: string, email: unknown, headers: Record<string, string> = {}) =>
    t.request('POST', `/status/${s}/subscribe`, { json: { email }, headers });
  const mailsTo = (to: string) => mails().filter((m) => m.to.includes(to));

  it('POST /status/{slug}/subscribe answers {ok: true} and mails a confirmation link; verify confirms it', async () => {
    const { page } = await subscribed('Verify');
    const res = await sub(page.slug, 'Reader@Example.com');
    expect([res.status, res.body]).toEqual([200, { ok: true }]);
    await expect.poll(() => mailsTo('reader@example.com').length).toBe(1);
    const mail = mailsTo('reader@example.com')[0]!;
    expect(mail.subject).toBe('[Verify] Confirm your subscription');
    const list = await t.request('GET', `/status-page/${page.id}/subscribers`, { token: dev });
    expect(list.body).toEqual([
      {
        id: expect.any(Number),
        email: 'reader@example.com',
        confirmed: false,
        createdAt: iso(t.clock.now()),
      },
    ]);
    const verify = await t.request('GET', linkIn(mail.data, '/status-subscribe/verify'));
    expect(verify.status).toBe(200);
    expect(verify.headers.get('content-type')).toMatch(/^text\/html/);
    expect(verify.text).toContain('<h1>Subscription confirmed</h1>');
    const again = await t.request('GET', linkIn(mail.data, '/status-subscribe/verify'), {
      headers: { Accept: 'application/json' },
    });
    expect(again.body).toEqual({ ok: true });
    expect(
      (await t.request('GET', `/status-page/${page.id}/subscribers`, { token: dev })).body[0].confirmed,
    ).toBe(true);
    // Already confirmed: the same answer, no mail.
    expect((await sub(page.slug, 'reader@example.com')).body).toEqual({ ok: true });
    await advance(SEC);
    expect(mailsTo('reader@example.com')).toHaveLength(1);
  });

  it('POST /status/{slug}/subscribe answers 400 for a bad address and 404 for an unknown page', async () => {
    const { page } = await subscribed('Bad');
    for (const email of ['not-an-address', '', 42, undefined]) {
      const res = await sub(page.slug, email);
      expect([email, res.status, res.body]).toEqual([email, 400, err(400, 'email: not a valid address')]);
    }
    expect((await sub('no-such-page', 'a@example.com')).body).toEqual(err(404, 'status page not found'));
  });

  it('the subscribe form posts urlencoded and answers HTML pages', async () => {
    const { page } = await subscribed('Form');
    const res = await t.request('POST', `/status/${page.slug}/subscribe`, {
      form: { email: 'form@example.com' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toContain('<h1>Check your mail</h1>');
    await expect.poll(() => mailsTo('form@example.com').length).toBe(1);
    const bad = await t.request('POST', `/status/${page.slug}/subscribe`, { form: { email: 'nope' } });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('email: not a valid address');
  });

  it('sends at most 5 confirmation mails per address an hour, answering the same', async () => {
    const { page } = await subscribed('Limit');
    for (let i = 0; i < 7; i++)
      expect((await sub(page.slug, 'flood@example.com')).body).toEqual({ ok: true });
    await expect.poll(() => mailsTo('flood@example.com').length).toBe(5);
    await advance(SEC);
    expect(mailsTo('flood@example.com')).toHaveLength(5);
    await advance(HOUR);
    await sub(page.slug, 'flood@example.com');
    await expect.poll(() => mailsTo('flood@example.com').length).toBe(6);
  });

  it('verify and unsub answer 400 for a bad or expired link (HTML, or the error body for JSON)', async () => {
    for (const path of ['/status-subscribe/verify', '/status-subscribe/unsub'])
      for (const q of ['', '?token=garbage', '?token=eyJzIjoxfQ.bad']) {
        const html = await t.request('GET', path + q);
        expect([path + q, html.status]).toEqual([path + q, 400]);
        expect(html.text).toContain('This link does not work');
        const json = await t.request('GET', path + q, { headers: { Accept: 'application/json' } });
        expect(json.body).toEqual(err(400, 'token: invalid or expired link'));
      }
    const { page } = await subscribed('Expiry');
    await sub(page.slug, 'late@example.com');
    await expect.poll(() => mailsTo('late@example.com').length).toBe(1);
    const before = await t.request('GET', `/status-page/${page.id}/subscribers`, { token: dev });
    expect(before.body.map((x: { email: string }) => x.email)).toEqual(['late@example.com']);
    await advance(7 * DAY + SEC);
    const res = await t.request(
      'GET',
      linkIn(mailsTo('late@example.com')[0]!.data, '/status-subscribe/verify'),
      {
        headers: { Accept: 'application/json' },
      },
    );
    expect(res.body).toEqual(err(400, 'token: invalid or expired link'));
    // The retention job (run by the scheduler within the week) removed the subscriber whose link expired unused.
    await t.server.scheduler.runNow('retention');
    expect((await t.request('GET', `/status-page/${page.id}/subscribers`, { token: dev })).body).toEqual([]);
  });

  it('mails confirmed subscribers once per incident start and resolution, with List-Unsubscribe', async () => {
    const { p, page } = await subscribed('Acme');
    // Addresses of this page's own (a retried test starts afresh instead of counting earlier mails).
    const fan = `fan.${page.slug}@example.com`;
    const unconfirmed = `unconfirmed.${page.slug}@example.com`;
    const child = await makeChannel(t, dev, { parentId: p.id });
    const hb = await heartbeat(child.id, 'Backups');
    await pingHb(hb.token);
    await sub(page.slug, fan);
    await sub(page.slug, unconfirmed);
    await expect.poll(() => mailsTo(fan).length).toBe(1);
    // Both confirmations sent before the clock moves an hour on.
    await expect.poll(() => mailsTo(unconfirmed).length).toBe(1);
    await t.request('GET', linkIn(mailsTo(fan)[0]!.data, '/status-subscribe/verify'));
    await advance(HOUR);
    await pingHb(hb.token, '/fail');
    await pingHb(hb.token, '/fail'); // still down: no second incident
    // Sent before the clock moves on (auth-mail.test.ts: an attempt outliving its lease is not repeated).
    await expect.poll(() => mailsTo(fan).length).toBe(2);
    await advance(30 * 60 * SEC + 5 * SEC);
    await pingHb(hb.token);
    await expect.poll(() => mailsTo(fan).length).toBe(3);
    await advance(SEC);
    const [, down, up] = mailsTo(fan);
    expect(down!.subject).toBe('[Acme] Backups is down');
    expect(up!.subject).toBe('[Acme] Backups recovered after 30m 5s');
    for (const m of [down!, up!]) {
      expect(m.data).toContain(`Status page: ${t.url}/status/${page.slug}`);
      const unsub = linkIn(m.data, '/status-subscribe/unsub');
      expect(m.unsub).toBe(`<${t.url}${unsub}>`);
    }
    expect(mailsTo(unconfirmed)).toHaveLength(1);

    // The List-Unsubscribe link ends the subscription (and may be opened again).
    const unsub = linkIn(down!.data, '/status-subscribe/unsub');
    for (let i = 0; i < 2; i++) {
      const res = await t.request('GET', unsub);
      expect(res.status).toBe(200);
      expect(res.text).toContain('<h1>Unsubscribed</h1>');
    }
    expect(
      (await t.request('GET', `/status-page/${page.id}/subscribers`, { token: dev })).body.map(
        (s: { email: string }) => s.email,
      ),
    ).toEqual([unconfirmed]);
    await pingHb(hb.token, '/fail');
    await advance(SEC);
    expect(mailsTo(fan)).toHaveLength(3);
    await pingHb(hb.token);
  });

  it('a monitor going down mails once, not again when it comes back down after an unknown gap', async () => {
    const { p, page } = await subscribed('Mon');
    fake.set('flaky', { ok: true });
    const m = await t.request('POST', '/fake-monitor', {
      token: dev,
      json: { appid: p.id, name: 'Site', target: 'flaky', intervalSec: 60 },
    });
    expect(m.status).toBe(200);
    await sub(page.slug, 'mon@example.com');
    await expect.poll(() => mailsTo('mon@example.com').length).toBe(1);
    await t.request('GET', linkIn(mailsTo('mon@example.com')[0]!.data, '/status-subscribe/verify'));
    fake.set('flaky', { ok: false, error: 'refused' });
    await advance(60 * SEC);
    await expect.poll(() => mailsTo('mon@example.com').length).toBe(2);
    expect(mailsTo('mon@example.com')[1]!.subject).toBe('[Mon] Site is down');
    // The host sleeps: the monitor is unknown until its next check finds it still down.
    t.clock.advance(5 * SEC);
    const from = t.clock.now();
    t.clock.advance(10 * 60 * SEC);
    t.server.ctx.bus.emit('clock:gap', { from, to: t.clock.now(), reason: 'sleep' });
    await advance(60 * SEC);
    expect((await t.request('GET', `/fake-monitor/${m.body.id}`, { token: dev })).body.status).toBe('down');
    const since = t.server.ctx.db.all<{ status: string }>(
      'SELECT status FROM history_intervals WHERE kind = ? AND source_id = ? AND start_at >= ? ORDER BY start_at, id',
      ['fake-monitor', m.body.id, from],
    );
    expect(since.map((x) => x.status)).toContain('unknown');
    expect(since.at(-1)!.status).toBe('down');
    const summary = await t.request('GET', `/status/${page.slug}/summary`);
    expect(summary.body.incidents.map((i: { status: string }) => i.status)).toEqual(['open']);
    fake.set('flaky', { ok: true });
    await advance(60 * SEC);
    await expect.poll(() => mailsTo('mon@example.com').length).toBe(3);
    expect(mailsTo('mon@example.com').map((x) => x.subject)).toEqual([
      '[Mon] Confirm your subscription',
      '[Mon] Site is down',
      '[Mon] Site recovered after 12m 5s',
    ]);
    await t.request('DELETE', `/fake-monitor/${m.body.id}`, { token: dev });
  });

  it("DELETE /status-page/{id}/subscribers/{sid} removes a subscriber; another page's subscriber is 404", async () => {
    const a = await subscribed('A');
    const b = await subscribed('B');
    await sub(a.page.slug, 'one@example.com');
    await sub(b.page.slug, 'two@example.com');
    const [one] = (await t.request('GET', `/status-page/${a.page.id}/subscribers`, { token: dev })).body;
    const [two] = (await t.request('GET', `/status-page/${b.page.id}/subscribers`, { token: dev })).body;
    const wrong = await t.request('DELETE', `/status-page/${a.page.id}/subscribers/${two.id}`, {
      token: dev,
    });
    expect([wrong.status, wrong.body]).toEqual([404, err(404, 'subscriber not found')]);
    const res = await t.request('DELETE', `/status-page/${a.page.id}/subscribers/${one.id}`, { token: dev });
    expect(res.body).toEqual({});
    expect((await t.request('GET', `/status-page/${a.page.id}/subscribers`, { token: dev })).body).toEqual(
      [],
    );
    expect(
      (await t.request('GET', `/status-page/${b.page.id}/subscribers`, { token: dev })).body,
    ).toHaveLength(1);
  });
});

describe('maintenance on status pages', () => {
  it('lists windows covering a service, active or starting within 7 days; covered services show maintenance and mail nothing', async () => {
    const p = await makeChannel(t, dev);
    const c = await makeChannel(t, dev, { parentId: p.id });
    const page = await createPage({ appid: p.id, title: 'Maint' });
    const hb = await heartbeat(c.id, 'Worker');
    await pingHb(hb.token);
    await t.request('POST', `/status/${page.slug}/subscribe`, { json: { email: 'maint@example.com' } });
    await expect.poll(() => mails().filter((m) => m.to.includes('maint@example.com')).length).toBe(1);
    await t.request(
      'GET',
      linkIn(mails().find((m) => m.to.includes('maint@example.com'))!.data, '/status-subscribe/verify'),
    );
    const now = t.clock.now();
    const window = async (name: string, body: Record<string, unknown>) => {
      const res = await t.request('POST', '/maintenance-window', { token: dev, json: { name, ...body } });
      expect(res.status).toBe(200);
      return res.body as { id: number };
    };
    const once = (from: number, length: number) => ({
      type: 'once',
      startsAt: iso(now + from),
      endsAt: iso(now + from + length),
    });
    const soon = await window('DB upgrade', { channelIds: [c.id], schedule: once(HOUR, 2 * HOUR) });
    const later = await window('Far away', {
      channelIds: [p.id],
      includeSubtree: true,
      schedule: once(8 * DAY, HOUR),
    });
    const other = await window('Elsewhere', {
      channelIds: [(await makeChannel(t, dev)).id],
      schedule: once(HOUR, HOUR),
    });
    let res = await t.request('GET', `/status/${page.slug}/summary`);
    expect(res.body.maintenance).toEqual([
      { name: 'DB upgrade', startsAt: iso(now + HOUR), endsAt: iso(now + 3 * HOUR), active: false },
    ]);
    expect(res.body.overall).toBe('operational');

    await advance(HOUR);
    res = await t.request('GET', `/status/${page.slug}/summary`);
    expect(res.body.services.map((s: { status: string }) => s.status)).toEqual(['maintenance']);
    expect(res.body.overall).toBe('maintenance');
    expect(res.body.maintenance).toEqual([
      { name: 'DB upgrade', startsAt: iso(now + HOUR), endsAt: iso(now + 3 * HOUR), active: true },
    ]);
    const html = (await t.request('GET', `/status/${page.slug}`)).text;
    expect(html).toContain('<body data-overall="maintenance">');
    expect(html).toContain('Under maintenance');
    expect(html).toContain('<section data-status="maintenance">');
    expect(html).toContain(`<li data-maintenance="active"><strong>DB upgrade</strong>`);

    // A failure while covered is no incident and sends no mail.
    await pingHb(hb.token, '/fail');
    await advance(SEC);
    res = await t.request('GET', `/status/${page.slug}/summary`);
    expect(res.body.incidents).toEqual([]);
    expect(mails().filter((m) => m.to.includes('maint@example.com'))).toHaveLength(1);
    for (const w of [soon, later, other])
      await t.request('DELETE', `/maintenance-window/${w.id}`, { token: dev });
  });
});

describe('the public page cache', () => {
  it('serves the same build while nothing is written and for at most STATUS_CACHE_MS; any write rebuilds it', async () => {
    const ch = await makeChannel(t, dev, { name: 'Cached' });
    const hb = await heartbeat(ch.id, 'Cron');
    const page = await createPage({ appid: ch.id, title: 'Cached' });
    const summary = async () =>
      (await t.request('GET', `/status/${page.slug}/summary`)).body as {
        generatedAt: string;
        services: { name: string; status: string }[];
      };
    const first = await summary();
    expect(first.services).toEqual([expect.objectContaining({ name: 'Cron', status: 'pending' })]);
    t.clock.advance(STATUS_CACHE_MS - SEC);
    expect((await summary()).generatedAt).toBe(first.generatedAt); // nothing written: the same build
    expect((await t.request('GET', `/status/${page.slug}`)).text).toContain('data-status="pending"');
    await pingHb(hb.token); // a write: the next answer is built afresh and shows it
    const afterPing = await summary();
    expect(afterPing.generatedAt).not.toBe(first.generatedAt);
    expect(afterPing.services[0]?.status).toBe('up');
    expect((await t.request('GET', `/status/${page.slug}`)).text).toContain('data-status="up"');
    t.clock.advance(STATUS_CACHE_MS); // time alone: rebuilt once the cache time has passed
    expect((await summary()).generatedAt).toBe(iso(t.clock.now()));
  });
});
