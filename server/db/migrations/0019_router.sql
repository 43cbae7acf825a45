-- The webhook router (issue 17, wire rules §11): a per-user singleton with its R token (digest only), its
-- rules and the events it received. Times are unix ms; match and headers are JSON text.
-- default_channel_id goes NULL with its channel (ON DELETE SET NULL); rules go with their channel.
-- rules_version is bumped by the triggers below on every change to a user's rules, cascades from a
-- deleted channel included, so ingest can keep the compiled rules in memory and see at once (one read of
-- the router row it does anyway) that they are stale.
CREATE TABLE webhook_routers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE,
  token_digest TEXT NOT NULL UNIQUE,
  token_hint TEXT NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  default_channel_id INTEGER REFERENCES channels(id) ON DELETE SET NULL,
  rules_version INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
);
CREATE INDEX webhook_routers_by_default ON webhook_routers(default_channel_id)
  WHERE default_channel_id IS NOT NULL;

-- message NULL = the default text (the body as indented JSON); priority NULL = the channel's default;
-- method NULL = any. position orders a user's rules (1..n, kept contiguous by the service).
CREATE TABLE router_rules (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  path_pattern TEXT NOT NULL,
  method TEXT,
  match TEXT NOT NULL DEFAULT '[]',
  title TEXT NOT NULL,
  message TEXT,
  priority INTEGER,
  enabled INTEGER NOT NULL DEFAULT 1,
  position INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX router_rules_by_user ON router_rules(user_id, position);
CREATE INDEX router_rules_by_channel ON router_rules(channel_id);

CREATE TRIGGER router_rules_version_insert AFTER INSERT ON router_rules BEGIN
  UPDATE webhook_routers SET rules_version = rules_version + 1 WHERE user_id = NEW.user_id;
END;
CREATE TRIGGER router_rules_version_update AFTER UPDATE ON router_rules BEGIN
  UPDATE webhook_routers SET rules_version = rules_version + 1 WHERE user_id = NEW.user_id;
END;
CREATE TRIGGER router_rules_version_delete AFTER DELETE ON router_rules BEGIN
  UPDATE webhook_routers SET rules_version = rules_version + 1 WHERE user_id = OLD.user_id;
END;

-- One row per ingest request. body_kind: json (body holds JSON text), text (body holds the text) or
-- none (body NULL). rule_id, channel_id and message_id have no foreign keys: an event keeps the ids of a
-- deleted rule, channel or message. Kept 30 days, at most 1,000 per user (the retention job).
CREATE TABLE router_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  path TEXT NOT NULL,
  method TEXT NOT NULL,
  query TEXT NOT NULL,
  headers TEXT NOT NULL,
  body_kind TEXT NOT NULL CHECK (body_kind IN ('json', 'text', 'none')),
  body TEXT,
  size INTEGER NOT NULL,
  received_at INTEGER NOT NULL,
  rule_id INTEGER,
  channel_id INTEGER,
  message_id INTEGER
);
CREATE INDEX router_events_by_user ON router_events(user_id, id);
-- GET /webhook-router/message and DELETE /webhook-router/message/{mid}: a user's routed messages.
CREATE INDEX router_events_by_message ON router_events(user_id, message_id) WHERE message_id IS NOT NULL;
