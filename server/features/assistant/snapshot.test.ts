import { describe, expect, it } from 'vitest';
import { scrub } from './snapshot';

describe('scrub', () => {
  it('masks URLs, email addresses and token-like runs in names, keeps ordinary words', () => {
    expect(scrub('prod api')).toBe('prod api');
    expect(scrub('hook https://hooks.example/T000/B000/xyz?token=abc')).toBe('hook [url]');
    expect(scrub('mail ops@example.org now')).toBe('mail [address] now');
    expect(scrub('key AbFg7w9ZK2mQ8pLs0tXy1v3n')).toBe('key [token]');
    expect(scrub('x'.repeat(500))).toBe('[token]');
    expect(scrub('a '.repeat(300)).length).toBe(200);
  });
});
