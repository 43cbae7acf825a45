import { createHmac } from 'node:crypto';

/**
 * Webhook signing (wire rules §7.5), shared by the `webhook` adapter and question callbacks:
 * `X-Belfry-Timestamp: {unix seconds}` and, with a secret,
 * `X-Belfry-Signature: sha256={hex HMAC-SHA256(secret, "{timestamp}.{raw body}")}`.
 */
export function signBody(secret: string, timestampSec: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestampSec}.${body}`).digest('hex')}`;
}

/** The timestamp header, and the signature when there is a secret, for a body sent at `nowMs`. */
export function signatureHeaders(
  secret: string | undefined,
  nowMs: number,
  body: string,
): Record<string, string> {
  const ts = Math.floor(nowMs / 1000);
  const out: Record<string, string> = { 'X-Belfry-Timestamp': String(ts) };
  if (secret) out['X-Belfry-Signature'] = signBody(secret, ts, body);
  return out;
}
