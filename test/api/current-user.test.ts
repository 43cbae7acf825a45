import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { UPLOAD_LIMIT_BYTES } from '../../server/lib/limits';
import {
  apiToken,
  deviceToken,
  insertChannelKeyRow,
  insertChannelRow,
  makeUser,
  sudo,
} from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

function form(data: Buffer, filename = 'avatar.png', type = 'image/png', field = 'file'): FormData {
  const f = new FormData();
  f.append(field, new Blob([new Uint8Array(data)], { type }), filename);
  return f;
}

describe('GET /current/user', () => {
  test('GET /current/user answers every spec field plus name and a boolean admin', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    const res = await t.request('GET', '/current/user', { token: d.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: u.id,
      name: u.email,
      email: u.email,
      admin: false,
      verified: true,
      plan: 'free',
      eventCounter: 0,
      messageCounter: 0,
      heartbeatCounter: 0,
      monitorCounter: 0,
      webScriptCounter: 0,
      balanceKopecks: 0,
      storageBytes: 0,
      image: '',
      mfaEnabled: false,
    });
    const basic = await t.request('GET', '/current/user', { basic: u });
    expect(basic.body).toEqual(res.body);
    const api = await apiToken(t, d, { access: 'read' });
    expect((await t.request('GET', '/current/user', { token: api.token })).body).toEqual(res.body);
    const admin = await t.request('GET', '/current/user', { basic: t.admin });
    expect(admin.body.admin).toBe(true);
  });

  test('GET /current/user answers 403 for a channel key and 401 without credentials', async () => {
    const u = makeUser(t);
    const key = insertChannelKeyRow(t, insertChannelRow(t, u.id), { canRead: true });
    const res = await t.request('GET', '/current/user', { token: key });
    expect(res.status).toBe(403);
    expect((await t.request('GET', '/current/user')).status).toBe(401);
  });
});

describe('POST /current/user/password', () => {
  test('POST /current/user/password signs out other devices, closes sudo and keeps API tokens', async () => {
    const u = makeUser(t);
    const me = await deviceToken(t, u);
    const other = await deviceToken(t, u);
    const api = await apiToken(t, me);
    await sudo(t, me, u.password);
    await sudo(t, other, u.password);
    const events: unknown[] = [];
    const off = t.server.ctx.bus.on('user:devices_invalidated', (e) => events.push(e));
    const res = await t.request('POST', '/current/user/password', {
      token: me.token,
      json: { oldPass: u.password, pass: 'new-password-1' },
    });
    off();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect(events).toEqual([{ userId: u.id, keepDeviceId: me.id }]);
    expect((await t.request('GET', '/current/user', { token: me.token })).status).toBe(200);
    expect((await t.request('GET', '/current/user', { token: other.token })).status).toBe(401);
    expect((await t.request('GET', '/current/user', { token: api.token })).status).toBe(200);
    const again = await t.request('POST', '/current/user/password', {
      token: me.token,
      json: { oldPass: 'new-password-1', pass: 'new-password-2' },
    });
    expect(again.status).toBe(403);
    expect(again.body.reason).toBe('sudo_required');
    expect(
      (await t.request('GET', '/current/user', { basic: { email: u.email, password: 'new-password-1' } }))
        .status,
    ).toBe(200);
  });

  test('POST /current/user/password answers 400 wrong password and 400 for a short new one', async () => {
    const u = makeUser(t);
    const me = await deviceToken(t, u);
    await sudo(t, me, u.password);
    const wrong = await t.request('POST', '/current/user/password', {
      token: me.token,
      json: { oldPass: 'not-the-one', pass: 'new-password-1' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errorDescription).toBe('wrong password');
    const short = await t.request('POST', '/current/user/password', {
      token: me.token,
      json: { oldPass: u.password, pass: '1234567' },
    });
    expect(short.status).toBe(400);
    expect(short.body.errorDescription).toBe('pass: must be at least 8 characters');
    const missing = await t.request('POST', '/current/user/password', {
      token: me.token,
      json: { pass: 'new-password-1' },
    });
    expect(missing.status).toBe(400);
    t.clock.advance(60_000);
  });

  test('POST /current/user/password answers 403 for an API token', async () => {
    const u = makeUser(t);
    const me = await deviceToken(t, u);
    const api = await apiToken(t, me);
    const res = await t.request('POST', '/current/user/password', {
      token: api.token,
      json: { oldPass: u.password, pass: 'new-password-1' },
    });
    expect(res.status).toBe(403);
  });
});

describe('quiet hours', () => {
  test('GET /current/user/quiet-hours answers the defaults for a new user', async () => {
    const d = await deviceToken(t, makeUser(t));
    const res = await t.request('GET', '/current/user/quiet-hours', { token: d.token });
    expect(res.body).toEqual({
      enabled: false,
      timezone: 'UTC',
      start: '23:00',
      end: '08:00',
      days: [1, 2, 3, 4, 5, 6, 7],
      breakthroughPriority: 8,
      digest: false,
    });
  });

  test('PUT /current/user/quiet-hours keeps unsent fields and answers the saved object', async () => {
    const d = await deviceToken(t, makeUser(t));
    const res = await t.request('PUT', '/current/user/quiet-hours', {
      token: d.token,
      json: { enabled: true, timezone: 'Europe/Moscow', days: [7, 1, 5] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      enabled: true,
      timezone: 'Europe/Moscow',
      start: '23:00',
      end: '08:00',
      days: [1, 5, 7],
      breakthroughPriority: 8,
      digest: false,
    });
    const next = await t.request('PUT', '/current/user/quiet-hours', {
      token: d.token,
      json: { start: '22:30', digest: true },
    });
    expect(next.body).toEqual({
      enabled: true,
      timezone: 'Europe/Moscow',
      start: '22:30',
      end: '08:00',
      days: [1, 5, 7],
      breakthroughPriority: 8,
      digest: true,
    });
    expect((await t.request('GET', '/current/user/quiet-hours', { token: d.token })).body).toEqual(next.body);
  });

  test('PUT /current/user/quiet-hours answers 400 for an unknown zone, bad times, days or priority', async () => {
    const d = await deviceToken(t, makeUser(t));
    const cases: [object, string][] = [
      [{ timezone: 'Mars/Olympus' }, 'timezone: unknown IANA time zone'],
      [{ start: '24:00' }, 'start: expected HH:MM'],
      [{ end: '8:00' }, 'end: expected HH:MM'],
      [{ days: [0] }, 'days.0: Too small: expected number to be >=1'],
      [{ days: [1, 1] }, 'days: days must be distinct'],
      [{ breakthroughPriority: 11 }, 'breakthroughPriority: Too big: expected number to be <=10'],
    ];
    for (const [json, text] of cases) {
      const res = await t.request('PUT', '/current/user/quiet-hours', { token: d.token, json });
      expect(res.status).toBe(400);
      expect(res.body.errorDescription).toBe(text);
    }
  });

  test('quiet hours answer 403 for a read-only API token on PUT and a channel key', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    const ro = await apiToken(t, d, { access: 'read' });
    expect((await t.request('GET', '/current/user/quiet-hours', { token: ro.token })).status).toBe(200);
    expect(
      (await t.request('PUT', '/current/user/quiet-hours', { token: ro.token, json: { enabled: true } }))
        .status,
    ).toBe(403);
    const key = insertChannelKeyRow(t, insertChannelRow(t, u.id));
    expect((await t.request('GET', '/current/user/quiet-hours', { token: key })).status).toBe(403);
  });
});

describe('avatar', () => {
  test('POST /current/user/image stores a PNG, serves it at image and DELETE removes it', async () => {
    const d = await deviceToken(t, makeUser(t));
    const res = await t.request('POST', '/current/user/image', {
      token: d.token,
      body: form(PNG, 'whatever.txt', 'text/plain'),
    });
    expect(res.status).toBe(200);
    expect(res.body.image).toMatch(new RegExp(`^${t.url}/image/avatar/u\\d+-[a-f0-9]{32}\\.png$`));
    expect(res.body.storageBytes).toBe(PNG.length);
    const img = await fetch(res.body.image);
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toBe('image/png');
    expect(img.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await img.arrayBuffer()).equals(PNG)).toBe(true);
    const replaced = await t.request('POST', '/current/user/image', {
      token: d.token,
      body: form(GIF, 'a.gif', 'image/gif'),
    });
    expect(replaced.body.image).toMatch(/\.gif$/);
    expect((await fetch(res.body.image)).status).toBe(404);
    const del = await t.request('DELETE', '/current/user/image', { token: d.token });
    expect(del.status).toBe(200);
    expect(del.body.image).toBe('');
    expect((await fetch(replaced.body.image)).status).toBe(404);
  });

  test('POST /current/user/image answers 415 when the content is not an image', async () => {
    const d = await deviceToken(t, makeUser(t));
    const res = await t.request('POST', '/current/user/image', {
      token: d.token,
      body: form(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'a.png', 'image/png'),
    });
    expect(res.status).toBe(415);
    expect(res.body.errorDescription).toBe('the file is not a PNG, JPEG, GIF or WebP image');
  });

  test('POST /current/user/image answers 413 when the file is larger than the upload limit', async () => {
    const d = await deviceToken(t, makeUser(t));
    const big = Buffer.concat([PNG, Buffer.alloc(UPLOAD_LIMIT_BYTES)]);
    const res = await t.request('POST', '/current/user/image', { token: d.token, body: form(big) });
    expect(res.status).toBe(413);
    expect(res.body.errorDescription).toBe(`request body larger than ${UPLOAD_LIMIT_BYTES} bytes`);
  });

  test('POST /current/user/image answers 400 when the file field is missing', async () => {
    const d = await deviceToken(t, makeUser(t));
    const f = new FormData();
    f.append('other', 'x');
    const res = await t.request('POST', '/current/user/image', { token: d.token, body: f });
    expect(res.status).toBe(400);
    expect(res.body.errorDescription).toBe('file: required');
    const wrongField = await t.request('POST', '/current/user/image', {
      token: d.token,
      body: form(PNG, 'a.png', 'image/png', 'avatar'),
    });
    expect(wrongField.status).toBe(400);
  });

  test('GET /image/avatar/{file} answers 404 for unknown or malformed names', async () => {
    expect((await t.request('GET', '/image/avatar/u1-00000000000000000000000000000000.png')).status).toBe(
      404,
    );
    expect((await t.request('GET', '/image/avatar/..%2Fsecret.key')).status).toBe(404);
  });

  test('avatar routes answer 403 for a channel key and a read-only API token', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    const ro = await apiToken(t, d, { access: 'read' });
    expect(
      (await t.request('POST', '/current/user/image', { token: ro.token, body: form(PNG) })).status,
    ).toBe(403);
    const key = insertChannelKeyRow(t, insertChannelRow(t, u.id));
    expect((await t.request('DELETE', '/current/user/image', { token: key })).status).toBe(403);
  });
});
