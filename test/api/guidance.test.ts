import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGE_MAX_CHARS } from '../../server/lib/limits';
import { tokenHint } from '../../server/lib/tokens';
import { apiToken, deviceToken, makeChannel } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

// Issue 20, "errors that tell the user what to do" and the compatibility additions: same statuses as the
// spec gives, texts that name what to send instead.
let t: TestServer;
let dev: string;

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
});
afterAll(async () => {
  await t.close();
});

const body401 = (errorDescription: string) => ({ error: 'Unauthorized', errorCode: 401, errorDescription });

describe('errors that say what to do', () => {
  it('POST /message says the message is too long when it is over the limit', async () => {
    const c = await makeChannel(t, dev, { name: 'Long' });
    const res = await t.request('POST', '/message', {
      token: c.token,
      json: { message: 'x'.repeat(MESSAGE_MAX_CHARS + 1) },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'Bad Request',
      errorCode: 400,
      errorDescription: `message: message is too long: at most ${MESSAGE_MAX_CHARS} characters`,
    });
    const missing = await t.request('POST', '/message', { token: c.token, json: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.errorDescription).toBe('message: message is required');
    const atLimit = await t.request('POST', '/message', {
      token: c.token,
      json: { message: 'x'.repeat(MESSAGE_MAX_CHARS) },
    });
    expect(atLimit.status).toBe(200);
  });

  it('POST /message names the key kinds it takes when a device token is sent', async () => {
    const res = await t.request('POST', '/message', { token: dev, json: { message: 'hi' } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(
      body401(
        'a device token (C…, from signing in) is not accepted here; this endpoint takes a channel key (A…) or a share key (S…)',
      ),
    );
  });

  it('POST /auth/local/login names Basic when a token is sent', async () => {
    const api = await apiToken(t, { token: dev });
    const login = await t.request('POST', '/auth/local/login', { token: api.token });
    expect(login.status).toBe(401);
    expect(login.body).toEqual(
      body401('an API token (M…) is not accepted here; this endpoint takes a username and password (Basic)'),
    );
  });

  it('a request with an unknown credential header is told the accepted transports', async () => {
    const res = await t.request('GET', '/application', { headers: { 'X-Api-Key': dev } });
    expect(res.status).toBe(401);
    expect(res.body.errorDescription).toBe(
      'x-api-key is not a header Belfry reads credentials from; a token may be sent as X-Service-Key, X-Legacy-Key (or X-Gotify-Key), Authorization: Bearer <token>, ?token= or the session cookie',
    );
    const none = await t.request('GET', '/application');
    expect(none.body).toEqual(
      body401('you need to provide a valid access token or user credentials to access this api'),
    );
  });

  it('an Authorization header without Bearer or Basic is told the accepted schemes', async () => {
    for (const authorization of [`Token ${dev}`, dev, 'Bearer']) {
      const res = await t.request('GET', '/application', { headers: { Authorization: authorization } });
      expect(res.status, authorization).toBe(401);
      expect(res.body.errorDescription).toMatch(
        /^malformed Authorization header: use "Bearer <token>" or "Basic <base64 of email:password>"; a token may be sent as X-Service-Key/,
      );
    }
  });

  it('a masked hint used as a token is told it is a masked hint', async () => {
    const c = await makeChannel(t, dev, { name: 'Masked' });
    const listed = await t.request<{ token: string }[]>('GET', '/client', { token: dev });
    const hint = listed.body[0]!.token;
    expect(hint).toContain('*');
    for (const [token, path] of [
      [hint, '/application'],
      [tokenHint(c.token), '/message'],
    ] as const) {
      const res = await t.request('GET', path, { token });
      expect(res.status, `${path} ${token}`).toBe(401);
      expect(res.body.errorDescription).toBe(
        'this is the masked hint of a token (the * stand for hidden characters), not the token; use the full token shown once when it was created, or rotate it to get a new one',
      );
    }
    // A device token's hint where a channel key is needed: called a hint, not a wrong kind.
    const post = await t.request('POST', '/message', { token: hint, json: { message: 'x' } });
    expect(post.status).toBe(401);
    expect(post.body.errorDescription).toMatch(/^this is the masked hint of a token/);
  });
});

describe('compatibility additions', () => {
  it('POST /application accepts a multipart form', async () => {
    const form = new FormData();
    form.set('name', 'From multipart');
    form.set('description', 'sent as a form');
    form.set('defaultPriority', '7');
    const res = await t.request('POST', '/application', { token: dev, body: form });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'From multipart',
      description: 'sent as a form',
      defaultPriority: 7,
    });
    const file = new FormData();
    file.set('name', 'x');
    file.set('file', new Blob(['x']), 'x.txt');
    const withFile = await t.request('POST', '/application', { token: dev, body: file });
    expect(withFile.status).toBe(400);
    expect(withFile.body.errorDescription).toBe('invalid multipart body: files are not accepted');
  });

  it('GET /plugin answers an empty list to a device token', async () => {
    const res = await t.request('GET', '/plugin', { token: dev, via: 'gotify-key' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    expect((await t.request('GET', '/plugin')).status).toBe(401);
    const c = await makeChannel(t, dev, { name: 'Plugin' });
    expect((await t.request('GET', '/plugin', { token: c.token })).status).toBe(403);
  });
});
