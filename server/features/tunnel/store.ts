import type { Db } from '../../db/database';

/** The tunnel's one row (migration 0023). */
export interface TunnelRow {
  provider: string;
  /** Sealed JSON of {ssh?, ngrok?, cloudflared?} (service.ts opens it). */
  settings: string;
  configured_by: number | null;
  updated_at: number;
}

export function findTunnel(db: Db): TunnelRow | undefined {
  return db.first<TunnelRow>(
    'SELECT provider, settings, configured_by, updated_at FROM tunnel_settings WHERE id = 1',
  );
}

export function saveTunnel(
  db: Db,
  row: { provider: string; settings: string; configuredBy: number; now: number },
): void {
  db.run(
    `INSERT INTO tunnel_settings (id, provider, settings, configured_by, updated_at) VALUES (1, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET provider = excluded.provider, settings = excluded.settings,
       configured_by = excluded.configured_by, updated_at = excluded.updated_at`,
    [row.provider, row.settings, row.configuredBy, row.now],
  );
}

/** Who hears that the tunnel went down: whoever configured it while still an administrator, else every one. */
export function adminsToTell(db: Db, configuredBy: number | null): number[] {
  const rows = db.all<{ id: number }>(
    'SELECT id FROM users WHERE admin = 1 AND (id = ? OR NOT EXISTS (SELECT 1 FROM users WHERE id = ? AND admin = 1)) ORDER BY id',
    [configuredBy, configuredBy],
  );
  return rows.map((r) => r.id);
}
