-- Events an hour per web-script issue (issue 18): the sparkline of each row of the issues list (docs/api.md
-- "Web scripts", `sparkline`). bucket = the hour's start (unix ms, UTC); rows older than 2 days are pruned.
-- The kept events (the last 100 of an issue) seed the counts of issues that exist already.
CREATE TABLE web_script_issue_hours (
  issue_id INTEGER NOT NULL REFERENCES web_script_issues(id) ON DELETE CASCADE,
  bucket INTEGER NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (issue_id, bucket)
) WITHOUT ROWID;
INSERT INTO web_script_issue_hours (issue_id, bucket, count)
  SELECT issue_id, at - at % 3600000, COUNT(*) FROM web_script_events GROUP BY issue_id, at - at % 3600000;
