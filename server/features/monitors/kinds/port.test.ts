import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closedPort,
  type FakeTarget,
  monitorTestCtx,
  startSilentTcp,
  startTarget,
  testIo,
} from '../../../../test/helpers/fake-targets';
import type { ManualClock } from '../../../lib/clock';
import { portMonitor } from './port';

const ctx = monitorTestCtx();
const CERT_NOT_AFTER = Date.parse('Nov  1 10:43:26 2126 GMT');

describe('port-monitor parse', () => {
  it('fills defaults and validates host and port', () => {
    expect(portMonitor.parse({ host: 'DB.example.com', port: 5432 }, undefined, ctx)).toEqual({
      host: 'db.example.com',
      port: 5432,
      tls: false,
      ignoreTlsErrors: false,
    });
    expect(portMonitor.parse({ host: '[::1]', port: 1 }, undefined, ctx).host).toBe('::1');
    expect(() => portMonitor.parse({ port: 22 }, undefined, ctx)).toThrow('host: required');
    expect(() => portMonitor.parse({ host: 'a b', port: 22 }, undefined, ctx)).toThrow(
      'host: must be a host name or an IP address',
    );
    expect(() => portMonitor.parse({ host: 'x'.repeat(254), port: 22 }, undefined, ctx)).toThrow(
      'host: at most 253 characters',
    );
    expect(() => portMonitor.parse({ host: 'h.test' }, undefined, ctx)).toThrow('port: required');
    expect(() => portMonitor.parse({ host: 'h.test', port: 65_536 }, undefined, ctx)).toThrow(
      'port: must be between 1 and 65535',
    );
    expect(() => portMonitor.parse({ host: 'h.test', port: 22, tls: 1 }, undefined, ctx)).toThrow(
      'tls: must be true or false',
    );
  });

  it('keeps absent fields on update and names its target `host:port`', () => {
    const prev = portMonitor.parse({ host: '::1', port: 443, tls: true }, undefined, ctx);
    const next = portMonitor.parse({ port: 8443 }, prev, ctx);
    expect(next).toEqual({ host: '::1', port: 8443, tls: true, ignoreTlsErrors: false });
    expect(portMonitor.target(next)).toBe('[::1]:8443');
    expect(portMonitor.target({ ...next, host: 'db.test' })).toBe('db.test:8443');
    expect(portMonitor.hosts(next)).toEqual(['::1']);
  });
});

describe('port-monitor check', () => {
  let secure: FakeTarget;
  beforeAll(async () => {
    secure = await startTarget((_req, res) => res.end('hi'), { tls: true });
  });
  afterAll(() => secure.close());

  const run = (body: Record<string, unknown>, io = {}) =>
    portMonitor.check(portMonitor.parse(body, undefined, ctx), null, testIo(ctx, io));

  it('is up when the connect succeeds, with the address', async () => {
    const out = await run({ host: 'monitored.test', port: secure.port });
    expect(out).toMatchObject({ ok: true, details: { address: '127.0.0.1' } });
    expect(out.responseTimeMs).toBeGreaterThanOrEqual(0);
  });

  it('with tls, completes the handshake and reports tlsDaysLeft by the server clock', async () => {
    const clock = ctx.clock as ManualClock;
    const before = clock.now();
    try {
      clock.set(CERT_NOT_AFTER - 10 * 86_400_000 - 1_000);
      const out = await run({ host: 'monitored.test', port: secure.port, tls: true, ignoreTlsErrors: true });
      expect(out).toMatchObject({ ok: true, details: { address: '127.0.0.1', tlsDaysLeft: 10 } });
    } finally {
      clock.set(before);
    }
  });

  it('fails with the port texts of §2.3', async () => {
    const port = await closedPort();
    expect((await run({ host: '127.0.0.1', port })).error).toBe('connection refused');
    expect((await run({ host: 'db.invalid', port })).error).toBe('DNS lookup failed: db.invalid');
    expect((await run({ host: 'monitored.test', port: secure.port, tls: true })).error).toBe(
      'TLS handshake failed: self-signed certificate',
    );
    const silent = await startSilentTcp();
    try {
      expect((await run({ host: '127.0.0.1', port: silent.port, tls: true }, { timeoutSec: 1 })).error).toBe(
        'timeout after 1 s',
      );
    } finally {
      await silent.close();
    }
  });
});
