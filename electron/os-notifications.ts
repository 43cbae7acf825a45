import type { NativeImage, NativeImageModule, NotificationConstructor } from './electron-api';
import { isQuietAt, type QuietHours } from './quiet-hours';

/** The part of a wire Message the decision needs. */
export interface IncomingMessage {
  id: number;
  appid: number;
  title: string;
  message: string;
  priority: number;
  extras?: Record<string, unknown>;
}

export interface NotificationContext {
  /** Channels the signed-in user can see (own and accepted shares). */
  channelIds: ReadonlySet<number>;
  /** Channels muted on this device (`GET /client/{id}/subscriptions`). */
  mutedChannelIds: ReadonlySet<number>;
  quietHours: QuietHours | null;
  /** Tray "pause notifications": unix ms until which nothing pops up. */
  pausedUntil: number | null;
  now: Date;
}

export type NotificationDecision =
  | {
      show: false;
      reason: 'not-visible' | 'muted' | 'maintenance' | 'paused' | 'min-priority' | 'quiet-digest';
    }
  | {
      show: true;
      silent: boolean;
      urgency: 'low' | 'normal' | 'critical';
      reason: 'normal' | 'quiet' | 'breakthrough';
    };

/** Priority bands as the older push protocol's clients use them: 0 none, 1-3 low, 4-7 normal, 8-10 high. */
export const PRIORITY_SILENT_MAX = 3;
export const PRIORITY_CRITICAL_MIN = 8;

/**
 * Whether and how a message pops up on this desktop. Device mutes, a maintenance window's
 * `service::silent` marker and the tray pause win; priority 0
 * never pops up; during quiet hours a message below `breakthroughPriority` is shown silently, or not at
 * all when the user chose a digest (the server summarises those later).
 */
export function decideNotification(msg: IncomingMessage, c: NotificationContext): NotificationDecision {
  if (!c.channelIds.has(msg.appid)) return { show: false, reason: 'not-visible' };
  if (c.mutedChannelIds.has(msg.appid)) return { show: false, reason: 'muted' };
  // Arrived while a maintenance window covered its channel or source: listed, never popped up.
  if (msg.extras?.['service::silent'] === true) return { show: false, reason: 'maintenance' };
  if (c.pausedUntil !== null && c.now.getTime() < c.pausedUntil) return { show: false, reason: 'paused' };
  if (msg.priority <= 0) return { show: false, reason: 'min-priority' };
  const urgency =
    msg.priority >= PRIORITY_CRITICAL_MIN
      ? 'critical'
      : msg.priority <= PRIORITY_SILENT_MAX
        ? 'low'
        : 'normal';
  const qh = c.quietHours;
  if (qh && isQuietAt(qh, c.now)) {
    if (msg.priority >= qh.breakthroughPriority)
      return { show: true, silent: false, urgency, reason: 'breakthrough' };
    if (qh.digest) return { show: false, reason: 'quiet-digest' };
    return { show: true, silent: true, urgency: 'low', reason: 'quiet' };
  }
  return { show: true, silent: msg.priority <= PRIORITY_SILENT_MAX, urgency, reason: 'normal' };
}

/** Plain text for the notification body: markdown markup stripped, length capped. */
export function notificationBody(msg: IncomingMessage, max = 240): string {
  let text = msg.message;
  const display = msg.extras?.['client::display'] as { contentType?: unknown } | undefined;
  if (display?.contentType === 'text/markdown') {
    text = text
      .replace(/```[\s\S]*?```/g, ' ')
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/[*_`#>~]+/g, '')
      .replace(/\s+/g, ' ')
      .trim();
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export interface ShowDeps {
  Notification: NotificationConstructor;
  onClick(msg: IncomingMessage): void;
  icon?: NativeImage;
}

/** Shows one decided notification; returns false when the OS has no notification support. */
export function showNotification(
  msg: IncomingMessage,
  channelName: string,
  decision: Extract<NotificationDecision, { show: true }>,
  deps: ShowDeps,
): boolean {
  if (!deps.Notification.isSupported()) return false;
  const n = new deps.Notification({
    title: msg.title || channelName,
    body: notificationBody(msg),
    silent: decision.silent,
    urgency: decision.urgency,
    ...(deps.icon ? { icon: deps.icon } : {}),
  });
  n.on('click', () => deps.onClick(msg));
  n.show();
  return true;
}

/** A channel logo as a notification icon, or undefined when the bytes are not an image. */
export function iconFromBytes(nativeImage: NativeImageModule, bytes: Buffer | null): NativeImage | undefined {
  if (!bytes || bytes.length === 0) return undefined;
  const img = nativeImage.createFromBuffer(bytes);
  return img.isEmpty() ? undefined : img;
}
