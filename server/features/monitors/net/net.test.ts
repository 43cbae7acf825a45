import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closedPort,
  type FakeTarget,
  monitorTestCtx,
  startSilentTcp,
  startTarget,
} from '../../../../test/helpers/fake-targets';
import { monitorNet } from '../kind';
import { type HttpRequestSpec, httpRequest } from './http';
import { isPrivateAddress, lookupFor, resolveHost } from './resolve';
import { tcpProbe } from './tcp';

const fakeCtx = monitorTestCtx;

const CERT_NOT_AFTER = Date.parse('Nov  1 10:43:26 2126 GMT');

function spec(url: string, over: Partial<HttpRequestSpec> = {}): HttpRequestSpec {
  return {
    method: 'GET',
    url,
    followRedirects: true,
    ignoreTlsErrors: false,
    signal: AbortSignal.timeout(5_000),
    timeoutSec: 5,
    allowPrivate: true,
    ...over,
  };
}

let site: FakeTarget;
let secure: FakeTarget;
beforeAll(async () => {
  site = await startTarget((req, res, body) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const hops = Number(u.searchParams.get('n') ?? 0);
    if (u.pathname === '/up') {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Two': ['a', 'b'] });
      res.end('all good');
    } else if (u.pathname === '/500') {
      res.writeHead(500);
      res.end('boom');
    } else if (u.pathname === '/slow') {
      setTimeout(() => res.end('late'), 3_000);
    } else if (u.pathname === '/echo') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ method: req.method, body, headers: req.headers }));
    } else if (u.pathname === '/hop') {
      // /hop?n=k redirects k times, then lands on /echo.
      res.writeHead(302, { Location: hops > 0 ? `/hop?n=${hops - 1}` : '/echo' });
      res.end();
    } else if (u.pathname === '/see-other') {
      res.writeHead(303, { Location: '/echo' });
      res.end();
    } else if (u.pathname === '/keep') {
      res.writeHead(307, { Location: '/echo' });
      res.end();
    } else if (u.pathname === '/elsewhere') {
      res.writeHead(302, { Location: `http://monitored.test:${site.port}/echo` });
      res.end();
    } else if (u.pathname === '/big') {
      res.end('x'.repeat(10_000));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  secure = await startTarget(
    (_req, res) => {
      res.end('secret garden');
    },
    { tls: true },
  );
});
afterAll(async () => {
  await site.close();
  await secure.close();
});

describe('resolveHost', () => {
  it('passes IP literals, uses the host overrides before DNS, and fails .invalid names without a resolver', async () => {
    const ctx = fakeCtx();
    expect(await resolveHost(ctx, '127.0.0.1', { allowPrivate: true })).toEqual({
      address: '127.0.0.1',
      family: 4,
    });
    expect(await resolveHost(ctx, '[::1]', { allowPrivate: true })).toEqual({ address: '::1', family: 6 });
    expect(await resolveHost(ctx, 'Monitored.TEST.', { allowPrivate: true })).toEqual({
      address: '127.0.0.1',
      family: 4,
    });
    // A name the overrides miss goes on to resolution; `.invalid` never resolves (RFC 6761) and never
    // leaves this machine.
    expect(await resolveHost(ctx, 'nothing-here.invalid', { allowPrivate: true })).toEqual({
      error: 'DNS lookup failed: nothing-here.invalid',
    });
  });

  it('refuses loopback, private and link-local addresses when private targets are not allowed', async () => {
    const ctx = fakeCtx();
    monitorNet(ctx).hosts?.set('public.test', '93.184.216.34');
    for (const h of [
      '127.0.0.1',
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '::1',
      '[fe80::1]',
    ])
      expect(await resolveHost(ctx, h, { allowPrivate: false }), h).toEqual({
        error: 'private address refused',
      });
    expect(await resolveHost(ctx, 'monitored.test', { allowPrivate: false })).toEqual({
      error: 'private address refused',
    });
    expect(await resolveHost(ctx, 'public.test', { allowPrivate: false })).toEqual({
      address: '93.184.216.34',
      family: 4,
    });
  });

  it('judges IPv4-mapped IPv6 addresses as their IPv4 address', () => {
    expect(isPrivateAddress('::ffff:127.0.0.1')).toBe(true);
    expect(isPrivateAddress('::ffff:8.8.8.8')).toBe(false);
    expect(isPrivateAddress('fd00::5')).toBe(true);
    expect(isPrivateAddress('2001:db8::1')).toBe(false);
  });

  it('lookupFor answers both the single and the `all` form of a lookup with the same rules', async () => {
    const ctx = fakeCtx();
    const lookup = lookupFor(ctx, { allowPrivate: true });
    const one = await new Promise((resolve) =>
      lookup('monitored.test', {}, (err, address, family) => resolve({ err, address, family })),
    );
    expect(one).toEqual({ err: null, address: '127.0.0.1', family: 4 });
    const all = await new Promise((resolve) =>
      lookup('monitored.test', { all: true }, (err, addresses) => resolve({ err, addresses })),
    );
    expect(all).toEqual({ err: null, addresses: [{ address: '127.0.0.1', family: 4 }] });
    const refused = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      lookupFor(ctx, { allowPrivate: false })('monitored.test', {}, (err) => resolve(err)),
    );
    expect(refused?.message).toBe('private address refused');
  });
});

describe('httpRequest', () => {
  it('answers status, headers (lower-case, repeated ones joined), body and a response time', async () => {
    const r = await httpRequest(fakeCtx(), spec(`${site.url}/up`));
    expect(r).toMatchObject({ ok: true, statusCode: 200, finalUrl: `${site.url}/up`, body: 'all good' });
    if (!r.ok) throw new Error('unreachable');
    expect(r.headers['content-type']).toBe('text/plain');
    expect(r.headers['x-two']).toBe('a, b');
    expect(r.responseTimeMs).toBeGreaterThanOrEqual(0);
    expect(r.tlsValidTo).toBeUndefined();
  });

  it('answers a 500 as a response (judging the status is the kind’s job)', async () => {
    const r = await httpRequest(fakeCtx(), spec(`${site.url}/500`));
    expect(r).toMatchObject({ ok: true, statusCode: 500, body: 'boom' });
  });

  it('sends method, headers, body and basic auth', async () => {
    const r = await httpRequest(
      fakeCtx(),
      spec(`${site.url}/echo`, {
        method: 'post',
        headers: { 'Content-Type': 'application/json', 'X-Api-Key': 'k1' },
        body: '{"a":1}',
        basicAuth: { username: 'ann', password: 'pw:d' },
      }),
    );
    if (!r.ok) throw new Error(r.error);
    const echoed = JSON.parse(r.body) as { method: string; body: string; headers: Record<string, string> };
    expect(echoed.method).toBe('POST');
    expect(echoed.body).toBe('{"a":1}');
    expect(echoed.headers['x-api-key']).toBe('k1');
    expect(echoed.headers.authorization).toBe(`Basic ${Buffer.from('ann:pw:d').toString('base64')}`);
    expect(echoed.headers['user-agent']).toBe('Belfry-Monitor');
  });

  it('fails with `timeout after {n} s` when the signal aborts before the answer', async () => {
    const started = Date.now();
    const r = await httpRequest(
      fakeCtx(),
      spec(`${site.url}/slow`, { signal: AbortSignal.timeout(1_000), timeoutSec: 1 }),
    );
    expect(r).toMatchObject({ ok: false, error: 'timeout after 1 s' });
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it('fails with `connection refused` when nothing listens', async () => {
    const port = await closedPort();
    expect(await httpRequest(fakeCtx(), spec(`http://127.0.0.1:${port}/`))).toMatchObject({
      ok: false,
      error: 'connection refused',
    });
  });

  it('fails with `DNS lookup failed: {host}` for a name that does not resolve', async () => {
    expect(await httpRequest(fakeCtx(), spec('http://no-such-site.invalid/health'))).toMatchObject({
      ok: false,
      error: 'DNS lookup failed: no-such-site.invalid',
    });
  });

  it('reaches a name through the host overrides, sending the name as Host', async () => {
    const r = await httpRequest(fakeCtx(), spec(`http://monitored.test:${site.port}/echo`));
    if (!r.ok) throw new Error(r.error);
    expect((JSON.parse(r.body) as { headers: { host: string } }).headers.host).toBe(
      `monitored.test:${site.port}`,
    );
  });

  it('follows up to 10 redirects and reports the final URL', async () => {
    const r = await httpRequest(fakeCtx(), spec(`${site.url}/hop?n=9`));
    expect(r).toMatchObject({ ok: true, statusCode: 200, finalUrl: `${site.url}/echo` });
  });

  it('fails after more than 10 redirects', async () => {
    expect(await httpRequest(fakeCtx(), spec(`${site.url}/hop?n=10`))).toMatchObject({
      ok: false,
      error: 'too many redirects: more than 10',
    });
  });

  it('answers the redirect itself when followRedirects is false', async () => {
    const r = await httpRequest(fakeCtx(), spec(`${site.url}/hop?n=0`, { followRedirects: false }));
    expect(r).toMatchObject({ ok: true, statusCode: 302, finalUrl: `${site.url}/hop?n=0` });
    if (r.ok) expect(r.headers.location).toBe('/echo');
  });

  it('continues a POST as GET after 303 and keeps it after 307', async () => {
    const post = { method: 'POST', body: 'payload', headers: { 'Content-Type': 'text/plain' } };
    const seeOther = await httpRequest(fakeCtx(), spec(`${site.url}/see-other`, post));
    const keep = await httpRequest(fakeCtx(), spec(`${site.url}/keep`, post));
    if (!seeOther.ok || !keep.ok) throw new Error('redirect failed');
    expect(JSON.parse(seeOther.body)).toMatchObject({ method: 'GET', body: '' });
    expect(JSON.parse(keep.body)).toMatchObject({ method: 'POST', body: 'payload' });
  });

  it('takes credentials in the URL as basic auth', async () => {
    const r = await httpRequest(fakeCtx(), spec(`http://ann:p%40ss@127.0.0.1:${site.port}/echo`));
    if (!r.ok) throw new Error(r.error);
    const { headers } = JSON.parse(r.body) as { headers: Record<string, string> };
    expect(headers.authorization).toBe(`Basic ${Buffer.from('ann:p@ss').toString('base64')}`);
  });

  it('drops credentials and a set Host when a redirect leaves the origin', async () => {
    const r = await httpRequest(
      fakeCtx(),
      spec(`${site.url}/elsewhere`, {
        headers: { Authorization: 'Bearer t0k', Host: `127.0.0.1:${site.port}`, 'X-Keep': '1' },
        basicAuth: null,
      }),
    );
    if (!r.ok) throw new Error(r.error);
    const { headers } = JSON.parse(r.body) as { headers: Record<string, string> };
    expect(headers.authorization).toBeUndefined();
    expect(headers.host).toBe(`monitored.test:${site.port}`);
    expect(headers['x-keep']).toBe('1');
    expect(r.finalUrl).toBe(`http://monitored.test:${site.port}/echo`);
  });

  it('keeps at most maxBodyBytes of the body and drains the rest', async () => {
    const r = await httpRequest(fakeCtx(), spec(`${site.url}/big`, { maxBodyBytes: 100 }));
    expect(r).toMatchObject({ ok: true, statusCode: 200, body: 'x'.repeat(100) });
  });

  it('fails with `TLS error: {detail}` on a self-signed certificate', async () => {
    expect(await httpRequest(fakeCtx(), spec(`${secure.url}/`))).toMatchObject({
      ok: false,
      error: 'TLS error: self-signed certificate',
    });
  });

  it('fails with `TLS error:` when the certificate does not name the host', async () => {
    const ctx = fakeCtx();
    monitorNet(ctx).hosts?.set('other.test', '127.0.0.1');
    const r = await httpRequest(ctx, spec(`https://other.test:${secure.port}/`, { ignoreTlsErrors: false }));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/^TLS error: /);
  });

  it('reads the body and the certificate expiry with ignoreTlsErrors', async () => {
    const r = await httpRequest(
      fakeCtx(),
      spec(`https://monitored.test:${secure.port}/`, { ignoreTlsErrors: true }),
    );
    expect(r).toMatchObject({ ok: true, statusCode: 200, body: 'secret garden', tlsValidTo: CERT_NOT_AFTER });
  });

  it('refuses a private address before connecting when private targets are not allowed', async () => {
    const r = await httpRequest(fakeCtx(), spec(`${site.url}/up`, { allowPrivate: false }));
    expect(r).toMatchObject({ ok: false, error: 'private address refused' });
    const before = site.seen.length;
    await httpRequest(fakeCtx(), spec(`http://monitored.test:${site.port}/up`, { allowPrivate: false }));
    expect(site.seen.length).toBe(before);
  });
});

describe('tcpProbe', () => {
  const base = { tls: false, ignoreTlsErrors: false, timeoutSec: 5, allowPrivate: true };

  it('connects and reports the address', async () => {
    const r = await tcpProbe(fakeCtx(), {
      ...base,
      host: 'monitored.test',
      port: site.port,
      signal: AbortSignal.timeout(5_000),
    });
    expect(r).toMatchObject({ ok: true, address: '127.0.0.1' });
  });

  it('fails with `connection refused`, `DNS lookup failed: {host}` and `private address refused`', async () => {
    const port = await closedPort();
    const signal = AbortSignal.timeout(5_000);
    expect(await tcpProbe(fakeCtx(), { ...base, host: '127.0.0.1', port, signal })).toMatchObject({
      ok: false,
      error: 'connection refused',
    });
    expect(await tcpProbe(fakeCtx(), { ...base, host: 'db.invalid', port, signal })).toMatchObject({
      ok: false,
      error: 'DNS lookup failed: db.invalid',
    });
    expect(
      await tcpProbe(fakeCtx(), { ...base, host: '127.0.0.1', port: site.port, signal, allowPrivate: false }),
    ).toMatchObject({ ok: false, error: 'private address refused' });
  });

  it('completes a TLS handshake and reads the certificate expiry with ignoreTlsErrors', async () => {
    const r = await tcpProbe(fakeCtx(), {
      ...base,
      tls: true,
      ignoreTlsErrors: true,
      host: 'monitored.test',
      port: secure.port,
      signal: AbortSignal.timeout(5_000),
    });
    expect(r).toMatchObject({ ok: true, address: '127.0.0.1', tlsValidTo: CERT_NOT_AFTER });
  });

  it('fails with `TLS handshake failed: {detail}` on an untrusted certificate or a plain-TCP peer', async () => {
    const untrusted = await tcpProbe(fakeCtx(), {
      ...base,
      tls: true,
      host: 'monitored.test',
      port: secure.port,
      signal: AbortSignal.timeout(5_000),
    });
    expect(untrusted).toMatchObject({ ok: false, error: 'TLS handshake failed: self-signed certificate' });
    const plain = await tcpProbe(fakeCtx(), {
      ...base,
      tls: true,
      host: '127.0.0.1',
      port: site.port,
      signal: AbortSignal.timeout(5_000),
    });
    expect(plain.ok).toBe(false);
    if (!plain.ok) expect(plain.error).toMatch(/^TLS handshake failed: /);
  });

  it('fails with `timeout after {n} s` when the handshake never completes', async () => {
    const silent = await startSilentTcp();
    try {
      const r = await tcpProbe(fakeCtx(), {
        ...base,
        tls: true,
        host: '127.0.0.1',
        port: silent.port,
        timeoutSec: 1,
        signal: AbortSignal.timeout(500),
      });
      expect(r).toMatchObject({ ok: false, error: 'timeout after 1 s' });
    } finally {
      await silent.close();
    }
  });
});
