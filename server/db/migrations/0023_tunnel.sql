-- The tunnel (issue 19, docs/public-access.md): one row for the whole server. `settings` is the JSON object
-- {ssh?, ngrok?, cloudflared?} of every provider's settings, secrets included, sealed as a whole with the
-- install secret (server/lib/seal.ts). configured_by: the administrator told when the tunnel goes down.
CREATE TABLE tunnel_settings (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  provider TEXT NOT NULL DEFAULT 'none',
  settings TEXT NOT NULL,
  configured_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
  updated_at INTEGER NOT NULL
);
