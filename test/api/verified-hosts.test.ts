import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verificationDns } from '../../server/features/verified-hosts/proof';
import { VERIFIED_HOSTS_PER_USER } from '../../server/lib/limits';
import { apiToken, deviceToken, insertChannelKeyRow, makeChannel, makeUser } from '../helpers/factories';
import { closedPort, type FakeTarget, startTarget } from '../helpers/fake-targets';
import { startTestServer, type TestServer } from '../helpers/test-server';

/**
 * Verified hosts (§3.1) against real loopback HTTP servers; the DNS proof through the per-server hook
 * (verificationDns(ctx).resolveTxt), so no query leaves the machine.
 */
let t: TestServer;
let dev: string;
/** What the proof server answers, per path; set by each test. */
let answer: (path: string) => { status: number; body: string; location?: string } = () => ({
  status: 404,
  body: 'not found',
});
let site: FakeTarget;
const txt = new Map<string, string[][]>();

const PROOF = '/.well-known/belfry-verification.txt';
const iso = (ms: number) => new Date(ms).toISOString();
const bad = (text: string) => ({ error: 'Bad Request', errorCode: 400, errorDescription: text });

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
  site = await startTarget((req, res) => {
    const a = answer(req.url ?? '');
    res.statusCode = a.status;
    if (a.location) res.setHeader('Location', a.location);
    res.end(a.body);
  });
  verificationDns(t.server.ctx).resolveTxt = async (host) => {
    const records = txt.get(host);
    if (!records) throw Object.assign(new Error(`queryTxt ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return records;
  };
});
afterAll(async () => {
  await t.close();
  await site.close();
});

async function start(body: Record<string, unknown>, token = dev) {
  return t.request('POST', '/verified-host/start', { token, json: body });
}

describe('POST /verified-host/start', () => {
  it('answers an unverified record with a 32-character token and the http instructions', async () => {
    const res = await start({ host: 'Proof.Example.COM', method: 'http', httpPort: 8080 });
    expect(res.status).toBe(200);
    const token = res.body.token as string;
    expect(token).toMatch(/^[a-z0-9]{32}$/);
    expect(res.body).toEqual({
      id: expect.any(Number),
      host: 'proof.example.com',
      method: 'http',
      token,
      verified: false,
      verifiedAt: null,
      checkedAt: null,
      lastError: null,
      httpPort: 8080,
      instructions: `Serve the text ${token} at http://proof.example.com:8080${PROOF}, then call POST /verified-host/check.`,
      createdAt: iso(t.clock.now()),
    });
    // The same host and method again: the existing record; another method: a record of its own.
    const again = await start({ host: 'proof.example.com', method: 'http' });
    expect(again.body).toEqual(res.body);
    const dns = await start({ host: 'proof.example.com', method: 'dns' });
    expect(dns.body).toMatchObject({
      method: 'dns',
      httpPort: null,
      instructions: `Add a TXT record to proof.example.com: belfry-verification=${dns.body.token}, then call POST /verified-host/check.`,
    });
    expect(dns.body.id).not.toBe(res.body.id);
    const list = await t.request('GET', '/verified-host', { token: dev });
    expect(list.body.map((h: { id: number }) => h.id)).toEqual([res.body.id, dns.body.id]);
  });

  it('answers 400 host: for a URL, a port, a path, and dns with an IP address', async () => {
    for (const host of ['http://example.com', 'example.com:8080', 'example.com/x', '', 'a b']) {
      const res = await start({ host, method: 'http' });
      expect(res.status).toBe(400);
      expect(res.body.errorDescription).toMatch(/^host: /);
    }
    expect((await start({ host: '10.0.0.1', method: 'dns' })).body).toEqual(
      bad('host: the dns method needs a host name, not an IP address'),
    );
    expect((await start({ host: 'example.com', method: 'ftp' })).body.errorDescription).toMatch(/^method: /);
    expect(
      (await start({ host: 'example.com', method: 'http', httpPort: 70_000 })).body.errorDescription,
    ).toMatch(/^httpPort: /);
  });

  it('answers 403 beyond 50 verified hosts per user', async () => {
    const u = makeUser(t);
    const token = (await deviceToken(t, u)).token;
    for (let i = 0; i < VERIFIED_HOSTS_PER_USER; i++)
      expect((await start({ host: `h${i}.example.com`, method: 'dns' }, token)).status).toBe(200);
    const res = await start({ host: 'one-more.example.com', method: 'dns' }, token);
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe('limit reached: at most 50 verified hosts per user');
    // The same host again is the existing record, not a new one.
    expect((await start({ host: 'h0.example.com', method: 'dns' }, token)).status).toBe(200);
  });
});

describe('POST /verified-host/check (http)', () => {
  it('verifies when a line of the 200 answer equals the token, and the verification holds', async () => {
    const rec = (await start({ host: '127.0.0.1', method: 'http', httpPort: site.port })).body;
    answer = (path) =>
      path === PROOF ? { status: 200, body: `# belfry\n  ${rec.token}  \n` } : { status: 404, body: '' };
    t.clock.advance(5_000);
    const res = await t.request('POST', '/verified-host/check', { token: dev, json: { id: rec.id } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...rec,
      verified: true,
      verifiedAt: iso(t.clock.now()),
      checkedAt: iso(t.clock.now()),
    });
    expect(site.seen.at(-1)).toMatchObject({ method: 'GET', path: PROOF });
    // The file gone: the check fails (400, lastError), the verification stays.
    answer = () => ({ status: 404, body: 'gone' });
    const verifiedAt = res.body.verifiedAt;
    t.clock.advance(1_000);
    const again = await t.request('POST', '/verified-host/check', { token: dev, json: { id: rec.id } });
    const url = `http://127.0.0.1:${site.port}${PROOF}`;
    expect(again.body).toEqual(bad(`verification failed: GET ${url} answered 404`));
    const [stored] = (await t.request('GET', '/verified-host', { token: dev })).body.filter(
      (h: { id: number }) => h.id === rec.id,
    );
    expect(stored).toMatchObject({
      verified: true,
      verifiedAt,
      checkedAt: iso(t.clock.now()),
      lastError: `verification failed: GET ${url} answered 404`,
    });
  });

  it('answers the §3.1 texts: wrong content, refused connection, redirects', async () => {
    const u = makeUser(t);
    const token = (await deviceToken(t, u)).token;
    const rec = (await start({ host: '127.0.0.1', method: 'http', httpPort: site.port }, token)).body;
    const url = `http://127.0.0.1:${site.port}${PROOF}`;
    const check = () => t.request('POST', '/verified-host/check', { token, json: { id: rec.id } });

    answer = () => ({ status: 200, body: `not it ${'x'.repeat(200)}` });
    expect((await check()).body).toEqual(
      bad(`verification failed: ${url} does not contain the token (found: "not it ${'x'.repeat(93)}")`),
    );
    // Up to three redirects on the same host are followed.
    answer = (path) =>
      path === PROOF
        ? { status: 302, body: '', location: '/r1' }
        : path === '/r1'
          ? { status: 301, body: '', location: `http://127.0.0.1:${site.port}/final` }
          : { status: 200, body: rec.token };
    expect((await check()).body).toMatchObject({ verified: true });

    // Another host is not followed.
    const other = (await start({ host: 'localhost', method: 'http', httpPort: site.port }, token)).body;
    answer = () => ({ status: 302, body: '', location: 'http://elsewhere.invalid/x' });
    const res = await t.request('POST', '/verified-host/check', { token, json: { id: other.id } });
    expect(res.body).toEqual(
      bad(
        `verification failed: GET http://localhost:${site.port}${PROOF} failed: redirect to another host (elsewhere.invalid)`,
      ),
    );
    // A fourth redirect is refused.
    answer = (path) => ({ status: 302, body: '', location: `${path}x` });
    expect((await t.request('POST', '/verified-host/check', { token, json: { id: other.id } })).body).toEqual(
      bad(
        `verification failed: GET http://localhost:${site.port}/.well-known/belfry-verification.txtxxx failed: more than 3 redirects`,
      ),
    );

    const port = await closedPort();
    const closed = (await start({ host: '127.0.0.2', method: 'http', httpPort: port }, token)).body;
    expect(
      (await t.request('POST', '/verified-host/check', { token, json: { id: closed.id } })).body,
    ).toEqual(bad(`verification failed: GET http://127.0.0.2:${port}${PROOF} failed: connection refused`));
  });
});

describe('POST /verified-host/check (dns)', () => {
  it('verifies with a TXT record belfry-verification=<token>, else names what it found', async () => {
    const rec = (await start({ host: 'txt.example.com', method: 'dns' })).body;
    const check = () => t.request('POST', '/verified-host/check', { token: dev, json: { id: rec.id } });
    expect((await check()).body).toEqual(
      bad(
        `verification failed: no TXT record belfry-verification=${rec.token} on txt.example.com (found: "")`,
      ),
    );
    txt.set('txt.example.com', [['v=spf1 -all'], ['belfry-verification=', 'wrong']]);
    expect((await check()).body).toEqual(
      bad(
        `verification failed: no TXT record belfry-verification=${rec.token} on txt.example.com (found: "v=spf1 -all, belfry-verification=wrong")`,
      ),
    );
    // A record split into chunks counts as one string.
    txt.set('txt.example.com', [['v=spf1 -all'], ['belfry-verification=', rec.token]]);
    const res = await check();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: rec.id, verified: true, lastError: null });
  });
});

describe('access', () => {
  it("someone else's record is 404 verified host not found; delete answers {}", async () => {
    const mine = (await start({ host: 'mine.example.com', method: 'dns' })).body;
    const otherTok = (await deviceToken(t, makeUser(t))).token;
    const notFound = { error: 'Not Found', errorCode: 404, errorDescription: 'verified host not found' };
    expect(
      (await t.request('POST', '/verified-host/check', { token: otherTok, json: { id: mine.id } })).body,
    ).toEqual(notFound);
    expect((await t.request('DELETE', `/verified-host/${mine.id}`, { token: otherTok })).body).toEqual(
      notFound,
    );
    expect((await t.request('GET', '/verified-host', { token: otherTok })).body).toEqual([]);
    const del = await t.request('DELETE', `/verified-host/${mine.id}`, { token: dev });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({});
    const list = (await t.request('GET', '/verified-host', { token: dev })).body;
    expect(list.some((h: { id: number }) => h.id === mine.id)).toBe(false);
  });

  it('a scoped API token gets 403, an unscoped one works, a channel key gets 403', async () => {
    const u = makeUser(t);
    const phone = await deviceToken(t, u);
    const channel = await makeChannel(t, phone.token);
    const scoped = await apiToken(t, phone, { access: 'write', appIds: [channel.id] });
    const unscoped = await apiToken(t, phone, { access: 'write' });
    const restricted = {
      error: 'Forbidden',
      errorCode: 403,
      errorDescription: 'an API token with a restricted scope cannot do this',
    };
    expect((await t.request('GET', '/verified-host', { token: scoped.token })).body).toEqual(restricted);
    expect((await start({ host: 'scoped.example.com', method: 'dns' }, scoped.token)).body).toEqual(
      restricted,
    );
    const ok = await start({ host: 'scoped.example.com', method: 'dns' }, unscoped.token);
    expect(ok.status).toBe(200);
    expect((await t.request('DELETE', `/verified-host/${ok.body.id}`, { token: scoped.token })).body).toEqual(
      restricted,
    );
    const key = insertChannelKeyRow(t, channel.id);
    expect((await t.request('GET', '/verified-host', { token: key })).status).toBe(403);
  });
});

describe('BELFRY_BLOCK_PRIVATE_TARGETS', () => {
  it('refuses a loopback proof for a user who is not an administrator; an administrator passes', async () => {
    const s = await startTestServer({ config: { blockPrivateTargets: true } });
    try {
      const adminTok = (await deviceToken(s)).token;
      const userTok = (await deviceToken(s, makeUser(s))).token;
      const body = { host: '127.0.0.1', method: 'http', httpPort: site.port };
      const mine = (await s.request('POST', '/verified-host/start', { token: userTok, json: body })).body;
      answer = () => ({ status: 200, body: mine.token });
      const before = site.seen.length;
      const res = await s.request('POST', '/verified-host/check', { token: userTok, json: { id: mine.id } });
      expect(res.body).toEqual(
        bad(`verification failed: GET http://127.0.0.1:${site.port}${PROOF} failed: private address refused`),
      );
      expect(site.seen.length).toBe(before);
      const theirs = (await s.request('POST', '/verified-host/start', { token: adminTok, json: body })).body;
      answer = () => ({ status: 200, body: theirs.token });
      const ok = await s.request('POST', '/verified-host/check', {
        token: adminTok,
        json: { id: theirs.id },
      });
      expect(ok.body).toMatchObject({ verified: true });
    } finally {
      await s.close();
    }
  });
});
