import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AppContext } from '../../context';
import { type DeliveryAdapter, DeliveryError, type DeliveryItem } from '../adapter';
import { retryDelaySec, sendOnce } from './service';

const item: DeliveryItem = {
  outboxId: 7,
  kind: 'redelivery',
  messageId: 1,
  title: 't',
  message: 'm',
  priority: 5,
  date: 0,
  channel: { id: 1, name: 'c' },
  links: { message: 'http://x/inbox?channel=1#message-1', read: null },
};

function adapter(send: DeliveryAdapter['send']): DeliveryAdapter {
  return { name: 'fake', schema: {} as DeliveryAdapter['schema'], secrets: [], send };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('retryDelaySec', () => {
  it('doubles from BASE up to an hour and honours a larger Retry-After, capped at an hour', () => {
    expect([1, 2, 3, 4, 7, 8, 20].map((n) => retryDelaySec(30, n))).toEqual([
      30, 60, 120, 240, 1920, 3600, 3600,
    ]);
    expect(retryDelaySec(30, 1, 500)).toBe(500);
    expect(retryDelaySec(30, 3, 100)).toBe(120);
    expect(retryDelaySec(30, 1, 99_999)).toBe(3600);
    expect(retryDelaySec(1, 1)).toBe(1);
  });
});

describe('sendOnce', () => {
  it('aborts a send that hangs at 15 s and reports a retryable timeout, even when the adapter ignores the signal', async () => {
    vi.useFakeTimers();
    const ctx = {} as AppContext;
    let signal: AbortSignal | undefined;
    const hang = adapter((io) => {
      signal = io.signal;
      return new Promise<void>(() => {});
    });
    const p = sendOnce(ctx, hang, 'fake', {}, item, true);
    await vi.advanceTimersByTimeAsync(14_999);
    expect(signal!.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(p).resolves.toEqual({
      id: 7,
      ok: false,
      error: 'timeout after 15 s',
      retryable: true,
      stopped: false,
    });
    expect(signal!.aborted).toBe(true);
  });

  it('maps DeliveryError, other throws and a missing adapter to outcomes', async () => {
    const ctx = {} as AppContext;
    const limited = adapter(async () => {
      throw new DeliveryError('HTTP 429: slow down', true, 42);
    });
    expect(await sendOnce(ctx, limited, 'fake', {}, item, true)).toEqual({
      id: 7,
      ok: false,
      error: 'HTTP 429: slow down',
      retryable: true,
      retryAfterSec: 42,
      stopped: false,
    });
    const broken = adapter(async () => {
      throw new TypeError('boom');
    });
    expect(await sendOnce(ctx, broken, 'fake', {}, item, true)).toMatchObject({
      error: 'boom',
      retryable: true,
    });
    expect(await sendOnce(ctx, undefined, 'pigeon', {}, item, true)).toMatchObject({
      ok: false,
      error: 'unknown adapter "pigeon"',
      retryable: false,
    });
  });
});
