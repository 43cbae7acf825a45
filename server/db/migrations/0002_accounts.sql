-- Accounts: two-factor, sudo windows, device activity and mutes, the daily event quota, the mail outbox,
-- quiet hours. Times are unix milliseconds; booleans 0/1; lists and objects JSON text.

-- Quiet hours of the user (JSON object); NULL means the spec's defaults.
ALTER TABLE users ADD COLUMN quiet_hours TEXT;

-- TOTP secrets are stored encrypted (AES-256-GCM with a key derived from the install secret).
CREATE TABLE user_mfa (
  user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  secret TEXT,
  pending_secret TEXT,
  enabled INTEGER NOT NULL DEFAULT 0,
  -- The last TOTP time step accepted: a code is accepted once (replay protection).
  last_step INTEGER NOT NULL DEFAULT 0,
  mobile_enabled INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL
);

-- Single-use recovery codes, stored as keyed digests.
CREATE TABLE mfa_recovery_codes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  code_digest TEXT NOT NULL,
  used_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX mfa_recovery_codes_by_user ON mfa_recovery_codes(user_id);

-- Devices that may approve sign-ins of their user (phone approval).
CREATE TABLE mfa_approvers (
  device_id INTEGER PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL
);
CREATE INDEX mfa_approvers_by_user ON mfa_approvers(user_id);

-- Login second-step challenges (kind login) and phone-linking challenges (kind link).
CREATE TABLE mfa_challenges (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('login', 'link')),
  challenge_digest TEXT NOT NULL UNIQUE,
  mobile_code TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'consumed')),
  approved_by INTEGER,
  methods TEXT NOT NULL DEFAULT '[]',
  device_name TEXT NOT NULL DEFAULT '',
  device_platform TEXT NOT NULL DEFAULT '',
  ip TEXT NOT NULL DEFAULT '',
  user_agent TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX mfa_challenges_by_user ON mfa_challenges(user_id, status, expires_at);

-- Sudo: one open window per device.
CREATE TABLE sudo_windows (
  device_id INTEGER PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  method TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX sudo_windows_by_user ON sudo_windows(user_id);

CREATE TABLE device_activity (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  device_id INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL,
  type TEXT NOT NULL,
  at INTEGER NOT NULL,
  ip TEXT NOT NULL DEFAULT '',
  user_agent TEXT NOT NULL DEFAULT '',
  detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX device_activity_by_device ON device_activity(device_id, at);
CREATE INDEX device_activity_by_time ON device_activity(at);

-- Channels muted on a device (the spec's historical name: subscriptions).
CREATE TABLE device_mutes (
  device_id INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
  channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (device_id, channel_id)
) WITHOUT ROWID;
CREATE INDEX device_mutes_by_channel ON device_mutes(channel_id);

-- The daily event quota: one row per user and UTC day (day = floor(ms / 86400000)), kept for the
-- lifetime counter, and one per user and minute (minute = floor(ms / 60000)) for the breakdown.
CREATE TABLE quota_days (
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  day INTEGER NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (user_id, day)
) WITHOUT ROWID;

CREATE TABLE quota_minutes (
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  minute INTEGER NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (user_id, minute)
) WITHOUT ROWID;
CREATE INDEX quota_minutes_by_minute ON quota_minutes(minute);

-- Mail kept when no SMTP server is configured; the admin reads it through GET /admin/outbox.
CREATE TABLE mail_outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  to_addr TEXT NOT NULL,
  subject TEXT NOT NULL,
  text TEXT NOT NULL,
  html TEXT,
  created_at INTEGER NOT NULL
);
