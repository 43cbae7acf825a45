/** Every limit of the spec ("Limits") and the contract, named once and used by schemas and tests alike. */
export const PRIORITY_MIN = 0;
export const PRIORITY_MAX = 10;
export const PAGE_LIMIT_MIN = 1;
export const PAGE_LIMIT_MAX = 200;
export const PAGE_LIMIT_DEFAULT = 100;
export const SEARCH_QUERY_MIN_LENGTH = 2;
export const PASSWORD_MIN_CHARS = 8;
export const PASSWORD_MAX_BYTES = 72;
export const CHANNEL_TAGS_MAX = 10;
export const CHANNEL_TAG_RE = /^[a-z0-9_-]+$/;
export const SUDO_WINDOW_MS = 900_000;
export const MFA_CHALLENGE_TTL_MS = 300_000;
export const QUESTION_EXTEND_MIN_SEC = 1;
export const QUESTION_EXTEND_MAX_SEC = 86_400;
export const SSE_KEEPALIVE_MS = 25_000;
export const WS_PING_INTERVAL_MS = 30_000;
/** A socket with more unsent bytes than this is cut off (close 1013) instead of buffering without bound. */
export const WS_MAX_BUFFERED_BYTES = 1024 * 1024;
/** Clients send nothing on /ws; a larger incoming frame closes the socket (1009). */
export const WS_MAX_INCOMING_BYTES = 4096;
/** After sending a close frame, a socket that has not closed within this is destroyed. */
export const WS_CLOSE_GRACE_MS = 2_000;
/** An SSE stream with more unsent bytes than this is ended (it only carries small change signals). */
export const SSE_MAX_BUFFERED_BYTES = 256 * 1024;
export const LOGIN_FAILURES_PER_MINUTE = 10;
export const RATE_WINDOW_MS = 60_000;
/** Password-reset mails one account can receive in an hour; more requests answer 200 and send nothing. */
export const RESET_MAILS_PER_HOUR = 3;
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;
export const UPLOAD_LIMIT_BYTES = 2 * 1024 * 1024;
export const RECOVERY_CODE_COUNT = 10;
/** lastUsed columns are refreshed at most this often, so reads do not turn into journal writes. */
export const LAST_USED_RESOLUTION_MS = 30_000;

export type PlanName = 'free' | 'pro' | 'business';
export const PLAN_NAMES: readonly PlanName[] = ['free', 'pro', 'business'];

export interface PlanLimits {
  devices: number;
  eventsPerDay: number;
  statusPages: number;
  maintenanceWindows: number;
  /** Caps on a user's configuration objects (issue 21, item 8): each a count, except the *Bytes. */
  channels: number;
  webhooks: number;
  /** Extra channel keys (a channel's primary key comes with the channel and is not counted). */
  channelKeys: number;
  /** Shares the user granted (as owner or resharer). */
  shares: number;
  apiTokens: number;
  /** UTF-8 bytes of one public webhook's title and text together. */
  webhookTemplateBytes: number;
  /** UTF-8 bytes of all the user's configuration objects (channels, webhooks, keys, shares, tokens). */
  configBytes: number;
}

/** Contract defaults; `plans.json` in the data dir may override any field. */
export const DEFAULT_PLANS: Readonly<Record<PlanName, PlanLimits>> = {
  free: {
    devices: 3,
    eventsPerDay: 1_000,
    statusPages: 1,
    maintenanceWindows: 1,
    channels: 50,
    webhooks: 50,
    channelKeys: 50,
    shares: 50,
    apiTokens: 20,
    webhookTemplateBytes: 8 * 1024,
    configBytes: 1024 * 1024,
  },
  pro: {
    devices: 10,
    eventsPerDay: 50_000,
    statusPages: 5,
    maintenanceWindows: 10,
    channels: 500,
    webhooks: 500,
    channelKeys: 500,
    shares: 500,
    apiTokens: 100,
    webhookTemplateBytes: 64 * 1024,
    configBytes: 16 * 1024 * 1024,
  },
  business: {
    devices: 100,
    eventsPerDay: 1_000_000,
    statusPages: 50,
    maintenanceWindows: 100,
    channels: 5_000,
    webhooks: 5_000,
    channelKeys: 5_000,
    shares: 5_000,
    apiTokens: 1_000,
    webhookTemplateBytes: 256 * 1024,
    configBytes: 64 * 1024 * 1024,
  },
};

export function planRank(plan: PlanName): number {
  return PLAN_NAMES.indexOf(plan);
}

/** Channels, messages, sharing (issue 4; decisions in docs/api.md). */
export const CHANNEL_NAME_MAX = 200;
export const CHANNEL_TAG_MAX_CHARS = 50;
export const MESSAGE_MAX_CHARS = 65_536;
export const TITLE_MAX_CHARS = 1_000;
export const READ_IDS_MAX = 1_000;
export const DELIVERY_DELAY_MAX_SEC = 86_400;
export const DELIVERY_DELAY_DEFAULT_SEC = 300;
/** Retention defaults: keep a laptop's memory bounded (a loaded 1M-message database holds ~0.5 GB). */
export const RETENTION_PER_CHANNEL_MAX = 10_000;
export const RETENTION_MAX_AGE_MS = 90 * 24 * 60 * 60 * 1000;
export const RETENTION_TOTAL_MAX = 1_000_000;
/** Rows deleted per transaction by retention, so one run never blocks the event loop for long. */
export const RETENTION_BATCH = 5_000;

/** How long the per-user storage sum of `GET /current/user` and the quota breakdown may be stale. */
export const STORAGE_SNAPSHOT_TTL_MS = 60_000;

/**
 * Sign-in throttling beyond the contract's 10 failures a minute (which count per account and client
 * address pair): failed sign-ins of one account from all addresses together in an hour.
 */
export const LOGIN_ACCOUNT_FAILURES_PER_HOUR = 100;
/** Self-registration: requests per client address in an hour, and from everyone together. */
export const REGISTRATIONS_PER_ADDRESS_PER_HOUR = 5;
export const REGISTRATIONS_PER_HOUR = 50;
/** Registration mails (verification or "already registered") one address receives in an hour. */
export const REGISTRATION_MAILS_PER_HOUR = 3;
/**
 * Connection limits (issue 21; docs/operations.md, "Connection limits"). A socket that has not sent a
 * complete request (or sits idle between keep-alive requests) is "pending": beyond the cap the oldest
 * pending socket is closed to make room, so a flood of slow-header sockets cannot lock out /health.
 */
export const HTTP_MAX_PENDING_SOCKETS = 256;
/** All open sockets; beyond it the oldest pending, then the oldest still-uploading socket is closed. */
export const HTTP_MAX_CONNECTIONS = 2_048;
/** File descriptors kept free for the database, journals, uploads and logs when the OS limit is lower. */
export const HTTP_FD_RESERVE = 128;
/** Time to send the request line and headers, and the whole request (node's headersTimeout/requestTimeout). */
export const HTTP_HEADERS_TIMEOUT_MS = 10_000;
export const HTTP_REQUEST_TIMEOUT_MS = 60_000;
/** Live connections (WebSockets and SSE streams together) per credential and per user; more get 429. */
export const LIVE_CONNECTIONS_PER_TOKEN = 16;
export const LIVE_CONNECTIONS_PER_USER = 1_024;
/** JSON request bodies nested deeper than this are refused (400) before any handler walks them. */
export const JSON_MAX_DEPTH = 64;
/** Heartbeats: per-user cap, pings a minute per token, ping body kept in the log, fail_reason length. */
export const HEARTBEATS_PER_USER = 1_000;
export const HEARTBEAT_PINGS_PER_MINUTE = 600;
export const HEARTBEAT_PING_BODY_BYTES = 10_000;
export const HEARTBEAT_FAIL_REASON_CHARS = 1_000;
/** Monitors of every kind per user (§0.7). */
export const MONITORS_PER_USER = 1_000;
/** Status-page subscription confirmation mails per address an hour (further requests answer the same, silently). */
export const STATUS_CONFIRMATIONS_PER_HOUR = 5;
/** Incidents listed on a status page (newest first). */
export const STATUS_INCIDENTS_SHOWN = 50;
/** Browser workflows per user, within the monitors' cap (§0.7). */
export const BROWSER_WORKFLOWS_PER_USER = 20;
