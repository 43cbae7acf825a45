-- Verified hosts and port scans (issue 13). Times are unix ms.
-- A verified host is a user's proof of control over one host string (no subdomains, no resolved IPs):
-- `token` is public (it is served or published by the user); verified_at is set by the first passing
-- check and holds until the row is deleted. http_port only for method 'http'.
CREATE TABLE verified_hosts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  host TEXT NOT NULL,
  method TEXT NOT NULL CHECK (method IN ('http', 'dns')),
  token TEXT NOT NULL,
  http_port INTEGER,
  verified_at INTEGER,
  checked_at INTEGER,
  last_error TEXT,
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX verified_hosts_by_user ON verified_hosts(user_id, host, method);

-- Port scans: TCP connect scans of a verified host. `ports` is the list as given (`top100`, `top1000`,
-- `22,80-90`), port_count the number of ports it names; `open` is a JSON array of {port, service?,
-- banner?} ascending. One scan per user runs; the others wait `queued` in queued_at order. A scan that
-- is `running` when the server starts was interrupted (the previous process stopped or crashed).
CREATE TABLE port_scans (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  host TEXT NOT NULL,
  ports TEXT NOT NULL,
  port_count INTEGER NOT NULL,
  concurrency INTEGER NOT NULL,
  timeout_ms INTEGER NOT NULL,
  notes TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'cancelled', 'failed')),
  status_since INTEGER NOT NULL,
  scanned INTEGER NOT NULL DEFAULT 0,
  open TEXT NOT NULL DEFAULT '[]',
  error TEXT,
  queued_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX port_scans_by_user ON port_scans(user_id, status);
CREATE INDEX port_scans_by_channel ON port_scans(channel_id);
CREATE INDEX port_scans_active ON port_scans(status) WHERE status IN ('queued', 'running');
