-- Re-delivery until read (issue 15, wire rules §6.1): the durable outbox. One row per adapter and message
-- (kind redelivery), per channel, adapter and quiet window (digest), per test send (test), and later per
-- question callback (callback). Times are unix ms. user_id is the channel's owner: only their read
-- marks cancel. message_id has no foreign key: the log keeps the id of a deleted message.
CREATE TABLE deliveries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  appid INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  message_id INTEGER,
  adapter TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('redelivery', 'digest', 'test', 'callback')),
  status TEXT NOT NULL CHECK (status IN ('queued', 'sending', 'sent', 'failed', 'cancelled')),
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  next_attempt_at INTEGER,
  held_until INTEGER,
  last_attempt_at INTEGER,
  last_error TEXT,
  sent_at INTEGER,
  cancel_reason TEXT,
  payload TEXT
);
-- The DueSource's MIN(next_attempt_at) and its claim, over queued rows only.
CREATE INDEX deliveries_due ON deliveries(next_attempt_at) WHERE status = 'queued';
-- The log of a channel, newest first.
CREATE INDEX deliveries_by_channel ON deliveries(appid, id);
-- Cancelling on a read mark or a deletion: only queued rows are ever looked up.
CREATE INDEX deliveries_queued_by_message ON deliveries(message_id) WHERE status = 'queued';
CREATE INDEX deliveries_queued_by_channel ON deliveries(appid, message_id) WHERE status = 'queued';
-- Held rows of a user (quiet hours changed: release; window end: the digest of one window).
CREATE INDEX deliveries_held ON deliveries(user_id, held_until) WHERE status = 'queued' AND held_until IS NOT NULL;

-- A read mark cancels at once, whichever path wrote it (POST /message/read, channel read, /m/read,
-- answers): the owner's mark only.
CREATE TRIGGER deliveries_cancel_on_read AFTER INSERT ON message_reads BEGIN
  UPDATE deliveries SET status = 'cancelled', cancel_reason = 'read', next_attempt_at = NULL
   WHERE message_id = NEW.message_id AND status = 'queued' AND user_id = NEW.user_id;
END;
CREATE TRIGGER deliveries_cancel_on_channel_read AFTER INSERT ON channel_reads BEGIN
  UPDATE deliveries SET status = 'cancelled', cancel_reason = 'read', next_attempt_at = NULL
   WHERE appid = NEW.channel_id AND status = 'queued' AND message_id <= NEW.read_up_to
     AND user_id = NEW.user_id;
END;
CREATE TRIGGER deliveries_cancel_on_channel_read_update AFTER UPDATE OF read_up_to ON channel_reads BEGIN
  UPDATE deliveries SET status = 'cancelled', cancel_reason = 'read', next_attempt_at = NULL
   WHERE appid = NEW.channel_id AND status = 'queued' AND message_id <= NEW.read_up_to
     AND user_id = NEW.user_id;
END;
-- A deleted message (one, a channel's, all, retention) is never re-delivered.
CREATE TRIGGER deliveries_cancel_on_delete AFTER DELETE ON messages BEGIN
  UPDATE deliveries SET status = 'cancelled', cancel_reason = 'deleted', next_attempt_at = NULL
   WHERE message_id = OLD.id AND status = 'queued';
END;
