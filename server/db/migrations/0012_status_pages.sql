-- Public status pages (issue 14): docs/api.md, "Status pages". A page shows the heartbeats and monitors
-- of its channel and the channel's descendants; incidents are read from history_intervals (0006), so no
-- incident table is kept here. Times are unix ms; booleans 0/1.
CREATE TABLE status_pages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  slug TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  enabled INTEGER NOT NULL DEFAULT 1,
  lang TEXT NOT NULL DEFAULT 'en',
  branding_hidden INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
);
CREATE INDEX status_pages_by_user ON status_pages(user_id);
CREATE INDEX status_pages_by_channel ON status_pages(channel_id);

-- Mail subscribers of a page (double opt-in: confirmed = 0 until the link in the confirmation mail is opened).
CREATE TABLE status_subscribers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  page_id INTEGER NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  confirmed INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  UNIQUE (page_id, email)
);

-- Extra mail headers (JSON object or NULL), e.g. List-Unsubscribe of status-page mails.
ALTER TABLE mail_outbox ADD COLUMN headers TEXT;
