-- Status history of sources (heartbeats, later monitors): docs/api.md, "Source history" (issue 11).
-- A source is (kind, source_id); there is no foreign key because every family has its own table, so
-- families call forgetSource() when one is deleted. Times are unix ms.

-- Status intervals: [start_at, end_at); end_at NULL = the open (current) one, at most one per source.
-- class is the status' uptime class when it was recorded: up, down, maintenance or other (excluded).
CREATE TABLE history_intervals (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  source_id INTEGER NOT NULL,
  status TEXT NOT NULL,
  class TEXT NOT NULL,
  start_at INTEGER NOT NULL,
  end_at INTEGER
);
CREATE INDEX history_intervals_by_source ON history_intervals(kind, source_id, start_at);
CREATE INDEX history_intervals_by_end ON history_intervals(end_at);

-- Closed interval time per UTC day (day = floor(ms / 86400000)), plus the successful checks' response
-- times of that day: what the 90-day bar and the 7/30/90-day uptimes read instead of raw intervals.
CREATE TABLE history_days (
  kind TEXT NOT NULL,
  source_id INTEGER NOT NULL,
  day INTEGER NOT NULL,
  up_ms INTEGER NOT NULL DEFAULT 0,
  down_ms INTEGER NOT NULL DEFAULT 0,
  maintenance_ms INTEGER NOT NULL DEFAULT 0,
  rt_sum INTEGER NOT NULL DEFAULT 0,
  rt_count INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (kind, source_id, day)
) WITHOUT ROWID;
CREATE INDEX history_days_by_day ON history_days(day);

-- The check / ping log: 7 days, at most 10,000 rows per source. extra: JSON object or NULL.
CREATE TABLE history_checks (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  source_id INTEGER NOT NULL,
  at INTEGER NOT NULL,
  ok INTEGER NOT NULL,
  status TEXT NOT NULL,
  response_ms INTEGER,
  error TEXT,
  extra TEXT
);
CREATE INDEX history_checks_by_source ON history_checks(kind, source_id, id);
CREATE INDEX history_checks_by_at ON history_checks(at);
