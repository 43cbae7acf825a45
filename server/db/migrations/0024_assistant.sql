-- The assistant (issue 19, docs/assistant.md): a user's chat threads and their messages. Times are unix ms.
-- Threads go with their user, messages with their thread (ON DELETE CASCADE). The service keeps at most
-- 100 threads per user (the least recently updated go first) and 200 messages per thread (oldest first).
CREATE TABLE assistant_threads (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  title TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX assistant_threads_by_user ON assistant_threads(user_id, updated_at);

CREATE TABLE assistant_messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  thread_id INTEGER NOT NULL REFERENCES assistant_threads(id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
  content TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX assistant_messages_by_thread ON assistant_messages(thread_id, id);
