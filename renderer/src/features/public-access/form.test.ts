import { describe, expect, it } from 'vitest';
import { bodyOf, formOf, targetText } from './form';
import type { TunnelRecord } from './types';

const base: TunnelRecord = {
  provider: 'none',
  status: 'off',
  publicUrl: null,
  target: '127.0.0.1:4100',
  lastCheck: null,
  error: null,
};

const stored = {
  host: 'vps.example.net',
  port: 2222,
  user: 'tunnel',
  privateKey: '********',
  remotePort: 8080,
  publicUrl: 'https://b.example.net',
};

describe('public access form', () => {
  it('a stored key stays stored: empty field, "********" sent back', () => {
    const f = formOf({
      ...base,
      provider: 'ssh',
      ssh: stored,
    });
    expect(f.ssh.privateKey).toBe('');
    expect(f.ssh.port).toBe('2222');
    expect(bodyOf(f)).toEqual({
      provider: 'ssh',
      ssh: { ...stored, bindAddress: 'localhost', hostFingerprint: null },
    });
    const pasted = bodyOf({ ...f, ssh: { ...f.ssh, privateKey: 'NEWKEY' } }).ssh as Record<string, unknown>;
    expect(pasted.privateKey).toBe('NEWKEY');
  });

  it('no stored secret and nothing typed: the field is left out, so the server names it', () => {
    const f = formOf(base);
    const body = bodyOf({ ...f, provider: 'ssh' }).ssh as Record<string, unknown>;
    expect(JSON.parse(JSON.stringify(body))).toEqual({
      port: 22,
      bindAddress: 'localhost',
      hostFingerprint: null,
    });
    expect(bodyOf({ ...f, provider: 'ngrok' })).toEqual({
      provider: 'ngrok',
      ngrok: { authtoken: undefined, domain: null },
    });
  });

  it('a number field that is not a number goes as typed (the server answers ssh.port: …)', () => {
    const f = formOf(base);
    const body = bodyOf({ ...f, provider: 'ssh', ssh: { ...f.ssh, port: '22x' } }).ssh as Record<
      string,
      unknown
    >;
    expect(body.port).toBe('22x');
  });

  it('cloudflared: a stored token is kept, none means a quick tunnel', () => {
    const stored = formOf({
      ...base,
      provider: 'cloudflared',
      cloudflared: { token: '********', hostname: 'b.x' },
    });
    expect(bodyOf(stored)).toEqual({
      provider: 'cloudflared',
      cloudflared: { token: '********', hostname: 'b.x' },
    });
    expect(bodyOf({ ...formOf(base), provider: 'cloudflared' })).toEqual({
      provider: 'cloudflared',
      cloudflared: { token: null, hostname: null },
    });
  });

  it('shows the target in either shape', () => {
    expect(targetText('127.0.0.1:1')).toBe('127.0.0.1:1');
    expect(targetText({ host: '127.0.0.1', port: 2 })).toBe('127.0.0.1:2');
    expect(targetText(null)).toBe('not running');
  });
});
