import type { IncomingMessage, NotificationContext } from './os-notifications';
import type { QuietHours } from './quiet-hours';

/**
 * What the main process knows about the signed-in user, learned like any client would: over HTTP to the
 * hosted server with the device token the window handed over. No server internals are touched.
 */
export interface ChannelInfo {
  id: number;
  name: string;
  image: string;
}

export type FetchLike = (
  url: string,
  init?: { headers?: Record<string, string> },
) => Promise<{
  ok: boolean;
  status: number;
  json(): Promise<unknown>;
  arrayBuffer(): Promise<ArrayBuffer>;
}>;

export class SessionClient {
  constructor(
    private readonly baseUrl: () => string,
    private readonly token: string,
    private readonly fetchImpl: FetchLike,
  ) {}

  async json<T>(path: string): Promise<T | null> {
    const res = await this.fetchImpl(this.baseUrl() + path, {
      headers: { Authorization: `Bearer ${this.token}` },
    });
    if (!res.ok) return null;
    return (await res.json()) as T;
  }

  /** Bytes of a same-server URL (a channel logo); null for anything else or on failure. */
  async bytes(urlOrPath: string): Promise<Buffer | null> {
    if (!urlOrPath) return null;
    const base = this.baseUrl();
    const url = urlOrPath.startsWith('/') ? base + urlOrPath : urlOrPath;
    if (new URL(url).origin !== new URL(base).origin) return null;
    const res = await this.fetchImpl(url, { headers: { Authorization: `Bearer ${this.token}` } });
    if (!res.ok) return null;
    return Buffer.from(await res.arrayBuffer());
  }
}

export const UNREAD_PAGE_LIMIT = 200;
export const UNREAD_MAX_PAGES = 5;

/** Counts unread messages over the paging cursor (newest first), up to a cap the tray shows as 99+. */
export async function countUnread(client: SessionClient): Promise<number> {
  let count = 0;
  let since: number | undefined;
  for (let page = 0; page < UNREAD_MAX_PAGES; page++) {
    const q = `/message?limit=${UNREAD_PAGE_LIMIT}${since ? `&since=${since}` : ''}`;
    const body = await client.json<{ paging?: { since?: number }; messages?: { read?: boolean }[] }>(q);
    if (!body?.messages) break;
    count += body.messages.filter((m) => m.read !== true).length;
    since = body.paging?.since;
    if (!since) break;
  }
  return count;
}

export interface SessionSnapshot {
  channels: Map<number, ChannelInfo>;
  muted: Set<number>;
  quietHours: QuietHours | null;
}

/** Reads channels, this device's mutes and the quiet hours; each part tolerates an unbuilt endpoint. */
export async function loadSnapshot(client: SessionClient): Promise<SessionSnapshot> {
  const [apps, devices, qh] = await Promise.all([
    client.json<ChannelInfo[]>('/application'),
    client.json<{ id: number; current?: boolean }[]>('/client'),
    client.json<QuietHours>('/current/user/quiet-hours'),
  ]);
  const channels = new Map<number, ChannelInfo>();
  for (const a of Array.isArray(apps) ? apps : [])
    channels.set(a.id, { id: a.id, name: a.name, image: a.image ?? '' });
  const me = Array.isArray(devices) ? devices.find((d) => d.current) : undefined;
  let muted = new Set<number>();
  if (me) {
    const subs = await client.json<{ channelIds?: number[] }>(`/client/${me.id}/subscriptions`);
    muted = new Set(subs?.channelIds ?? []);
  }
  return { channels, muted, quietHours: qh && typeof qh.enabled === 'boolean' ? qh : null };
}

export function contextOf(s: SessionSnapshot, pausedUntil: number | null, now: Date): NotificationContext {
  return {
    channelIds: new Set(s.channels.keys()),
    mutedChannelIds: s.muted,
    quietHours: s.quietHours,
    pausedUntil,
    now,
  };
}

export type { IncomingMessage };
