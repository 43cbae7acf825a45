import type { BusMessage } from '../lib/bus';

/**
 * The two audience shapes of a message frame, each serialised at most once per message.
 * - `belfry` (/ws): the spec's Message: id, appid, message, title, priority, date, extras (only when
 *   present), senderName. `read` never appears on a live frame: a message is unread when it arrives.
 * - `legacy` (a WebSocket upgrade on /stream, contract "Compatibility"): exactly the older protocol's
 *   Message model, every field non-null, extras only when present, nothing else.
 */
export type FrameShape = 'belfry' | 'legacy';

export function messageFrame(m: BusMessage, shape: FrameShape): Buffer {
  const out: Record<string, unknown> = {
    id: m.id,
    appid: m.appid,
    message: m.message ?? '',
    title: m.title ?? '',
    priority: m.priority ?? 0,
    date: m.date,
  };
  if (m.extras !== undefined && m.extras !== null) out.extras = m.extras;
  if (shape === 'belfry') out.senderName = m.senderName ?? '';
  return Buffer.from(JSON.stringify(out));
}

/**
 * A service frame (docs/api.md, "Live streams"), only for `/ws?events=1` sockets: `{kind, appid, at, data}`,
 * no top-level `id`, so a client tells it from a Message by `kind`.
 */
export function serviceFrame(kind: string, appid: number, at: string, data: Record<string, unknown>): Buffer {
  return Buffer.from(JSON.stringify({ kind, appid, at, data }));
}

/** One named SSE event. Only named events are sent (spec "Events"): no bare `data:` frames. */
export function sseEvent(event: string, data: unknown): Buffer {
  return Buffer.from(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export const SSE_KEEPALIVE_FRAME = Buffer.from(': keepalive\n\n');
