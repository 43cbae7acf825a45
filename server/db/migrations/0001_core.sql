-- Core schema: install metadata, users, devices, API tokens, channels, channel keys, messages.
-- Times are unix milliseconds (INTEGER); booleans are 0/1; lists and objects are JSON text.
-- Tokens are never stored: only their SHA-256 digest (hex) and a masked hint.

CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE users (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  email TEXT NOT NULL UNIQUE COLLATE NOCASE,
  password_hash TEXT NOT NULL,
  admin INTEGER NOT NULL DEFAULT 0,
  verified INTEGER NOT NULL DEFAULT 0,
  plan TEXT NOT NULL DEFAULT 'free',
  balance_kopecks INTEGER NOT NULL DEFAULT 0,
  image TEXT,
  created_at INTEGER NOT NULL
);

CREATE TABLE devices (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  token_digest TEXT NOT NULL UNIQUE,
  token_hint TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended', 'revoked')),
  platform TEXT NOT NULL DEFAULT '',
  last_ip TEXT NOT NULL DEFAULT '',
  last_user_agent TEXT NOT NULL DEFAULT '',
  last_used INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX devices_by_user ON devices(user_id, status);

CREATE TABLE api_tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  access TEXT NOT NULL CHECK (access IN ('read', 'write')),
  app_ids TEXT NOT NULL DEFAULT '[]',
  app_tags TEXT NOT NULL DEFAULT '[]',
  expires_at INTEGER,
  token_digest TEXT NOT NULL UNIQUE,
  token_hint TEXT NOT NULL,
  last_used INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX api_tokens_by_user ON api_tokens(user_id);

CREATE TABLE channels (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  internal INTEGER NOT NULL DEFAULT 0,
  image TEXT,
  default_priority INTEGER NOT NULL DEFAULT 0,
  last_used INTEGER,
  sort_key TEXT NOT NULL DEFAULT '',
  parent_id INTEGER REFERENCES channels(id) ON DELETE SET NULL,
  tags TEXT NOT NULL DEFAULT '[]',
  delivery_config TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL
);
CREATE INDEX channels_by_user ON channels(user_id);
CREATE INDEX channels_by_parent ON channels(parent_id);

-- Every sending key of a channel, the primary one (shown as Channel.token) included.
CREATE TABLE channel_keys (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  name TEXT NOT NULL DEFAULT '',
  note TEXT NOT NULL DEFAULT '',
  can_read INTEGER NOT NULL DEFAULT 0,
  can_write INTEGER NOT NULL DEFAULT 1,
  is_primary INTEGER NOT NULL DEFAULT 0,
  token_digest TEXT NOT NULL UNIQUE,
  token_hint TEXT NOT NULL,
  expires_at INTEGER NOT NULL DEFAULT 0,
  revoked_at INTEGER,
  last_used INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX channel_keys_by_channel ON channel_keys(channel_id);

CREATE TABLE messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL,
  message TEXT NOT NULL,
  title TEXT NOT NULL DEFAULT '',
  priority INTEGER NOT NULL,
  date INTEGER NOT NULL,
  sender_name TEXT NOT NULL DEFAULT '',
  extras TEXT
);
CREATE INDEX messages_by_user ON messages(user_id, id);
CREATE INDEX messages_by_channel ON messages(channel_id, id);
