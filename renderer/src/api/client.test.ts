import { afterEach, describe, expect, test, vi } from 'vitest';
import { ApiError, api, errorText, retryWhen } from './client';

/** The API client's reading of a 429: when may the request be sent again (issue 20, sign-in throttling). */
function answer(status: number, body: unknown, headers: Record<string, string> = {}) {
  vi.stubGlobal('fetch', async () => new Response(JSON.stringify(body), { status, headers }));
}

async function failure(): Promise<ApiError> {
  try {
    await api('POST', '/auth/local/login', { basic: { email: 'a@example.com', password: 'x' } });
  } catch (err) {
    if (err instanceof ApiError) return err;
  }
  throw new Error('expected an ApiError');
}

const TOO_MANY = {
  error: 'Too Many Requests',
  errorCode: 429,
  errorDescription: 'too many failed attempts; try again later',
};

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('ApiError.retryAfter', () => {
  test('api reads Retry-After seconds on a 429 and the text says when to try again', async () => {
    answer(429, TOO_MANY, { 'Retry-After': '42' });
    const err = await failure();
    expect(err.retryAfter).toBe(42);
    expect(errorText(err)).toMatch(
      /^too many failed attempts\. You can try again in 42 seconds \(at .+\)\.$/,
    );
  });

  test('api reads a Retry-After date on a 429', async () => {
    answer(429, TOO_MANY, { 'Retry-After': new Date(Date.now() + 120_000).toUTCString() });
    const err = await failure();
    expect(err.retryAfter).toBeGreaterThanOrEqual(118);
    expect(err.retryAfter).toBeLessThanOrEqual(120);
    expect(errorText(err)).toContain('You can try again in 2 minutes');
  });

  test('api falls back to the body retryAfter on a 429 without the header', async () => {
    answer(429, { ...TOO_MANY, retryAfter: 7 });
    expect((await failure()).retryAfter).toBe(7);
  });

  test('api leaves retryAfter null when the answer is not a 429', async () => {
    answer(
      401,
      { error: 'Unauthorized', errorCode: 401, errorDescription: 'wrong username or password' },
      {
        'Retry-After': '5',
      },
    );
    const err = await failure();
    expect(err.retryAfter).toBeNull();
    expect(errorText(err)).toBe('wrong username or password');
  });
});

describe('retryWhen', () => {
  test('retryWhen names seconds under a minute and whole minutes above, with the clock time', () => {
    const now = new Date(2026, 0, 1, 9, 30, 0).getTime();
    expect(retryWhen(1, now)).toMatch(/^in 1 second \(at .*30.*\)$/);
    expect(retryWhen(59, now)).toMatch(/^in 59 seconds \(at /);
    expect(retryWhen(61, now)).toMatch(/^in 2 minutes \(at .*31.*\)$/);
  });
});
