-- Metrics with alerts (issue 17; docs/api.md "Metrics"). Times are unix ms.
-- A metric source owns series (name + tag set, tags as canonical JSON with sorted keys); ingest writes
-- raw points (kept 24 h) and per-bucket rollups at three resolutions (res = bucket size in ms: 1 m kept
-- 7 days, 1 h 90 days, 1 d 2 years), pruned by the retention job.
CREATE TABLE metric_sources (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'ok', 'firing', 'paused')),
  status_since INTEGER NOT NULL,
  token_digest TEXT NOT NULL UNIQUE,
  token_hint TEXT NOT NULL,
  last_check_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX metric_sources_by_user ON metric_sources(user_id);
CREATE INDEX metric_sources_by_channel ON metric_sources(channel_id);

CREATE TABLE metric_series (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  source_id INTEGER NOT NULL REFERENCES metric_sources(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  tags TEXT NOT NULL,
  unit TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  UNIQUE (source_id, name, tags)
);

-- Raw points: no foreign key (a parent check per row on the hottest insert) and no series index; the
-- retention job removes them by age (and those of deleted series with them, within 24 h).
CREATE TABLE metric_points (
  series_id INTEGER NOT NULL,
  at INTEGER NOT NULL,
  value REAL NOT NULL
);
CREATE INDEX metric_points_at ON metric_points(at);

-- One row per (series, resolution, bucket start): min, max, sum, count and the value of the latest
-- point (last, at last_at). Ingest upserts each touched bucket once per request.
CREATE TABLE metric_rollups (
  series_id INTEGER NOT NULL,
  res INTEGER NOT NULL,
  bucket INTEGER NOT NULL,
  min REAL NOT NULL,
  max REAL NOT NULL,
  sum REAL NOT NULL,
  count INTEGER NOT NULL,
  last REAL NOT NULL,
  last_at INTEGER NOT NULL,
  PRIMARY KEY (series_id, res, bucket)
) WITHOUT ROWID;
CREATE INDEX metric_rollups_age ON metric_rollups(res, bucket);

-- Alerts (§8.3). due_at: when the DueSource must look (a breaching series reaching forSec, an absent
-- alert's deadline); NULL otherwise. last_point_at: the last matching point's arrival (absent alerts).
CREATE TABLE metric_alerts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  source_id INTEGER NOT NULL REFERENCES metric_sources(id) ON DELETE CASCADE,
  metric TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '{}',
  condition TEXT NOT NULL CHECK (condition IN ('above', 'below', 'absent')),
  threshold REAL,
  for_sec INTEGER NOT NULL DEFAULT 0,
  priority INTEGER NOT NULL DEFAULT 8,
  message TEXT NOT NULL DEFAULT '',
  enabled INTEGER NOT NULL DEFAULT 1,
  state TEXT NOT NULL CHECK (state IN ('ok', 'firing')),
  since INTEGER NOT NULL,
  last_value REAL,
  last_point_at INTEGER,
  armed_at INTEGER NOT NULL,
  due_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX metric_alerts_by_source ON metric_alerts(source_id);
CREATE INDEX metric_alerts_due ON metric_alerts(due_at) WHERE due_at IS NOT NULL;

-- The series of an alert that breach now, since the first breaching point (above/below).
CREATE TABLE metric_breaches (
  alert_id INTEGER NOT NULL REFERENCES metric_alerts(id) ON DELETE CASCADE,
  series_id INTEGER NOT NULL,
  since INTEGER NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (alert_id, series_id)
) WITHOUT ROWID;

-- A series that goes (DELETE, or with its source or channel) takes its rollups and breaches along.
CREATE TRIGGER metric_series_forget AFTER DELETE ON metric_series BEGIN
  DELETE FROM metric_rollups WHERE series_id = old.id;
  DELETE FROM metric_breaches WHERE series_id = old.id;
END;

-- A source that goes with its channel or its user (ON DELETE CASCADE) takes its history along, as
-- DELETE /metric-source/{id} does through forgetSource (0006_history.sql's tables).
CREATE TRIGGER metric_sources_forget_history AFTER DELETE ON metric_sources BEGIN
  DELETE FROM history_intervals WHERE kind = 'metric-source' AND source_id = old.id;
  DELETE FROM history_days WHERE kind = 'metric-source' AND source_id = old.id;
  DELETE FROM history_checks WHERE kind = 'metric-source' AND source_id = old.id;
END;
