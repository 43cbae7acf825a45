import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  badRequestOf,
  closedPort,
  type FakeTarget,
  monitorTestCtx,
  startTarget,
  testIo,
} from '../../../../test/helpers/fake-targets';
import type { ManualClock } from '../../../lib/clock';
import { type HttpSettings, httpMonitor } from './http';
import { simpleMonitor } from './simple';

const ctx = monitorTestCtx();
const CERT_NOT_AFTER = Date.parse('Nov  1 10:43:26 2126 GMT');

const parseError = (body: Record<string, unknown>, prev?: HttpSettings) =>
  badRequestOf(() => httpMonitor.parse(body, prev, ctx));

describe('http-monitor parse', () => {
  it('fills the defaults of §2.3 on create', () => {
    expect(httpMonitor.parse({ url: 'https://example.com/health' }, undefined, ctx)).toEqual({
      method: 'GET',
      url: 'https://example.com/health',
      headers: {},
      body: '',
      basicAuth: null,
      expectedStatus: ['200-299'],
      followRedirects: true,
      ignoreTlsErrors: false,
      maxResponseMs: null,
      bodyContains: null,
      bodyNotContains: null,
      json: [],
      tlsExpiryDays: 0,
    });
  });

  it('answers `<field>: <problem>` for missing, wrong and out-of-range fields', () => {
    expect(parseError({})).toBe('url: required');
    expect(parseError({ url: 'ftp://example.com' })).toBe('url: must be an http or https URL');
    expect(parseError({ url: 'https://x.test', method: 'TRACE' })).toMatch(
      /^method: must be one of GET, HEAD/,
    );
    expect(parseError({ url: 'https://x.test', expectedStatus: [] })).toBe(
      'expectedStatus: at least one item',
    );
    expect(parseError({ url: 'https://x.test', expectedStatus: ['200', '600'] })).toMatch(
      /^expectedStatus\[1\]: /,
    );
    expect(parseError({ url: 'https://x.test', expectedStatus: ['300-200'] })).toMatch(
      /^expectedStatus\[0\]: /,
    );
    expect(parseError({ url: 'https://x.test', maxResponseMs: 0 })).toBe(
      'maxResponseMs: must be between 1 and 120000',
    );
    expect(parseError({ url: 'https://x.test', tlsExpiryDays: 366 })).toBe(
      'tlsExpiryDays: must be between 0 and 365',
    );
    expect(parseError({ url: 'https://x.test', body: 'x'.repeat(65_537) })).toBe(
      'body: at most 65536 characters',
    );
    expect(parseError({ url: 'https://x.test', headers: { 'Bad Name': 'v' } })).toBe(
      'headers.Bad Name: not a valid header name',
    );
    expect(parseError({ url: 'https://x.test', headers: { X: 'a\r\nEvil: 1' } })).toBe(
      'headers.X: must not contain line breaks',
    );
    expect(parseError({ url: 'https://x.test', json: [{ path: '$.a', op: 'gt', value: 'x' }] })).toBe(
      'json[0].value: must be a number',
    );
    expect(parseError({ url: 'https://x.test', json: [{ path: '$.a[*]', op: 'exists' }] })).toMatch(
      /^json\[0\]\.path: not a JSON path/,
    );
    expect(parseError({ url: 'https://x.test', json: [{ path: '$.a', op: 'matches', value: '/(/' }] })).toBe(
      'json[0].value: not a valid regular expression',
    );
    expect(parseError({ url: 'https://x.test', basicAuth: { username: 'u' } })).toBe(
      'basicAuth.password: required',
    );
    expect(parseError({ url: 'https://x.test', followRedirects: 'yes' })).toBe(
      'followRedirects: must be true or false',
    );
  });

  it('keeps absent fields on update, clears nullable ones with null, replaces objects', () => {
    const prev = httpMonitor.parse(
      { url: 'https://x.test', bodyContains: 'ok', headers: { A: '1', B: '2' }, maxResponseMs: 500 },
      undefined,
      ctx,
    );
    const next = httpMonitor.parse({ bodyContains: null, headers: { C: '3' } }, prev, ctx);
    expect(next).toEqual({ ...prev, bodyContains: null, headers: { C: '3' } });
    expect(httpMonitor.parse({ bodyNotContains: '' }, prev, ctx).bodyNotContains).toBeNull();
  });

  it('masks secrets on present and keeps them when "********" comes back (§0.3)', () => {
    const prev = httpMonitor.parse(
      {
        url: 'https://x.test',
        headers: { Authorization: 'Bearer abc', 'X-Api-Key': 'k1', Accept: 'text/plain' },
        basicAuth: { username: 'ann', password: 'pw' },
      },
      undefined,
      ctx,
    );
    const shown = httpMonitor.present(prev, null);
    expect(shown.headers).toEqual({
      Authorization: '********',
      'X-Api-Key': '********',
      Accept: 'text/plain',
    });
    expect(shown.basicAuth).toEqual({ username: 'ann', password: '********' });
    const next = httpMonitor.parse(
      {
        headers: { authorization: '********', 'X-Api-Key': 'k2' },
        basicAuth: { username: 'bob', password: '********' },
      },
      prev,
      ctx,
    );
    expect(next.headers).toEqual({ authorization: 'Bearer abc', 'X-Api-Key': 'k2' });
    expect(next.basicAuth).toEqual({ username: 'bob', password: 'pw' });
  });

  it('refuses "********" where nothing is stored', () => {
    expect(parseError({ url: 'https://x.test', headers: { 'X-Token': '********' } })).toMatch(
      /^headers\.X-Token: "\*\*\*\*\*\*\*\*" keeps the stored value/,
    );
    expect(parseError({ url: 'https://x.test', basicAuth: { username: 'u', password: '********' } })).toMatch(
      /^basicAuth\.password: /,
    );
  });

  it('names its target and hosts', () => {
    const s = httpMonitor.parse({ url: 'https://Monitored.test:8443/x' }, undefined, ctx);
    expect(httpMonitor.target(s)).toBe('https://Monitored.test:8443/x');
    expect(httpMonitor.hosts(s)).toEqual(['monitored.test']);
  });
});

describe('http-monitor check', () => {
  let site: FakeTarget;
  let secure: FakeTarget;
  beforeAll(async () => {
    site = await startTarget((req, res) => {
      const path = req.url ?? '/';
      if (path === '/json') {
        const json = JSON.stringify({ status: 'ok', count: 3, tags: ['a', 'b'] });
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(json.length) });
        res.end(json);
      } else if (path === '/500') {
        res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end('maintenance');
      } else if (path === '/slow') setTimeout(() => res.end('{"status":"ok"}'), 80);
      else if (path === '/hang') setTimeout(() => res.end(), 3_000);
      else if (path === '/moved') {
        res.writeHead(301, { Location: '/json' });
        res.end();
      } else res.end('plain text, status ok');
    });
    secure = await startTarget((_req, res) => res.end('{"status":"ok"}'), { tls: true });
  });
  afterAll(async () => {
    await site.close();
    await secure.close();
  });

  const run = (body: Record<string, unknown>, io = {}) =>
    httpMonitor.check(httpMonitor.parse(body, undefined, ctx), null, testIo(ctx, io));

  it('is up with the details of §2.6', async () => {
    const out = await run({ url: `${site.url}/json`, json: [{ path: '$.count', op: 'gte', value: 3 }] });
    expect(out).toMatchObject({ ok: true, details: { statusCode: 200, finalUrl: `${site.url}/json` } });
    expect(out.error).toBeUndefined();
    expect(out.responseTimeMs).toBeGreaterThanOrEqual(0);
    expect(out.details.headers).toEqual({ 'content-type': 'application/json', 'content-length': '42' });
    expect(out.details.bodyExcerpt).toBe('{"status":"ok","count":3,"tags":["a","b"]}');
    expect(out.details.assertions).toEqual([
      { name: 'status', ok: true, detail: 'status 200 in 200-299' },
      { name: 'json $.count', ok: true, detail: 'json $.count: 3' },
    ]);
    expect(out.details).not.toHaveProperty('tlsDaysLeft');
  });

  it('request step: timeout, refused, DNS, TLS', async () => {
    expect((await run({ url: `${site.url}/hang` }, { timeoutSec: 1 })).error).toBe('timeout after 1 s');
    const port = await closedPort();
    const refused = await run({ url: `http://127.0.0.1:${port}/` });
    expect(refused).toMatchObject({ ok: false, error: 'connection refused', responseTimeMs: null });
    expect(refused.details.assertions).toEqual([
      { name: 'request', ok: false, detail: 'connection refused' },
    ]);
    expect((await run({ url: 'http://gone.invalid/' })).error).toBe('DNS lookup failed: gone.invalid');
    expect((await run({ url: secure.url })).error).toBe('TLS error: self-signed certificate');
  });

  it('status step: `status {code} not in {expectedStatus}`, before the body and json steps', async () => {
    const out = await run({
      url: `${site.url}/500`,
      expectedStatus: ['200-299', '304'],
      bodyContains: 'healthy',
      json: [{ path: '$.x', op: 'exists' }],
    });
    expect(out).toMatchObject({ ok: false, error: 'status 500 not in 200-299, 304' });
    expect(out.details.statusCode).toBe(500);
    expect(out.details.bodyExcerpt).toBe('maintenance');
    expect((out.details.assertions as { ok: boolean }[]).map((a) => a.ok)).toEqual([false, false, false]);
  });

  it('time step: `response took {ms} ms (limit {max} ms)`, before the body step', async () => {
    const out = await run({ url: `${site.url}/slow`, maxResponseMs: 10, bodyContains: 'nope' });
    expect(out.error).toMatch(/^response took \d+ ms \(limit 10 ms\)$/);
    expect(Number(/took (\d+)/.exec(out.error ?? '')?.[1])).toBeGreaterThanOrEqual(70);
  });

  it('body step: `body does not contain "{x}"` and `body contains "{x}"`', async () => {
    expect((await run({ url: site.url, bodyContains: 'Status OK' })).error).toBe(
      'body does not contain "Status OK"',
    );
    expect((await run({ url: site.url, bodyContains: 'status ok', bodyNotContains: 'plain' })).error).toBe(
      'body contains "plain"',
    );
  });

  it('json step: `json {path}: expected {op} {value}, got {actual}`, missing, and not JSON', async () => {
    const url = `${site.url}/json`;
    expect((await run({ url, json: [{ path: '$.status', op: 'eq', value: 'up' }] })).error).toBe(
      'json $.status: expected eq "up", got "ok"',
    );
    expect((await run({ url, json: [{ path: '$.nope', op: 'eq', value: 1 }] })).error).toBe(
      'json $.nope: expected eq 1, got missing',
    );
    expect((await run({ url, json: [{ path: '$.tags', op: 'contains', value: 'c' }] })).error).toBe(
      'json $.tags: expected contains "c", got ["a","b"]',
    );
    expect((await run({ url: site.url, json: [{ path: '$.status', op: 'exists' }] })).error).toBe(
      'json $.status: body is not JSON',
    );
  });

  it('tls step: `TLS certificate expires in {d} days ({date})` by the server clock', async () => {
    const clock = ctx.clock as ManualClock;
    const before = clock.now();
    try {
      clock.set(CERT_NOT_AFTER - 5 * 86_400_000 - 1_000);
      const soon = await run({ url: secure.url, ignoreTlsErrors: true, tlsExpiryDays: 30 });
      expect(soon).toMatchObject({ ok: false, error: 'TLS certificate expires in 5 days (2126-11-01)' });
      expect(soon.details.tlsDaysLeft).toBe(5);
      const fine = await run({ url: secure.url, ignoreTlsErrors: true, tlsExpiryDays: 5 });
      expect(fine.ok).toBe(true);
    } finally {
      clock.set(before);
    }
  });

  it('follows redirects by default and reports the 301 itself with followRedirects false', async () => {
    expect(await run({ url: `${site.url}/moved` })).toMatchObject({
      ok: true,
      details: { statusCode: 200, finalUrl: `${site.url}/json` },
    });
    const not = await run({ url: `${site.url}/moved`, followRedirects: false });
    expect(not).toMatchObject({ ok: false, error: 'status 301 not in 200-299' });
    expect(not.details.headers).toMatchObject({ location: '/json' });
  });

  it('refuses private targets when the owner may not reach them', async () => {
    expect((await run({ url: site.url }, { allowPrivate: false })).error).toBe('private address refused');
  });
});

describe('monitor (simple)', () => {
  let site: FakeTarget;
  beforeAll(async () => {
    site = await startTarget((req, res) => {
      if (req.url === '/moved') {
        res.writeHead(302, { Location: '/500' });
        res.end();
      } else if (req.url === '/500') {
        res.writeHead(500);
        res.end();
      } else res.end('ok');
    });
  });
  afterAll(() => site.close());

  const run = (url: string) =>
    simpleMonitor.check(simpleMonitor.parse({ url }, undefined, ctx), null, testIo(ctx));

  it('takes only a url', () => {
    expect(simpleMonitor.parse({ url: 'http://x.test/', method: 'POST' }, undefined, ctx)).toEqual({
      url: 'http://x.test/',
    });
    expect(() => simpleMonitor.parse({}, undefined, ctx)).toThrow('url: required');
    expect(simpleMonitor.parse({}, { url: 'http://x.test/' }, ctx)).toEqual({ url: 'http://x.test/' });
  });

  it('is up on 2xx and on a 3xx, which it does not follow', async () => {
    expect((await run(site.url)).ok).toBe(true);
    expect(await run(`${site.url}/moved`)).toMatchObject({ ok: true, details: { statusCode: 302 } });
    expect(site.seen.some((r) => r.path === '/500')).toBe(false);
  });

  it('is down on 5xx with the http-monitor text', async () => {
    expect((await run(`${site.url}/500`)).error).toBe('status 500 not in 200-399');
  });
});
