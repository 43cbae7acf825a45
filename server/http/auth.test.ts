import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { kindOfToken, readCookie, readCredential } from './auth';

function req(headers: Record<string, string>, query: Record<string, string> = {}): Request {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { headers: lower, query } as unknown as Request;
}

const all = {
  'X-Service-Key': 'service',
  'X-Legacy-Key': 'legacy',
  Authorization: 'Bearer bearer',
  Cookie: 'other=1; service-client-token=cookie',
};

describe('readCredential', () => {
  it('takes X-Service-Key first when every transport is present', () => {
    expect(readCredential(req(all, { token: 'query' }))).toEqual({
      transport: 'service-key',
      token: 'service',
    });
  });

  it('takes X-Legacy-Key second, and X-Gotify-Key at the same place', () => {
    const { 'X-Service-Key': _, ...rest } = all;
    expect(readCredential(req(rest, { token: 'query' }))).toEqual({
      transport: 'legacy-key',
      token: 'legacy',
    });
    const gotify = { ...rest, 'X-Legacy-Key': '', 'X-Gotify-Key': 'gotify' };
    expect(readCredential(req(gotify, { token: 'query' }))).toEqual({
      transport: 'legacy-key',
      token: 'gotify',
    });
  });

  it('takes Bearer third, then ?token=, then the cookie', () => {
    expect(readCredential(req({ Authorization: 'Bearer b', Cookie: all.Cookie }, { token: 'q' }))).toEqual({
      transport: 'bearer',
      token: 'b',
    });
    expect(readCredential(req({ Cookie: all.Cookie }, { token: 'q' }))).toEqual({
      transport: 'query',
      token: 'q',
    });
    expect(readCredential(req({ Cookie: all.Cookie }))).toEqual({ transport: 'cookie', token: 'cookie' });
  });

  it('reads Basic at the Authorization position, splitting at the first colon', () => {
    const basic = `Basic ${Buffer.from('a@b.c:pa:ss').toString('base64')}`;
    expect(readCredential(req({ Authorization: basic }, { token: 'q' }))).toEqual({
      transport: 'basic',
      email: 'a@b.c',
      password: 'pa:ss',
    });
  });

  it('lets a present but malformed Authorization header win over later transports', () => {
    expect(readCredential(req({ Authorization: 'Token abc' }, { token: 'q' }))).toEqual({
      transport: 'malformed-authorization',
    });
  });

  it('returns null when no transport is present', () => {
    expect(readCredential(req({}))).toBeNull();
  });
});

describe('kindOfToken', () => {
  it('maps the account-facing prefixes and ignores the rest', () => {
    const body = 'x'.repeat(22);
    expect(kindOfToken(`C${body}`)).toBe('device');
    expect(kindOfToken(`M${body}`)).toBe('api');
    expect(kindOfToken(`A${body}`)).toBe('app');
    expect(kindOfToken(`S${body}`)).toBe('share');
    expect(kindOfToken(`W${body}`)).toBeNull();
    expect(kindOfToken('Cshort')).toBeNull();
  });
});

describe('readCookie', () => {
  it('finds a cookie among others and decodes it', () => {
    expect(readCookie('a=1; service-client-token=C%41; b=2', 'service-client-token')).toBe('CA');
    expect(readCookie('a=1', 'service-client-token')).toBeUndefined();
  });
});
