-- FTS4 merges its index segments when a level fills up (16 segments), inside the INSERT that fills it:
-- at a million messages that merge rewrites most of the index and stalls the server for seconds.
-- With automerge the merging is done a little at a time after each transaction, once a level holds 8
-- segments, so no single POST /message pays for it. The setting is stored in the database (replayed
-- deterministically like any statement).
INSERT INTO messages_fts(messages_fts) VALUES ('automerge=8');
