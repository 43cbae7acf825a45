-- Maintenance windows (issue 14): docs/api.md, "Maintenance windows". Times are unix ms. channel_ids and
-- monitors are JSON ([id, ...] and [{kind, id}, ...]); schedule is the JSON schedule with instants as
-- unix ms ({type: "once", startsAt, endsAt} or {type: "weekly", timezone, days, start, end}). A deleted
-- channel or source is dropped from a window when it is read (its id simply no longer resolves).
CREATE TABLE maintenance_windows (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  channel_ids TEXT NOT NULL,
  include_subtree INTEGER NOT NULL DEFAULT 0,
  monitors TEXT NOT NULL,
  schedule TEXT NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL
);
CREATE INDEX maintenance_windows_by_user ON maintenance_windows(user_id);

-- Heartbeats gain the stored status `maintenance` (§1.4). While a window covers one, maint_status is the
-- status the state machine would have (new, up, late, down: pings still move it, silently) and
-- maint_from / maint_since the status it had when the window began and since when; the window's end
-- recomputes the heartbeat from them. SQLite cannot change a CHECK constraint in place: the table is rebuilt with the same rows, ids
-- and AUTOINCREMENT sequence (the history trigger is dropped first so the drop deletes no history).
DROP TRIGGER heartbeats_forget_history;
CREATE TABLE heartbeats_new (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  interval_sec INTEGER,
  schedule TEXT,
  timezone TEXT NOT NULL DEFAULT 'UTC',
  grace_sec INTEGER NOT NULL DEFAULT 60,
  alert_message TEXT NOT NULL DEFAULT '',
  manual_resume INTEGER NOT NULL DEFAULT 0,
  priority INTEGER NOT NULL DEFAULT 8,
  status TEXT NOT NULL CHECK (status IN ('new', 'up', 'late', 'down', 'paused', 'maintenance')),
  status_since INTEGER NOT NULL,
  token_digest TEXT NOT NULL UNIQUE,
  token_hint TEXT NOT NULL,
  last_ping_at INTEGER,
  last_success_at INTEGER,
  expected_at INTEGER,
  deadline_at INTEGER,
  due_at INTEGER,
  last_fail_reason TEXT,
  started_at INTEGER,
  last_duration_ms INTEGER,
  created_at INTEGER NOT NULL,
  maint_status TEXT,
  maint_from TEXT,
  maint_since INTEGER
);
INSERT INTO heartbeats_new (id, user_id, channel_id, name, interval_sec, schedule, timezone, grace_sec,
  alert_message, manual_resume, priority, status, status_since, token_digest, token_hint, last_ping_at,
  last_success_at, expected_at, deadline_at, due_at, last_fail_reason, started_at, last_duration_ms, created_at)
SELECT id, user_id, channel_id, name, interval_sec, schedule, timezone, grace_sec,
  alert_message, manual_resume, priority, status, status_since, token_digest, token_hint, last_ping_at,
  last_success_at, expected_at, deadline_at, due_at, last_fail_reason, started_at, last_duration_ms, created_at
FROM heartbeats;
DELETE FROM sqlite_sequence WHERE name = 'heartbeats_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'heartbeats_new', seq FROM sqlite_sequence WHERE name = 'heartbeats';
DROP TABLE heartbeats;
ALTER TABLE heartbeats_new RENAME TO heartbeats;
CREATE INDEX heartbeats_due ON heartbeats(due_at) WHERE due_at IS NOT NULL;
CREATE INDEX heartbeats_by_channel ON heartbeats(channel_id, status);
CREATE INDEX heartbeats_by_user ON heartbeats(user_id);
CREATE INDEX heartbeats_in_maintenance ON heartbeats(status) WHERE status = 'maintenance';
CREATE TRIGGER heartbeats_forget_history AFTER DELETE ON heartbeats BEGIN
  DELETE FROM history_intervals WHERE kind = 'heartbeat' AND source_id = old.id;
  DELETE FROM history_days WHERE kind = 'heartbeat' AND source_id = old.id;
  DELETE FROM history_checks WHERE kind = 'heartbeat' AND source_id = old.id;
END;
