-- Heartbeats (issue 11): dead-man switches pinged by external jobs. Times are unix ms.
-- status is the stored state: new, up, late, down, paused (late is written when expected_at passes so
-- channel counts are one indexed read). due_at is the next time the state machine must look at the row
-- (expected_at while up with a grace period, deadline_at while up or late, NULL otherwise): the one timer
-- of server/jobs/due.ts is armed for MIN(due_at) over the partial index.
CREATE TABLE heartbeats (
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
  status TEXT NOT NULL CHECK (status IN ('new', 'up', 'late', 'down', 'paused')),
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
  created_at INTEGER NOT NULL
);
CREATE INDEX heartbeats_due ON heartbeats(due_at) WHERE due_at IS NOT NULL;
CREATE INDEX heartbeats_by_channel ON heartbeats(channel_id, status);
CREATE INDEX heartbeats_by_user ON heartbeats(user_id);

-- A heartbeat that goes with its channel or its user (ON DELETE CASCADE) takes its history along, as
-- DELETE /heartbeat/{id} does through forgetSource (0006_history.sql's tables).
CREATE TRIGGER heartbeats_forget_history AFTER DELETE ON heartbeats BEGIN
  DELETE FROM history_intervals WHERE kind = 'heartbeat' AND source_id = old.id;
  DELETE FROM history_days WHERE kind = 'heartbeat' AND source_id = old.id;
  DELETE FROM history_checks WHERE kind = 'heartbeat' AND source_id = old.id;
END;
