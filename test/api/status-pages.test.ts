import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    const data = m.data.replace(/=\r\n/g, '').replace(/=3D/g, '=');
    const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'mi').exec(data)?.[1];
    return { to: m.to.join(' '), subject: header('Subject') ?? '', data, unsub: header('List-Unsubscribe') };
  });
}
const subjects = () => mails().map((m) => m.subject);
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
