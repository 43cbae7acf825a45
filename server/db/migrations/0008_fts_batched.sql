-- Search indexing leaves the request path (issue 22): FTS4 wrote an index segment inside every message
-- INSERT (~90 µs a message). New messages are now indexed in short batches, one transaction each, by
-- server/features/messages/search-index.ts; everything up to `indexed_up_to` (a message id: ids only grow,
-- AUTOINCREMENT) is in the index, everything above it is not yet. The batch writes its rows and moves the
-- watermark in the same transaction, so a journal replay or a crash anywhere leaves an index that matches
-- the messages up to the watermark exactly, and the next batch catches up on the rest.
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;

-- The index is rebuilt in descending docid order: search lists newest first, and FTS4 reads a doclist
-- incrementally only in the index's own order, stopping at the LIMIT. In ascending order a newest-first
-- search loaded the whole doclist of every word: ~125 ms for two words in every message at 1M, ~2 ms
-- now. The new index starts empty; the batches fill it in the background (watermark 0), oldest first.
DROP TABLE messages_fts;
CREATE VIRTUAL TABLE messages_fts USING fts4(content="messages", title, message, tokenize=unicode61 "remove_diacritics=2", order=DESC);
INSERT INTO messages_fts(messages_fts) VALUES ('automerge=8');

CREATE TABLE search_index_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  indexed_up_to INTEGER NOT NULL
);
INSERT INTO search_index_state (id, indexed_up_to) VALUES (1, 0);

-- A deleted message leaves the index only if it is in it: deleting an unindexed row from an external
-- content FTS4 table writes delete markers for terms never added and counts the row out of the index's
-- statistics (matchinfo 'n'). Not yet indexed: the batch never sees it.
CREATE TRIGGER messages_fts_delete BEFORE DELETE ON messages
  WHEN old.id <= (SELECT indexed_up_to FROM search_index_state WHERE id = 1)
BEGIN
  DELETE FROM messages_fts WHERE docid = old.id;
END;
