-- Monitors (issue 12): one table and one id sequence for every monitor kind (an id under another kind's
-- path is 404). Times are unix ms. The common fields are columns; `settings` is the kind's parsed settings
-- as JSON sealed at rest (server/lib/seal.ts: they hold passwords, tokens and cookies); `state` is the
-- kind's own state JSON (content monitors: the last value). status: pending, up, down, maintenance,
-- unknown, paused. last_alerted (none, down, up) decides the messages, not the previous status, so gaps
-- neither duplicate nor lose an alert. down_since: when the alerted outage began (recovery durations).
-- next_check_at: the next check (NULL while paused); due_at: the earlier of it and the next reminder, the
-- one timer of server/jobs/due.ts is armed for MIN(due_at) over the partial index.
CREATE TABLE monitors (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  settings TEXT NOT NULL,
  state TEXT,
  interval_sec INTEGER NOT NULL,
  timeout_sec INTEGER NOT NULL,
  retries INTEGER NOT NULL DEFAULT 0,
  resend_every_sec INTEGER NOT NULL DEFAULT 0,
  priority INTEGER NOT NULL DEFAULT 8,
  status TEXT NOT NULL CHECK (status IN ('pending', 'up', 'down', 'maintenance', 'unknown', 'paused')),
  status_since INTEGER NOT NULL,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  last_response_ms INTEGER,
  last_check_at INTEGER,
  last_alerted TEXT NOT NULL DEFAULT 'none' CHECK (last_alerted IN ('none', 'down', 'up')),
  last_alert_at INTEGER,
  down_since INTEGER,
  next_check_at INTEGER,
  due_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX monitors_due ON monitors(due_at) WHERE due_at IS NOT NULL;
CREATE INDEX monitors_by_channel ON monitors(channel_id, status);
CREATE INDEX monitors_by_user ON monitors(user_id, kind);

-- A monitor that goes with its channel or its user (ON DELETE CASCADE) takes its history along, as
-- DELETE /{kind}/{id} does through forgetSource (0006_history.sql's tables).
CREATE TRIGGER monitors_forget_history AFTER DELETE ON monitors BEGIN
  DELETE FROM history_intervals WHERE kind = old.kind AND source_id = old.id;
  DELETE FROM history_days WHERE kind = old.kind AND source_id = old.id;
  DELETE FROM history_checks WHERE kind = old.kind AND source_id = old.id;
END;
