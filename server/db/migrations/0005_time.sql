-- Small server-wide facts that must survive a restart. `aliveAt` (unix ms, written every 30 s and at a
-- clean stop) lets the next start record the downtime [aliveAt, start] as an `unknown` gap.
CREATE TABLE server_state (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
