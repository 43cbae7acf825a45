-- Screenshots of failed browser-workflow checks (issue 13): docs/api.md, "Browser workflows". The JPEG
-- itself is a file `<dataDir>/browser-shots/<key>.jpg` (a 50-200 KB image in the in-memory database would
-- sit in RAM and in every journal and snapshot); this row says whose it is, for the owner-only
-- `GET /browser-shot/{key}`, and when it goes (30 days, at most 20 per workflow). monitor_id is NULL for
-- the screenshots of `POST /browser-workflow/test-step` (kept per user under the same caps). Times: unix ms.
CREATE TABLE browser_shots (
  key TEXT PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  monitor_id INTEGER REFERENCES monitors(id) ON DELETE CASCADE,
  bytes INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX browser_shots_by_monitor ON browser_shots(monitor_id, created_at);
CREATE INDEX browser_shots_by_user ON browser_shots(user_id, created_at);
CREATE INDEX browser_shots_by_age ON browser_shots(created_at);
