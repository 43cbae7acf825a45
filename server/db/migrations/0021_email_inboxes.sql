-- Email inboxes (issue 18, wire rules §10): an address `{local_part}@{BELFRY_MAIL_DOMAIN}` that turns mail
-- received by the SMTP listener into messages of a channel. Times are unix ms; match and attachments are
-- JSON text. Inboxes and their rules go with their channel; events keep the ids of a deleted rule or
-- message (no foreign key) and go with their inbox.
-- priority NULL = the channel's default. status: pending (no mail yet), ok, paused.
CREATE TABLE email_inboxes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  local_part TEXT NOT NULL UNIQUE,
  priority INTEGER,
  status TEXT NOT NULL CHECK (status IN ('pending', 'ok', 'paused')),
  status_since INTEGER NOT NULL,
  last_check_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX email_inboxes_by_user ON email_inboxes(user_id);
CREATE INDEX email_inboxes_by_channel ON email_inboxes(channel_id);

-- title NULL = `{{subject}}`; priority NULL = the inbox's, then the channel's. position orders an inbox's
-- rules (1..n, kept contiguous by the service).
CREATE TABLE email_inbox_rules (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  inbox_id INTEGER NOT NULL REFERENCES email_inboxes(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  match TEXT NOT NULL DEFAULT '{}',
  action TEXT NOT NULL CHECK (action IN ('message', 'drop')),
  title TEXT,
  priority INTEGER,
  position INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX email_inbox_rules_by_inbox ON email_inbox_rules(inbox_id, position);

-- One row per accepted recipient inbox of a received mail. action: message, drop or paused. Kept 30 days,
-- at most 1,000 per inbox (the retention job).
CREATE TABLE email_inbox_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  inbox_id INTEGER NOT NULL REFERENCES email_inboxes(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL,
  channel_id INTEGER NOT NULL,
  mail_from TEXT NOT NULL,
  mail_to TEXT NOT NULL,
  subject TEXT NOT NULL,
  text TEXT NOT NULL,
  attachments TEXT NOT NULL DEFAULT '[]',
  size INTEGER NOT NULL,
  received_at INTEGER NOT NULL,
  rule_id INTEGER,
  action TEXT NOT NULL CHECK (action IN ('message', 'drop', 'paused')),
  message_id INTEGER
);
CREATE INDEX email_inbox_events_by_inbox ON email_inbox_events(inbox_id, id);
CREATE INDEX email_inbox_events_by_user ON email_inbox_events(user_id, id);
