import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AppContext } from '../context';
import { EventBus } from '../lib/bus';
import { LiveHub, STATUS_SIGNAL_COALESCE_MS } from './hub';

/** A stand-in SSE response that records what is written. */
function fakeResponse() {
  const res = Object.assign(new EventEmitter(), {
    destroyed: false,
    writableEnded: false,
    writableLength: 0,
    chunks: [] as string[],
    write(chunk: Buffer) {
      res.chunks.push(chunk.toString());
      return true;
    },
    end() {
      res.writableEnded = true;
    },
  });
  return res;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('LiveHub SSE coalescing with the system clock', () => {
  it('sends the held channel:status_changed from a real timer when its second is up', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const bus = new EventBus();
    const ctx = {
      clock: { now: () => Date.now() },
      bus,
      db: {},
      log: { debug() {}, info() {}, warn() {}, error() {} },
    } as unknown as AppContext;
    const hub = new LiveHub(ctx, { audience: { recipients: (_c, o) => [o], mutedDevices: () => new Set() } });
    hub.subscribe();
    const res = fakeResponse();
    hub.addStream(res as unknown as ServerResponse, {
      principal: { kind: 'device', userId: 1, deviceId: 1 } as never,
      token: 't',
      meta: { ip: '', userAgent: '', path: '/stream' },
    });
    const emit = () => bus.emit('channel:status_changed', { appid: 5, userIds: [1] });
    const sent = () => res.chunks.filter((c) => c.includes('channel:status_changed')).length;
    emit();
    vi.advanceTimersByTime(300);
    emit();
    emit();
    expect(sent()).toBe(1);
    vi.advanceTimersByTime(STATUS_SIGNAL_COALESCE_MS - 301);
    expect(sent()).toBe(1);
    vi.advanceTimersByTime(1);
    expect(sent()).toBe(2);
    vi.advanceTimersByTime(10 * STATUS_SIGNAL_COALESCE_MS);
    expect(sent()).toBe(2);
    await hub.stop();
  });
});
