import { describe, expect, it } from 'vitest';
import { signatureHeaders, signBody } from './signature';

describe('webhook signature (§7.5)', () => {
  it('is sha256= hex HMAC-SHA256 of "{timestamp}.{body}" (a known vector)', () => {
    // echo -n '1700000000.{"a":1}' | openssl dgst -sha256 -hmac s3cret
    expect(signBody('s3cret', 1700000000, '{"a":1}')).toBe(
      'sha256=1698a50bc74d1ff1db85c4e0a5297c2ad9fdba245d5737cdb789e4cc6e098940',
    );
    expect(signBody('s3cret', 1700000001, '{"a":1}')).not.toBe(signBody('s3cret', 1700000000, '{"a":1}'));
  });

  it('headers: the unix-seconds timestamp always, the signature only with a secret', () => {
    expect(signatureHeaders(undefined, 1_700_000_000_999, '{}')).toEqual({
      'X-Belfry-Timestamp': '1700000000',
    });
    expect(signatureHeaders('k', 1_700_000_000_999, '{}')).toEqual({
      'X-Belfry-Timestamp': '1700000000',
      'X-Belfry-Signature': signBody('k', 1700000000, '{}'),
    });
  });
});
