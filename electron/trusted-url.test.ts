import { describe, expect, it } from 'vitest';
import { isAppUrl, isSafeExternalUrl } from './trusted-url';

describe('URL guards', () => {
  const origin = 'http://127.0.0.1:7878';
  it('isAppUrl accepts only the exact app origin', () => {
    expect(isAppUrl('http://127.0.0.1:7878/inbox?x=1', origin)).toBe(true);
    expect(isAppUrl('http://127.0.0.1:7879/', origin)).toBe(false);
    expect(isAppUrl('https://127.0.0.1:7878/', origin)).toBe(false);
    expect(isAppUrl('http://localhost:7878/', origin)).toBe(false);
    expect(isAppUrl('http://127.0.0.1:7878@evil.example/', origin)).toBe(false);
    expect(isAppUrl('file:///etc/passwd', origin)).toBe(false);
    expect(isAppUrl('not a url', origin)).toBe(false);
  });
  it('isSafeExternalUrl lets out plain http(s) links only', () => {
    expect(isSafeExternalUrl('https://example.com/docs')).toBe(true);
    expect(isSafeExternalUrl('http://example.com')).toBe(true);
    for (const bad of [
      'javascript:alert(1)',
      'file:///etc/passwd',
      'smb://host/share',
      'ms-msdt:/id',
      'https://user:pw@example.com/',
      'https://exa mple.com/',
      'https://example.com/\nx',
      'data:text/html,hi',
      '',
      `https://example.com/${'a'.repeat(3000)}`,
    ])
      expect(isSafeExternalUrl(bad), bad).toBe(false);
    expect(isSafeExternalUrl(42 as unknown as string)).toBe(false);
  });
});
