import type { Db } from '../db/database';

/**
 * Who may see a channel's messages besides its channel keys (docs/api.md, "Live streams"): the
 * owner's devices and accepted share recipients' devices, minus devices that mute the channel.
 * Asked once per message, and only when device sockets are connected, so nothing is cached and
 * nothing can go stale: a mute, a share accepted or revoked counts from the next message on.
 */
export interface Audience {
  /** Users whose devices may receive messages of this channel: the owner, then share recipients. */
  recipients(channelId: number, ownerId: number): readonly number[];
  /** Devices that mute this channel (spec "Devices": subscriptions are the muted list). */
  mutedDevices(channelId: number): ReadonlySet<number>;
}

const NONE: ReadonlySet<number> = new Set();

/**
 * Reads the accounts family's device mutes and the channels family's shares. Each table is looked up
 * once (the schema is migrated before features start); until a family's migration exists its part of
 * the audience is empty, so the hub works with whatever families are built.
 */
export function sqlAudience(db: Db): Audience {
  const has = (table: string) =>
    db.first<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?", [
      table,
    ])!.n > 0;
  let mutes: boolean | undefined;
  let shares: boolean | undefined;
  return {
    recipients(channelId, ownerId) {
      shares ??= has('shares');
      if (!shares) return [ownerId];
      const rows = db.all<{ user_id: number }>(
        "SELECT DISTINCT recipient_id AS user_id FROM shares WHERE channel_id = ? AND status = 'accepted' AND recipient_id IS NOT NULL",
        [channelId],
      );
      const out = [ownerId];
      for (const r of rows) if (r.user_id !== ownerId) out.push(r.user_id);
      return out;
    },
    mutedDevices(channelId) {
      mutes ??= has('device_mutes');
      if (!mutes) return NONE;
      const rows = db.all<{ device_id: number }>('SELECT device_id FROM device_mutes WHERE channel_id = ?', [
        channelId,
      ]);
      return rows.length === 0 ? NONE : new Set(rows.map((r) => r.device_id));
    },
  };
}
