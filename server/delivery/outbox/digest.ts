import type { AppContext } from '../../context';
import { ensureSystemChannel } from '../../features/channels/service';
import { findChannel } from '../../features/channels/store';
import type { QuietHours } from '../../features/current-user/quiet-hours';
import { sendMessages } from '../../features/messages/service';
import { findMessage, type MessageRow } from '../../features/messages/store';
import { cancelDelivery, type DeliveryRow, heldOfWindow, insertDelivery } from './store';

/**
 * The digest of one quiet window (wire rules §6.4), built when the first held entry of an owner's window
 * comes due after the window with `digest: true`: every entry held for that window (same owner, same
 * `held_until`) is cancelled (`digest`); one `digest` entry per channel and adapter that held something
 * still unread (read and deleted ones were cancelled at once) and one Message in the owner's internal
 * channel covering every channel. Grouped by owner and window, never by claim batch: one window, one
 * digest. Runs inside the claim transaction.
 */
export const DIGEST_LINES_MAX = 50;
export const DIGEST_LINE_TEXT_MAX = 200;
export const DIGEST_MESSAGE_IDS_MAX = 100;
export const DIGEST_EXTRA = 'service::digest';
const DIGEST_PRIORITY = 5;

function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

function hhmm(timezone: string): (t: number) => string {
  let f: Intl.DateTimeFormat;
  try {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone: timezone,
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
  } catch {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'UTC',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
  }
  return (t) => f.format(new Date(t));
}

export function digestTitle(n: number): string {
  return `Digest: ${n} message${n === 1 ? '' : 's'} held during quiet hours`;
}

/** One line per message, at most 50, then `… and {k} more`. */
export function digestText(lines: readonly string[]): string {
  const shown = lines.slice(0, DIGEST_LINES_MAX);
  if (lines.length > DIGEST_LINES_MAX) shown.push(`… and ${lines.length - DIGEST_LINES_MAX} more`);
  return shown.join('\n');
}

function line(m: MessageRow, time: (t: number) => string, prefix = ''): string {
  return `- ${prefix}${time(m.date)} ${m.title}: ${clip(m.message, DIGEST_LINE_TEXT_MAX)}`;
}

export function createDigests(
  ctx: AppContext,
  userId: number,
  heldUntil: number,
  qh: QuietHours,
  now: number,
  changed: DeliveryRow[],
): void {
  const held = heldOfWindow(ctx.db, userId, heldUntil).filter((r) => r.kind === 'redelivery');
  let from = heldUntil;
  const groups = new Map<string, { appid: number; adapter: string; messages: MessageRow[] }>();
  const all = new Map<number, MessageRow>();
  for (const r of held) {
    cancelDelivery(ctx.db, r.id, 'digest');
    changed.push(r);
    const heldFrom = r.payload ? (JSON.parse(r.payload) as { heldFrom?: number }).heldFrom : undefined;
    if (typeof heldFrom === 'number' && heldFrom < from) from = heldFrom;
    const m =
      r.message_id === null ? undefined : (all.get(r.message_id) ?? findMessage(ctx.db, r.message_id));
    if (!m) continue;
    all.set(m.id, m);
    const key = `${r.appid}\u0000${r.adapter}`;
    let g = groups.get(key);
    if (!g) {
      g = { appid: r.appid, adapter: r.adapter, messages: [] };
      groups.set(key, g);
    }
    g.messages.push(m);
  }
  if (all.size === 0) return;
  const time = hhmm(qh.timezone);
  for (const g of groups.values()) {
    const payload = {
      title: digestTitle(g.messages.length),
      message: digestText(g.messages.map((m) => line(m, time))),
      priority: DIGEST_PRIORITY,
      date: heldUntil,
    };
    const id = insertDelivery(ctx.db, {
      userId,
      appid: g.appid,
      messageId: null,
      adapter: g.adapter,
      kind: 'digest',
      status: 'queued',
      attempts: 0,
      createdAt: now,
      nextAttemptAt: now,
      lastAttemptAt: null,
      payload: JSON.stringify(payload),
    });
    changed.push({ id, user_id: userId, appid: g.appid } as DeliveryRow);
  }
  const messages = [...all.values()].sort((a, b) => a.id - b.id);
  const names = new Map<number, string>();
  const nameOf = (appid: number) => {
    let n = names.get(appid);
    if (n === undefined) {
      n = findChannel(ctx.db, appid)?.name ?? '';
      names.set(appid, n);
    }
    return n;
  };
  const system = ensureSystemChannel(ctx, userId);
  sendMessages(
    ctx,
    system.id,
    'Belfry',
    [
      {
        title: digestTitle(messages.length),
        message: digestText(messages.map((m) => line(m, time, `[${nameOf(m.channel_id)}] `))),
        priority: DIGEST_PRIORITY,
        extras: {
          [DIGEST_EXTRA]: {
            from: new Date(from).toISOString(),
            to: new Date(heldUntil).toISOString(),
            count: messages.length,
            messageIds: messages.slice(0, DIGEST_MESSAGE_IDS_MAX).map((m) => m.id),
          },
        },
      },
    ],
    { system: true },
  );
}
