-- Channels, messages, sharing and public webhooks (issue 4).
-- Times are unix milliseconds; booleans 0/1; tokens only as SHA-256 digest + masked hint.

-- At most one internal (system) channel per user, created on first need.
CREATE UNIQUE INDEX channels_one_internal ON channels(user_id) WHERE internal = 1;

-- Full-text search over title and text (sql.js has FTS4, not FTS5). External content: the text lives
-- once, in messages; the index is kept by triggers, which also run on journal replay (deterministic).
CREATE VIRTUAL TABLE messages_fts USING fts4(content="messages", title, message, tokenize=unicode61 "remove_diacritics=2");
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts(docid, title, message) VALUES (new.id, new.title, new.message);
END;
CREATE TRIGGER messages_fts_delete BEFORE DELETE ON messages BEGIN
  DELETE FROM messages_fts WHERE docid = old.id;
END;

-- Per-user read marks: single messages, plus a per-channel watermark (everything up to read_up_to is
-- read) so "mark the channel read" is one row, not one per message.
CREATE TABLE message_reads (
  message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  PRIMARY KEY (message_id, user_id)
) WITHOUT ROWID;
CREATE INDEX message_reads_by_user ON message_reads(user_id);

CREATE TABLE channel_reads (
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  read_up_to INTEGER NOT NULL,
  PRIMARY KEY (user_id, channel_id)
) WITHOUT ROWID;
CREATE INDEX channel_reads_by_channel ON channel_reads(channel_id);

-- A channel shared by email. granted_by is the owner or a recipient with can_share (reshare).
-- The invitation token (from the email) and the recipient's S token are separate secrets.
CREATE TABLE shares (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  granted_by INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  email TEXT NOT NULL COLLATE NOCASE,
  recipient_id INTEGER REFERENCES users(id) ON DELETE CASCADE,
  permission TEXT NOT NULL CHECK (permission IN ('view', 'send')),
  can_share INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'declined')),
  invite_digest TEXT UNIQUE,
  token_digest TEXT UNIQUE,
  token_hint TEXT NOT NULL DEFAULT '',
  last_used INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX shares_by_channel ON shares(channel_id);
CREATE INDEX shares_by_recipient ON shares(recipient_id, status);
CREATE INDEX shares_by_email ON shares(email);
CREATE INDEX shares_by_granter ON shares(granted_by);

-- Public webhooks: many per channel, each with its own W token.
CREATE TABLE webhooks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('static', 'dynamic')),
  title TEXT NOT NULL DEFAULT '',
  text TEXT NOT NULL DEFAULT '',
  priority INTEGER,
  token_digest TEXT NOT NULL UNIQUE,
  token_hint TEXT NOT NULL,
  last_used INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX webhooks_by_channel ON webhooks(channel_id);
