import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  hasUnsealedSecrets,
  SECRET_MASK as M,
  maskUrl,
  openDeliveryConfig,
  sealDeliveryConfig,
  validateDeliveryConfig,
} from './delivery-config';

describe('maskUrl', () => {
  it('returns a URL without credentials or secret-looking parameters unchanged', () => {
    expect(maskUrl('https://hooks.example/in?team=ops&x=%20y')).toBe(
      'https://hooks.example/in?team=ops&x=%20y',
    );
  });

  it('masks user, password and the values of secret-looking query parameters', () => {
    expect(maskUrl('https://u:p@h.example/a?access_token=1&apiKey=2&sig=3&team=ops')).toBe(
      `https://${M}:${M}@h.example/a?access_token=${M}&apiKey=${M}&sig=${M}&team=ops`,
    );
    expect(maskUrl('https://u@h.example/')).toBe(`https://${M}@h.example/`);
  });
});

describe('sealing', () => {
  const key = randomBytes(32);
  const config = validateDeliveryConfig({
    webhook: { url: 'https://u:p@h.example/in', secret: 's3cret', headers: { Authorization: 'Bearer b' } },
    email: { to: ['a@example.com'] },
  });

  it('keeps no secret in clear and opens back to the same config', () => {
    const stored = JSON.stringify(sealDeliveryConfig(key, config));
    expect(stored).not.toMatch(/s3cret|Bearer|h\.example/);
    expect(stored).toContain('a@example.com');
    expect(openDeliveryConfig(key, stored)).toEqual(config);
    expect(hasUnsealedSecrets(JSON.parse(stored))).toBe(false);
    expect(hasUnsealedSecrets(config)).toBe(true);
  });

  it('reads secrets sealed under another key as absent instead of failing', () => {
    const stored = JSON.stringify(sealDeliveryConfig(key, config));
    expect(openDeliveryConfig(randomBytes(32), stored).webhook).toEqual({
      enabled: true,
      minPriority: 0,
      delaySec: 300,
    });
  });
});
