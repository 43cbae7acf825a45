import type { AppContext } from '../../context';
import { ApiError } from '../../http/errors';
import { channelAudience } from '../channels/service';
import { findChannel } from '../channels/store';
import { isCovered } from '../maintenance/coverage';
import { SILENT_EXTRA } from '../maintenance/silent';
import { type SendInput, sendMessages } from '../messages/service';

/**
 * What every source family (heartbeats, monitors, later metric sources and web scripts) shares when it
 * writes to a channel (docs/api.md, "Messages created by sources"): the duration format of message
 * texts, the quota-skipping send and the SSE `channel:status_changed` signal.
 */

/** Recovery and resolved messages (§0.4). */
export const RECOVERY_PRIORITY = 2;

/** Two largest units: `2d 3h`, `5m 10s`, `42s` (§0.4). */
export function formatDuration(ms: number): string {
  let rest = Math.max(0, Math.floor(ms / 1000));
  const parts: [number, string][] = [];
  for (const [size, unit] of [
    [86_400, 'd'],
    [3_600, 'h'],
    [60, 'm'],
    [1, 's'],
  ] as const) {
    parts.push([Math.floor(rest / size), unit]);
    rest %= size;
  }
  const first = parts.findIndex(([n]) => n > 0);
  if (first < 0) return '0s';
  const shown = [parts[first]!];
  const second = parts[first + 1];
  if (second && second[0] > 0) shown.push(second);
  return shown.map(([n, u]) => `${n}${u}`).join(' ');
}

export interface SourceRef {
  kind: string;
  id: number;
  name: string;
  channelId: number;
}

/**
 * `extras` of a source message: `service::source` names the source and the event, plus the id of a
 * sub-record where there is one (`alertId` of a metric alert, §0.4).
 */
export function sourceExtras(
  src: SourceRef,
  event: string,
  more: Record<string, unknown> = {},
): Record<string, unknown> {
  return { 'service::source': { kind: src.kind, id: src.id, event, ...more } };
}

/**
 * A source message through the messages service (inside the caller's transaction when there is one),
 * sent as the source's name. The daily quota spent: the message is skipped (null) and the state change
 * that caused it stands (§0.4).
 */
export function sendSourceMessage(
  ctx: AppContext,
  src: SourceRef,
  event: string,
  m: {
    title: string;
    message: string;
    priority: number;
    date?: number;
    extras?: Record<string, unknown>;
    /** Sub-record ids inside `service::source` (`alertId`). */
    sourceFields?: Record<string, unknown>;
  },
): number | null {
  // A family's own keys (`service::screenshot`) beside `service::source`, which they cannot replace.
  const { extras: own, sourceFields, ...fields } = m;
  const extras = { ...own, ...sourceExtras(src, event, sourceFields) };
  // A source a window names explicitly (its channel may be uncovered) still speaks silently (§0.4).
  if (isCovered(ctx, { kind: src.kind, id: src.id, appid: src.channelId })) extras[SILENT_EXTRA] = true;
  const input: SendInput = { ...fields, extras, senderName: src.name };
  try {
    return sendMessages(ctx, src.channelId, src.name, [input])[0]!.id;
  } catch (err) {
    if (err instanceof ApiError && err.status === 429) return null;
    throw err;
  }
}

/** SSE `channel:status_changed` for a channel's audience (a source there changed). Call after commit. */
export function statusChanged(ctx: AppContext, appid: number): void {
  const channel = findChannel(ctx.db, appid);
  if (!channel) return;
  ctx.bus.emit('channel:status_changed', { appid, userIds: channelAudience(ctx, appid, channel.user_id) });
}
