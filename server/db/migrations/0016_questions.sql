-- Interactive questions (issue 16, wire rules §7). A question is a message of its channel plus this record.
-- Times are unix ms; options, fields, next and answers are JSON text. user_id is the channel's owner.
-- status: pending, answered, expired, cancelled. settled_at is when it left pending (the order of
-- GET /ask/pending-answers); acked is set by POST /ask/ack. message_id has no foreign key: the record keeps
-- the id of a deleted message. A deleted channel takes its questions along (ON DELETE CASCADE).
CREATE TABLE questions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  message_id INTEGER,
  status TEXT NOT NULL CHECK (status IN ('pending', 'answered', 'expired', 'cancelled')),
  title TEXT NOT NULL,
  question TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('choice', 'multi', 'form', 'text')),
  options TEXT NOT NULL DEFAULT '[]',
  default_option TEXT,
  fields TEXT NOT NULL DEFAULT '[]',
  format TEXT NOT NULL DEFAULT 'text',
  default_answer TEXT,
  next TEXT NOT NULL DEFAULT '{}',
  priority INTEGER NOT NULL,
  sender_name TEXT NOT NULL DEFAULT '',
  answer TEXT,
  answered_at INTEGER,
  answered_by TEXT CHECK (answered_by IN ('user', 'link', 'default')),
  expires_at INTEGER NOT NULL,
  timeout_sec INTEGER NOT NULL,
  client_message_id TEXT,
  callback_url TEXT,
  callback_secret TEXT,
  parent_id INTEGER,
  next_question_id INTEGER,
  settled_at INTEGER,
  acked INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
);
-- The DueSource 'question': MIN(expires_at) over pending questions, and the batch that expires them.
CREATE INDEX questions_due ON questions(expires_at) WHERE status = 'pending';
-- clientMessageId idempotency per channel (30 days: the newest match younger than that).
CREATE INDEX questions_by_client_id ON questions(channel_id, client_message_id) WHERE client_message_id IS NOT NULL;
-- POST /message/{id}/answer.
CREATE INDEX questions_by_message ON questions(message_id);
-- GET /ask/pending-answers: a channel's settled, unacknowledged questions, oldest first.
CREATE INDEX questions_unacked ON questions(channel_id, settled_at, id)
  WHERE acked = 0 AND status IN ('answered', 'expired');
