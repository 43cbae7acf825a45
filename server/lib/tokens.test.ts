import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateToken, issueToken, TOKEN_LENGTH, tokenDigest, tokenHint, tokenPrefix } from './tokens';

describe('tokens', () => {
  it('digest is the hex SHA-256 of the token, as stored digests were written', () => {
    // Stored digests predate the one-shot hash: the function must stay bit for bit the same.
    expect(tokenDigest('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(tokenDigest('Aé\u{1F514}x')).toBe(createHash('sha256').update('Aé\u{1F514}x').digest('hex'));
  });

  it('are a prefix plus 22 characters of [A-Za-z0-9]', () => {
    for (const prefix of ['A', 'S', 'M', 'C', 'H', 'R', 'T', 'W'] as const) {
      const t = generateToken(prefix);
      expect(t).toMatch(new RegExp(`^${prefix}[A-Za-z0-9]{22}$`));
      expect(tokenPrefix(t)).toBe(prefix);
    }
  });

  it('do not repeat and use the whole alphabet', () => {
    const seen = new Set<string>();
    const chars = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const t = generateToken('C');
      seen.add(t);
      for (const c of t.slice(1)) chars.add(c);
    }
    expect(seen.size).toBe(2000);
    expect(chars.size).toBe(62);
  });

  it('are stored as a SHA-256 digest with a masked hint of the same length', () => {
    const { token, digest, hint } = issueToken('M');
    expect(digest).toBe(tokenDigest(token));
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(hint).toHaveLength(TOKEN_LENGTH);
    expect(hint.slice(0, 3)).toBe(token.slice(0, 3));
    expect(hint.slice(-4)).toBe(token.slice(-4));
    expect(hint.slice(3, -4)).toMatch(/^\*+$/);
    expect(tokenHint('abc')).toBe('***');
  });

  it('rejects values of the wrong length or prefix', () => {
    expect(tokenPrefix('Z'.repeat(23))).toBeNull();
    expect(tokenPrefix('A'.repeat(22))).toBeNull();
  });
});
