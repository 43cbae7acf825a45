import type { z } from 'zod';
import type { AppContext } from '../context';

/**
 * One external delivery method (email, SMS, call, Slack, …): its settings schema inside a channel's
 * `deliveryConfig`, which of those settings are secrets, and how it sends. Every adapter lives in
 * `server/delivery/adapters/<name>.ts` and is listed once in `server/delivery/registry.ts`; the outbox
 * (server/delivery/outbox/) and the deliveryConfig validation (channels/delivery-config.ts) only ever go
 * through the registry (conventions habit 10: no `adapter === …` outside it).
 */
export interface DeliveryAdapter {
  /** The key in `deliveryConfig` and the `adapter` of outbox entries. */
  readonly name: string;
  /** Validates one adapter object (the common `enabled`, `minPriority`, `delaySec` included). */
  readonly schema: z.ZodType<Record<string, unknown>>;
  /** Top-level fields whose whole value is a secret (masked in output, sealed at rest). */
  readonly secrets: readonly string[];
  /** Objects whose every value is a secret (webhook `headers`). */
  readonly secretMaps?: readonly string[];
  /** The field holding a user-chosen URL whose credentials and secret-looking parameters are masked. */
  readonly url?: string;
  /**
   * Sends one item. Resolves when the service accepted it; throws DeliveryError otherwise (any other
   * throw is treated as a retryable network error). Must honour `io.signal` (connect 5 s, total 15 s,
   * or the server stopping).
   */
  send(io: SendIo, config: Record<string, unknown>, item: DeliveryItem): Promise<void>;
}

/** What an adapter sends: a re-delivered message, a digest, or a test (wire rules §6.2). */
export interface DeliveryItem {
  /** The outbox entry's id (webhook `X-Belfry-Delivery`, the same on every retry). */
  outboxId: number;
  kind: 'redelivery' | 'digest' | 'test';
  /** null for digests and tests. */
  messageId: number | null;
  title: string;
  message: string;
  priority: number;
  /** Unix ms: the message's date (digest: the end of the quiet window; test: now). */
  date: number;
  extras?: Record<string, unknown>;
  channel: { id: number; name: string };
  links: {
    /** `{publicUrl}/inbox?channel={appid}#message-{id}` (digest/test: the channel's inbox). */
    message: string;
    /** Signed `{publicUrl}/m/read?token=…`; null for digests and tests. */
    read: string | null;
  };
}

export interface SendIo {
  readonly ctx: AppContext;
  /** Aborts at the adapter call's total time limit (15 s) or when the server stops. */
  readonly signal: AbortSignal;
  /**
   * Whether loopback/private/link-local targets may be reached: false only when
   * BELFRY_BLOCK_PRIVATE_TARGETS is on and the channel's owner is not an administrator.
   */
  readonly allowPrivate: boolean;
}

/**
 * A failed send. `retryable`: network errors, 408, 429, 5xx, SMTP 4xx; permanent: other 4xx, SMTP 5xx,
 * authentication. `retryAfterSec` from a `Retry-After` header (the outbox honours it when larger than its
 * backoff, capped at an hour). `message` is what the deliveries log and `delivery/test` show, e.g.
 * `HTTP 404: no_service`, `HTTP 429: rate limited`, `connect ECONNREFUSED 127.0.0.1:9`,
 * `SMTP 550: mailbox unavailable`. It never contains a secret (webhook URLs, tokens).
 */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterSec?: number,
  ) {
    super(message);
    this.name = 'DeliveryError';
  }
}

/** Connect and total time limits of one adapter call (§6.1). */
export const DELIVERY_CONNECT_TIMEOUT_MS = 5_000;
export const DELIVERY_TOTAL_TIMEOUT_MS = 15_000;
