import { z } from 'zod';
import { type DeliveryAdapter, DeliveryError, type DeliveryItem } from '../../server/delivery/adapter';
import { overrideAdapter } from '../../server/delivery/registry';
import type { TestServer } from './test-server';

/** What one send did next: accept, fail (retryable or not, with a Retry-After), or hang until aborted. */
export type FakeStep =
  | 'ok'
  | 'hang'
  | { error: string; retryable: boolean; retryAfterSec?: number }
  | { throw: string };

export interface RecordedSend {
  /** The server clock (ManualClock) when the send started. */
  at: number;
  config: Record<string, unknown>;
  item: DeliveryItem;
  allowPrivate: boolean;
  /** Set when the send's signal aborted (15 s limit or server stop). */
  abortedWith?: string;
}

export interface FakeDeliveryAdapter {
  adapter: DeliveryAdapter;
  sends: RecordedSend[];
  /** Steps used by the next sends, in order; when none is left a send succeeds. */
  script(...steps: FakeStep[]): void;
  /** Steps for the next sends of one channel only (taken before the shared ones). */
  scriptFor(channelId: number, ...steps: FakeStep[]): void;
  /** Sends currently waiting on 'hang'. */
  readonly hanging: number;
}

/**
 * A recording delivery adapter for the outbox's state machine: `installFakeAdapter(t, 'webhook')` makes
 * that server send every `webhook` item through it (registry.overrideAdapter), without the network.
 */
export function fakeDeliveryAdapter(name: string, now: () => number): FakeDeliveryAdapter {
  const steps: FakeStep[] = [];
  const perChannel = new Map<number, FakeStep[]>();
  const sends: RecordedSend[] = [];
  let hanging = 0;
  const adapter: DeliveryAdapter = {
    name,
    schema: z.record(z.string(), z.unknown()),
    secrets: [],
    async send(io, config, item) {
      const rec: RecordedSend = { at: now(), config, item, allowPrivate: io.allowPrivate };
      sends.push(rec);
      const step = perChannel.get(item.channel.id)?.shift() ?? steps.shift() ?? 'ok';
      if (step === 'ok') return;
      if (step === 'hang') {
        hanging++;
        try {
          await new Promise<never>((_, reject) => {
            const fail = () => {
              rec.abortedWith = String((io.signal.reason as Error | undefined)?.message ?? io.signal.reason);
              reject(io.signal.reason);
            };
            if (io.signal.aborted) fail();
            else io.signal.addEventListener('abort', fail, { once: true });
          });
        } finally {
          hanging--;
        }
      }
      if (typeof step === 'object' && 'throw' in step) throw new Error(step.throw);
      if (typeof step === 'object' && 'error' in step)
        throw new DeliveryError(step.error, step.retryable, step.retryAfterSec);
    },
  };
  return {
    adapter,
    sends,
    script: (...s) => {
      steps.push(...s);
    },
    scriptFor: (channelId, ...s) => {
      perChannel.set(channelId, [...(perChannel.get(channelId) ?? []), ...s]);
    },
    get hanging() {
      return hanging;
    },
  };
}

export function installFakeAdapter(t: TestServer, name: string): FakeDeliveryAdapter {
  const fake = fakeDeliveryAdapter(name, () => t.server.ctx.clock.now());
  overrideAdapter(t.server.ctx, name, fake.adapter);
  return fake;
}
