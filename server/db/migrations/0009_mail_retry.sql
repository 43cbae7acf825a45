-- Mail through SMTP is queued in the outbox and retried with backoff (issue 20): a failed send is never
-- lost. status: 'kept' (no SMTP configured; the admin reads it), 'pending' (to send at next_attempt_at),
-- 'failed' (gave up after the last attempt; last_error says why). A sent mail's row is deleted.
ALTER TABLE mail_outbox ADD COLUMN status TEXT NOT NULL DEFAULT 'kept';
ALTER TABLE mail_outbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE mail_outbox ADD COLUMN next_attempt_at INTEGER;
ALTER TABLE mail_outbox ADD COLUMN last_error TEXT;
CREATE INDEX mail_outbox_due ON mail_outbox(next_attempt_at) WHERE next_attempt_at IS NOT NULL;
