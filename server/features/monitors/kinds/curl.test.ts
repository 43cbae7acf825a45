import { describe, expect, it } from 'vitest';
import { firstUrl, parseCurl } from './curl';

describe('parseCurl', () => {
  it('reads a browser "Copy as cURL" line', () => {
    expect(
      parseCurl(
        `curl 'https://app.test/api/login' -H 'accept: application/json' -H 'content-type: application/json' --data-raw '{"u":"ann"}' --compressed`,
      ),
    ).toEqual({
      method: 'POST',
      url: 'https://app.test/api/login',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: '{"u":"ann"}',
      basicAuth: null,
      followRedirects: false,
      ignoreTlsErrors: false,
    });
  });

  it('takes bundled and attached short options, --opt=value, and several -d joined by &', () => {
    expect(parseCurl(`curl -sSLk -XPATCH -H'X-A: 1' --url=http://h.test/p -d a=1 --data b=2`)).toMatchObject({
      method: 'PATCH',
      url: 'http://h.test/p',
      headers: { 'X-A': '1' },
      body: 'a=1&b=2',
      followRedirects: true,
      ignoreTlsErrors: true,
    });
  });

  it('handles --json, -u without a password, -I, -G, -A, -e, -b, $VAR and a URL without a scheme', () => {
    expect(parseCurl(`curl --json '{"a":1}' https://h.test/`)).toMatchObject({
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: '{"a":1}',
    });
    expect(parseCurl('curl -u ann h.test/x')).toMatchObject({
      url: 'http://h.test/x',
      basicAuth: { username: 'ann', password: '' },
    });
    expect(parseCurl('curl -I https://h.test')).toMatchObject({ method: 'HEAD' });
    expect(parseCurl('curl -G https://h.test/s?a=1 -d q=x')).toMatchObject({
      method: 'GET',
      url: 'https://h.test/s?a=1&q=x',
      body: '',
    });
    expect(parseCurl('curl -A bot/1 -e https://r.test -b "sid=1" https://h.test')).toMatchObject({
      headers: { 'User-Agent': 'bot/1', Referer: 'https://r.test', Cookie: 'sid=1' },
    });
    expect(parseCurl('curl -H "Authorization: Bearer $TOKEN" https://h.test')).toMatchObject({
      headers: { Authorization: 'Bearer $TOKEN' },
    });
  });

  it('skips the values of ignored options and reads only the first command', () => {
    expect(
      parseCurl('curl -o out.json -w "%{http_code}" --max-time 5 https://h.test/a | jq .'),
    ).toMatchObject({
      url: 'https://h.test/a',
      method: 'GET',
    });
    expect(parseCurl("curl $'https://h.test/a\\'b'")).toMatchObject({ url: "https://h.test/a'b" });
  });

  it('returns null without a URL and an error for other schemes', () => {
    expect(parseCurl('curl -s')).toBeNull();
    expect(parseCurl('')).toBeNull();
    expect(parseCurl('curl ftp://h.test/f')).toEqual({
      error: 'ftp URLs are not supported (http and https only)',
    });
  });
});

describe('firstUrl', () => {
  it('finds the first http(s) URL without trailing punctuation', () => {
    expect(firstUrl('see (https://a.test/x?y=1). or http://b.test')).toBe('https://a.test/x?y=1');
    expect(firstUrl('no links here, ftp://c.test')).toBeNull();
  });
});
