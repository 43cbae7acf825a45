-- Web scripts: browser error tracking (issue 18; docs/api.md "Web scripts"). Times are unix ms.
-- A web script has a public T token (digest stored); its snippet posts batches of events, grouped into
-- issues by fingerprint. Each issue keeps its last 100 events. Counters per (resolution, bucket) feed
-- the series, error-series and flush-stats endpoints; source maps resolve minified frames.
CREATE TABLE web_scripts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'ok', 'issues', 'paused')),
  status_since INTEGER NOT NULL,
  token_digest TEXT NOT NULL UNIQUE,
  token_hint TEXT NOT NULL,
  allowed_origins TEXT NOT NULL DEFAULT '["*"]',
  priority INTEGER NOT NULL DEFAULT 6,
  last_check_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX web_scripts_by_user ON web_scripts(user_id);
CREATE INDEX web_scripts_by_channel ON web_scripts(channel_id);

CREATE TABLE web_script_issues (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  script_id INTEGER NOT NULL REFERENCES web_scripts(id) ON DELETE CASCADE,
  fingerprint TEXT NOT NULL,
  title TEXT NOT NULL,
  culprit TEXT NOT NULL,
  type TEXT NOT NULL,
  count INTEGER NOT NULL,
  first_seen INTEGER NOT NULL,
  last_seen INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('unresolved', 'resolved', 'ignored')),
  last_url TEXT,
  last_release TEXT,
  UNIQUE (script_id, fingerprint)
);
CREATE INDEX web_script_issues_by_seen ON web_script_issues(script_id, last_seen);

-- The last 100 events of an issue (ingest trims older ones).
CREATE TABLE web_script_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  issue_id INTEGER NOT NULL REFERENCES web_script_issues(id) ON DELETE CASCADE,
  at INTEGER NOT NULL,
  message TEXT NOT NULL,
  stack TEXT,
  url TEXT,
  release TEXT,
  user_agent TEXT,
  breadcrumbs TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX web_script_events_by_issue ON web_script_events(issue_id, id);

CREATE TABLE web_script_analyses (
  issue_id INTEGER PRIMARY KEY REFERENCES web_script_issues(id) ON DELETE CASCADE,
  lang TEXT NOT NULL,
  summary TEXT NOT NULL,
  likely_cause TEXT NOT NULL,
  suggestions TEXT NOT NULL,
  provider TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

-- Counters per bucket (res = bucket size in ms: 1 m kept 7 days, 1 h 90 days, 1 d 2 years).
CREATE TABLE web_script_stats (
  script_id INTEGER NOT NULL,
  res INTEGER NOT NULL,
  bucket INTEGER NOT NULL,
  loads INTEGER NOT NULL DEFAULT 0,
  pings INTEGER NOT NULL DEFAULT 0,
  batches INTEGER NOT NULL DEFAULT 0,
  events INTEGER NOT NULL DEFAULT 0,
  errors INTEGER NOT NULL DEFAULT 0,
  rejections INTEGER NOT NULL DEFAULT 0,
  messages INTEGER NOT NULL DEFAULT 0,
  new_issues INTEGER NOT NULL DEFAULT 0,
  r_interval INTEGER NOT NULL DEFAULT 0,
  r_size INTEGER NOT NULL DEFAULT 0,
  r_unload INTEGER NOT NULL DEFAULT 0,
  r_error INTEGER NOT NULL DEFAULT 0,
  r_ping INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (script_id, res, bucket)
) WITHOUT ROWID;
CREATE INDEX web_script_stats_age ON web_script_stats(res, bucket);

CREATE TABLE web_script_sourcemaps (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  script_id INTEGER NOT NULL REFERENCES web_scripts(id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  release TEXT NOT NULL DEFAULT '',
  size INTEGER NOT NULL,
  sources TEXT NOT NULL,
  content TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (script_id, url, release)
);

CREATE TRIGGER web_scripts_forget AFTER DELETE ON web_scripts BEGIN
  DELETE FROM web_script_stats WHERE script_id = old.id;
  DELETE FROM history_intervals WHERE kind = 'web-script' AND source_id = old.id;
  DELETE FROM history_days WHERE kind = 'web-script' AND source_id = old.id;
  DELETE FROM history_checks WHERE kind = 'web-script' AND source_id = old.id;
END;
