import { describe, expect, it } from 'vitest';
import { formatDuration } from './messages';

describe('source messages', () => {
  it('formatDuration shows the two largest units', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(42_000)).toBe('42s');
    expect(formatDuration(310_000)).toBe('5m 10s');
    expect(formatDuration((2 * 86_400 + 3 * 3_600 + 59) * 1000)).toBe('2d 3h');
    expect(formatDuration(2 * 86_400_000 + 5 * 60_000)).toBe('2d');
    expect(formatDuration(3_600_000)).toBe('1h');
  });
});
