import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Feature } from '../../server/features/index';
import { APP, DEV, principalOf, READ, TOK, TOK_BASIC } from '../../server/http/auth';
import { RouteTable } from '../../server/http/routes';
import { parseBody } from '../../server/http/validate';
import { issueToken } from '../../server/lib/tokens';
import { deviceToken, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

/** Routes that exist only in this test, one per auth preset, to exercise the HTTP core. */
const probe: Feature = {
  name: 'probe',
  routes: (ctx) => {
    const t = new RouteTable(ctx, 'probe');
    const who = (req: Parameters<typeof principalOf>[0]) => ({ kind: principalOf(req).kind });
    t.get('/_probe/tok', TOK, who);
    t.get('/_probe/tok-basic', TOK_BASIC, who);
    t.get('/_probe/dev', DEV, who);
    t.get('/_probe/app', APP, who);
    t.post('/_probe/app-write', { ...APP, access: 'write' }, who);
    t.get('/_probe/read', READ, who);
    t.post('/_probe/write', { ...TOK, access: 'write' }, who);
    t.get('/_probe/admin', { ...TOK, admin: true }, who);
    t.post('/_probe/echo', null, (req) => parseBody(req, z.object({ n: z.number().int() })));
    t.get('/_probe/boom', null, () => {
      throw new Error('secret internal detail');
    });
    return t;
  },
};

let t: TestServer;
let device: string;
let apiRead: string;
let apiWrite: string;
let keyWrite: string;
let keyRead: string;
let otherDevice: string;

function insertApiToken(userId: number, access: 'read' | 'write'): string {
  const { token, digest, hint } = issueToken('M');
  t.server.ctx.db.run(
    'INSERT INTO api_tokens (user_id, name, access, token_digest, token_hint, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    [userId, `api-${access}`, access, digest, hint, t.clock.now()],
  );
  return token;
}

function insertChannelKey(userId: number, canRead: boolean, canWrite: boolean): string {
  const db = t.server.ctx.db;
  const channelId = db.run('INSERT INTO channels (user_id, name, created_at) VALUES (?, ?, ?)', [
    userId,
    'probe channel',
    t.clock.now(),
  ]).lastInsertRowid;
  const { token, digest, hint } = issueToken('A');
  db.run(
    'INSERT INTO channel_keys (channel_id, can_read, can_write, token_digest, token_hint, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    [channelId, canRead ? 1 : 0, canWrite ? 1 : 0, digest, hint, t.clock.now()],
  );
  return token;
}

beforeAll(async () => {
  t = await startTestServer({ extraFeatures: [probe], config: { bodyLimitBytes: 1024 } });
  device = (await deviceToken(t)).token;
  const adminId = t.server.ctx.db.first<{ id: number }>('SELECT id FROM users WHERE email = ?', [
    t.admin.email,
  ])!.id;
  apiRead = insertApiToken(adminId, 'read');
  apiWrite = insertApiToken(adminId, 'write');
  keyWrite = insertChannelKey(adminId, false, true);
  keyRead = insertChannelKey(adminId, true, false);
  const other = makeUser(t);
  otherDevice = (await deviceToken(t, other)).token;
});

afterAll(() => t.close());

const body401 = (description: string) => ({
  error: 'Unauthorized',
  errorCode: 401,
  errorDescription: description,
});
const body403 = (description: string) => ({
  error: 'Forbidden',
  errorCode: 403,
  errorDescription: description,
});

describe('token kinds on routes that accept only some', () => {
  it('TOK accepts device and API tokens', async () => {
    expect((await t.request('GET', '/_probe/tok', { token: device })).body).toEqual({ kind: 'device' });
    expect((await t.request('GET', '/_probe/tok', { token: apiRead })).body).toEqual({ kind: 'api' });
  });

  it('TOK refuses a channel key with 403 (account-level operation)', async () => {
    const res = await t.request('GET', '/_probe/tok', { token: keyWrite });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(body403('this kind of token cannot be used for account-level operations'));
  });

  it('DEV refuses an API token with 403', async () => {
    const res = await t.request('GET', '/_probe/dev', { token: apiWrite });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(body403('API tokens cannot do this; sign in with a device'));
    expect((await t.request('GET', '/_probe/dev', { token: device })).body).toEqual({ kind: 'device' });
  });

  it('APP refuses device and API tokens with 401 (wrong kind)', async () => {
    for (const token of [device, apiWrite]) {
      const res = await t.request('GET', '/_probe/app', { token });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(
        body401(
          `${token === device ? 'a device token (C…, from signing in)' : 'an API token (M…)'} is not accepted here; this endpoint takes a channel key (A…) or a share key (S…)`,
        ),
      );
    }
    expect((await t.request('GET', '/_probe/app', { token: keyWrite })).body).toEqual({ kind: 'app' });
  });

  it('a write route refuses a read-only API token and a key without write with 403', async () => {
    const res = await t.request('POST', '/_probe/write', { token: apiRead });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(body403('token lacks the write permission'));
    expect((await t.request('POST', '/_probe/write', { token: apiWrite })).status).toBe(200);
    const key = await t.request('POST', '/_probe/app-write', { token: keyRead });
    expect(key.status).toBe(403);
    expect(key.body).toEqual(body403('token lacks the write permission'));
  });

  it('READ refuses a channel key without read permission with 403', async () => {
    expect((await t.request('GET', '/_probe/read', { token: keyWrite })).status).toBe(403);
    expect((await t.request('GET', '/_probe/read', { token: keyRead })).body).toEqual({ kind: 'app' });
  });

  it('admin routes refuse a non-admin with 403', async () => {
    expect((await t.request('GET', '/_probe/admin', { token: otherDevice })).status).toBe(403);
    expect((await t.request('GET', '/_probe/admin', { token: device })).status).toBe(200);
  });

  it('Basic is accepted only where the route allows it', async () => {
    expect((await t.request('GET', '/_probe/tok-basic', { basic: t.admin })).body).toEqual({ kind: 'basic' });
    const res = await t.request('GET', '/_probe/tok', { basic: t.admin });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(body401('username and password are not accepted on this endpoint; use a token'));
  });

  it('a wrong Basic pair gets 401', async () => {
    const res = await t.request('GET', '/_probe/tok-basic', {
      basic: { email: t.admin.email, password: 'nope' },
    });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(body401('wrong username or password'));
  });

  it('an unverified account is admitted nowhere', async () => {
    const u = makeUser(t, { verified: false });
    const res = await t.request('GET', '/_probe/tok-basic', { basic: u });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(body403('email address not verified'));
  });
});

describe('token transports', () => {
  it('accepts every transport of the spec', async () => {
    for (const via of ['service-key', 'legacy-key', 'gotify-key', 'bearer', 'query', 'cookie'] as const) {
      const res = await t.request('GET', '/_probe/tok', { token: device, via });
      expect(res.status, via).toBe(200);
    }
  });

  it('lets the first present transport win even when it is invalid', async () => {
    const res = await t.request('GET', '/_probe/tok', {
      headers: { 'X-Service-Key': 'Cxxxxxxxxxxxxxxxxxxxxxx', Authorization: `Bearer ${device}` },
    });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(body401('invalid or expired token'));
    const later = await t.request('GET', `/_probe/tok?token=${device}`, {
      headers: { 'X-Legacy-Key': 'garbage' },
    });
    expect(later.status).toBe(401);
  });

  it('answers 401 without any credential', async () => {
    const res = await t.request('GET', '/_probe/tok');
    expect(res.status).toBe(401);
    expect(res.body).toEqual(
      body401('you need to provide a valid access token or user credentials to access this api'),
    );
  });
});

describe('error bodies', () => {
  it('400 for malformed JSON', async () => {
    const res = await t.request('POST', '/_probe/echo', {
      body: '{"n":',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'Bad Request',
      errorCode: 400,
      errorDescription: 'malformed JSON body',
    });
  });

  it('400 naming the field for invalid input', async () => {
    const res = await t.request('POST', '/_probe/echo', { json: { n: 'x' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'Bad Request', errorCode: 400 });
    expect((res.body as { errorDescription: string }).errorDescription).toMatch(/^n: /);
  });

  it('413 for an oversized body', async () => {
    const res = await t.request('POST', '/_probe/echo', { json: { n: 1, pad: 'x'.repeat(5000) } });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      error: 'Payload Too Large',
      errorCode: 413,
      errorDescription: 'request body larger than 1024 bytes',
    });
  });

  it('404 for an unknown route', async () => {
    const res = await t.request('GET', '/no/such/thing');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: 'Not Found',
      errorCode: 404,
      errorDescription: 'no route for GET /no/such/thing',
    });
  });

  it('500 is generic, logged, and leaks nothing', async () => {
    const res = await t.request('GET', '/_probe/boom');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      error: 'Internal Server Error',
      errorCode: 500,
      errorDescription: 'internal server error',
    });
    expect(res.text).not.toContain('secret internal detail');
    expect(
      t.log.lines.some((l) => l.includes('unhandled error') && l.includes('secret internal detail')),
    ).toBe(true);
  });

  it('501 for a spec endpoint that is not built', async () => {
    // Every spec endpoint is built: a server without the assistant family stands in for an unbuilt one.
    const partial = await startTestServer({ withoutFeatures: ['assistant'] });
    try {
      const dev = (await deviceToken(partial)).token;
      const res = await partial.request('POST', '/assistant/chat', { token: dev, json: {} });
      expect(res.status).toBe(501);
      expect(res.body).toEqual({
        error: 'Not Implemented',
        errorCode: 501,
        errorDescription: 'POST /assistant/chat is part of the API but not built in this version of Belfry',
      });
    } finally {
      await partial.close();
    }
  });
});

describe('health and info', () => {
  it('GET /health is green', async () => {
    const res = await t.request('GET', '/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ health: 'green', database: 'green' });
  });

  it('GET /version has the package version', async () => {
    const res = await t.request<{ version: string; commit: string; buildDate: string }>('GET', '/version');
    expect(res.status).toBe(200);
    expect(res.body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Object.keys(res.body).sort()).toEqual(['buildDate', 'commit', 'version']);
  });

  it('GET /serverinfo and /gotifyinfo mirror the registration setting', async () => {
    for (const path of ['/serverinfo', '/gotifyinfo']) {
      const res = await t.request('GET', path);
      expect(res.body).toEqual({ version: expect.any(String), register: false, oidc: false });
    }
  });
});
