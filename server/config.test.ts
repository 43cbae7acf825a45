import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  defaultDataDir,
  helpText,
  loadConfig,
  mailDomainOf,
  parseFlags,
  parseHostPort,
  publicUrlOf,
} from './config';
import { DEFAULT_PLANS } from './lib/limits';

describe('config', () => {
  it('has the contract defaults', () => {
    const c = loadConfig({ env: { HOME: '/home/u' } });
    expect(c.host).toBe('127.0.0.1');
    expect(c.port).toBe(7878);
    expect(c.registration).toBe(false);
    expect(c.mailFrom).toBe('belfry@localhost');
    expect(c.allowedOrigins).toEqual([]);
    expect(c.plans.free).toMatchObject({
      devices: 3,
      eventsPerDay: 1000,
      statusPages: 1,
      maintenanceWindows: 1,
    });
    expect(c.plans.free).toEqual(DEFAULT_PLANS.free);
  });

  it('uses XDG_DATA_HOME for the data dir', () => {
    expect(defaultDataDir({ XDG_DATA_HOME: '/x' })).toBe('/x/belfry');
  });

  it('lets flags override BELFRY_* variables', () => {
    const c = loadConfig({
      env: {
        BELFRY_PORT: '9000',
        BELFRY_HOST: '0.0.0.0',
        BELFRY_LAN: '1',
        BELFRY_REGISTRATION: 'true',
        BELFRY_ALLOWED_ORIGINS: 'http://a, http://b',
      },
      argv: ['--port', '0', '--data-dir=/tmp/d'],
    });
    expect(c.port).toBe(0);
    expect(c.host).toBe('0.0.0.0');
    expect(c.dataDir).toBe('/tmp/d');
    expect(c.registration).toBe(true);
    expect(c.allowedOrigins).toEqual(['http://a', 'http://b']);
  });

  it('rejects unknown flags and bad values with a readable message', () => {
    expect(() => parseFlags(['--nope', '1'])).toThrow(ConfigError);
    expect(() => loadConfig({ env: {}, argv: ['--port', 'abc'] })).toThrow(/port/);
    expect(() => loadConfig({ env: {}, argv: ['--port'] })).toThrow(/needs a value/);
  });

  it('reads trustProxy as off, a hop count or a list of proxy addresses', () => {
    expect(loadConfig({ env: {} }).trustProxy).toBe(false);
    expect(loadConfig({ env: { BELFRY_TRUST_PROXY: 'false' } }).trustProxy).toBe(false);
    expect(loadConfig({ env: { BELFRY_TRUST_PROXY: '2' } }).trustProxy).toEqual({ hops: 2 });
    expect(loadConfig({ env: {}, argv: ['--trust-proxy', 'loopback, 10.0.0.2'] }).trustProxy).toEqual({
      addresses: ['127.0.0.1', '::1', '10.0.0.2'],
    });
    expect(() => loadConfig({ env: {}, argv: ['--trust-proxy', 'proxy.lan'] })).toThrow(
      /trustProxy: not a hop count or a list of IP addresses: proxy.lan/,
    );
  });

  it('reads plan overrides from plans.json in the data dir', () => {
    const dir = mkdtempSync(join(tmpdir(), 'belfry-cfg-'));
    writeFileSync(join(dir, 'plans.json'), JSON.stringify({ free: { devices: 5 } }));
    const c = loadConfig({ env: {}, argv: ['--data-dir', dir] });
    expect(c.plans.free.devices).toBe(5);
    expect(c.plans.free.eventsPerDay).toBe(1000);
    writeFileSync(join(dir, 'plans.json'), JSON.stringify({ gold: {} }));
    expect(() => loadConfig({ env: {}, argv: ['--data-dir', dir] })).toThrow(ConfigError);
  });

  it('builds the public URL from the listening address unless one is set', () => {
    const c = loadConfig({ env: {}, argv: ['--lan'] });
    expect(publicUrlOf(c, 1234)).toBe('http://127.0.0.1:1234');
    const d = loadConfig({ env: { BELFRY_PUBLIC_URL: 'https://bell.example.com/' } });
    expect(publicUrlOf(d, 1)).toBe('https://bell.example.com');
  });

  it('refuses a non-loopback host unless LAN mode is chosen, and says how to choose it', () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.5', 'belfry.lan']) {
      expect(() => loadConfig({ env: {}, argv: ['--host', host] })).toThrow(ConfigError);
      expect(() => loadConfig({ env: { BELFRY_HOST: host } })).toThrow(/plain HTTP.*--lan \(BELFRY_LAN=1\)/s);
    }
    for (const host of ['127.0.0.1', '127.8.0.2', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1'])
      expect(loadConfig({ env: {}, argv: ['--host', host] })).toMatchObject({ host, lan: false });
  });

  it('--lan (or BELFRY_LAN) binds every interface unless a host is given', () => {
    expect(loadConfig({ env: {}, argv: ['--lan'] })).toMatchObject({ host: '0.0.0.0', lan: true });
    expect(loadConfig({ env: {}, argv: ['--lan', '--port', '9'] })).toMatchObject({
      host: '0.0.0.0',
      port: 9,
    });
    expect(loadConfig({ env: { BELFRY_LAN: 'true' } })).toMatchObject({ host: '0.0.0.0', lan: true });
    expect(loadConfig({ env: { BELFRY_LAN: '1' }, argv: ['--host', '192.168.1.5'] })).toMatchObject({
      host: '192.168.1.5',
      lan: true,
    });
    expect(loadConfig({ env: {}, argv: ['--lan', '--host', '127.0.0.1'] }).lan).toBe(true);
    expect(loadConfig({ env: { BELFRY_LAN: '0' } })).toMatchObject({ host: '127.0.0.1', lan: false });
    expect(() => loadConfig({ env: { BELFRY_LAN: 'maybe' } })).toThrow(/lan/);
  });

  it('self-ping: off by default, 60 s interval; URL and interval from BELFRY_SELF_PING_*, validated', () => {
    const off = loadConfig({ env: {} });
    expect(off.selfPingUrl).toBeUndefined();
    expect(off.selfPingIntervalS).toBe(60);
    const on = loadConfig({
      env: { BELFRY_SELF_PING_URL: 'https://hc.example.com/ping/abc', BELFRY_SELF_PING_INTERVAL_S: '120' },
    });
    expect(on).toMatchObject({ selfPingUrl: 'https://hc.example.com/ping/abc', selfPingIntervalS: 120 });
    expect(() => loadConfig({ env: { BELFRY_SELF_PING_URL: 'not a url' } })).toThrow(/selfPingUrl/);
    expect(() => loadConfig({ env: { BELFRY_SELF_PING_URL: 'ftp://x.example/p' } })).toThrow(/http/);
    expect(() => loadConfig({ env: { BELFRY_SELF_PING_INTERVAL_S: '5' } })).toThrow(/selfPingIntervalS/);
    expect(() => loadConfig({ env: { BELFRY_SELF_PING_INTERVAL_S: 'often' } })).toThrow(/selfPingIntervalS/);
  });

  it('witness probes: two HTTPS-port probes by default; BELFRY_WITNESS_PROBES as a host:port list, validated', () => {
    expect(loadConfig({ env: {} }).witnessProbes).toEqual([
      { host: '1.1.1.1', port: 443 },
      { host: '9.9.9.9', port: 443 },
    ]);
    expect(
      loadConfig({ env: { BELFRY_WITNESS_PROBES: 'gw.lan:80, [2606:4700::1111]:443' } }).witnessProbes,
    ).toEqual([
      { host: 'gw.lan', port: 80 },
      { host: '2606:4700::1111', port: 443 },
    ]);
    expect(() => loadConfig({ env: { BELFRY_WITNESS_PROBES: '1.1.1.1' } })).toThrow(/witnessProbes/);
    expect(() => loadConfig({ env: { BELFRY_WITNESS_PROBES: 'x:70000' } })).toThrow(/witnessProbes/);
    expect(() => loadConfig({ env: { BELFRY_WITNESS_PROBES: ' , ' } })).toThrow(/witnessProbes/);
  });

  it('delivery: BELFRY_RETRY_BASE_S (30 s default) and BELFRY_DELIVERY_API_URLS as a JSON object of known adapters', () => {
    const c = loadConfig({ env: {} });
    expect(c.retryBaseSec).toBe(30);
    expect(c.deliveryApiUrls).toEqual({});
    const d = loadConfig({
      env: {
        BELFRY_RETRY_BASE_S: '1',
        BELFRY_DELIVERY_API_URLS: '{"telegram":"http://127.0.0.1:9/","twilio":"https://tw.example"}',
      },
    });
    expect(d.retryBaseSec).toBe(1);
    expect(d.deliveryApiUrls).toEqual({ telegram: 'http://127.0.0.1:9', twilio: 'https://tw.example' });
    expect(() => loadConfig({ env: { BELFRY_RETRY_BASE_S: '0' } })).toThrow(/retryBaseSec/);
    expect(() => loadConfig({ env: { BELFRY_DELIVERY_API_URLS: '{nope' } })).toThrow(/deliveryApiUrls/);
    expect(() => loadConfig({ env: { BELFRY_DELIVERY_API_URLS: '{"slack":"http://x"}' } })).toThrow(
      /unknown adapter slack/,
    );
    expect(() => loadConfig({ env: { BELFRY_DELIVERY_API_URLS: '{"telegram":"ftp://x"}' } })).toThrow(
      /telegram: expected/,
    );
  });

  it('email inboxes: BELFRY_SMTP_LISTEN (off by default) as host:port, BELFRY_MAIL_DOMAIN defaulting to the public URL host', () => {
    const c = loadConfig({ env: {} });
    expect(c.smtpListen).toBeUndefined();
    expect(c.mailDomain).toBeUndefined();
    expect(mailDomainOf(c, 'http://127.0.0.1:7878')).toBe('localhost');
    expect(mailDomainOf(c, 'http://[::1]:7878')).toBe('localhost');
    expect(mailDomainOf(c, 'https://Belfry.Example.com/base')).toBe('belfry.example.com');
    const d = loadConfig({
      env: { BELFRY_SMTP_LISTEN: '127.0.0.1:2525', BELFRY_MAIL_DOMAIN: 'Mail.Example.COM' },
    });
    expect([d.smtpListen, d.mailDomain]).toEqual(['127.0.0.1:2525', 'mail.example.com']);
    expect(mailDomainOf(d, 'http://127.0.0.1:7878')).toBe('mail.example.com');
    const f = loadConfig({
      env: { BELFRY_SMTP_LISTEN: '127.0.0.1:2525' },
      argv: ['--smtp-listen', '[::1]:25', '--mail-domain=in.example.org'],
    });
    expect([f.smtpListen, f.mailDomain]).toEqual(['[::1]:25', 'in.example.org']);
    expect(parseHostPort('[::1]:25')).toEqual({ host: '::1', port: 25 });
    expect(parseHostPort('localhost:0')).toEqual({ host: 'localhost', port: 0 });
    for (const bad of ['2525', 'host:', 'host:99999', ':25', 'a b:25'])
      expect(() => loadConfig({ env: { BELFRY_SMTP_LISTEN: bad } })).toThrow(
        /smtpListen: must be host:port.*\(set by --smtp-listen or BELFRY_SMTP_LISTEN\)/,
      );
    expect(() => loadConfig({ env: { BELFRY_MAIL_DOMAIN: 'not a domain' } })).toThrow(
      /mailDomain: must be a domain/,
    );
    expect(() => loadConfig({ env: { BELFRY_MAIL_DOMAIN: '-x.example' } })).toThrow(/mailDomain/);
    // No authentication on the listener: a non-loopback address needs LAN mode.
    expect(() => loadConfig({ env: { BELFRY_SMTP_LISTEN: '0.0.0.0:25' } })).toThrow(
      /smtpListen: host 0\.0\.0\.0.*--lan/,
    );
    expect(loadConfig({ env: { BELFRY_SMTP_LISTEN: '0.0.0.0:25', BELFRY_LAN: '1' } }).smtpListen).toBe(
      '0.0.0.0:25',
    );
    const help = helpText({});
    expect(help).toContain('--smtp-listen VALUE');
    expect(help).toContain('(env BELFRY_SMTP_LISTEN)');
    expect(help).toContain('--mail-domain VALUE');
    expect(help).toContain('(env BELFRY_MAIL_DOMAIN)');
  });
});
