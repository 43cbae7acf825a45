/** Wire shapes of the heartbeats family (docs/api.md "Heartbeats", history "monitor-history"). */

export type HeartbeatStatus = 'new' | 'up' | 'late' | 'down' | 'paused' | 'maintenance';

export interface Heartbeat {
  id: number;
  appid: number;
  name: string;
  paused: boolean;
  status: HeartbeatStatus;
  lastCheckAt: string | null;
  createdAt: string;
  intervalSec: number | null;
  schedule: string | null;
  timezone: string;
  graceSec: number;
  alertMessage: string;
  manualResume: boolean;
  priority: number;
  /** The full H token only in the create and rotate answers, else the masked hint. */
  token: string;
  pingUrl: string;
  expectedAt: string | null;
  deadlineAt: string | null;
  lastFailReason: string | null;
  startedAt: string | null;
  lastDurationMs: number | null;
  statusSince: string | null;
}

/** The body of POST /heartbeat and PUT /heartbeat/{id}. */
export interface HeartbeatInput {
  appid: number;
  name: string;
  intervalSec: number | null;
  schedule: string | null;
  timezone: string;
  graceSec: number;
  alertMessage: string;
  manualResume: boolean;
  priority: number;
}

export type UptimeWindow = '24h' | '7d' | '30d' | '90d';

export interface HistoryDay {
  date: string;
  uptime: number | null;
  status: 'up' | 'down' | 'maintenance' | 'none';
  downSec: number;
  avgMs: number | null;
}

export interface SourceHistory {
  kind: string;
  id: number;
  name: string;
  status: string;
  statusSince: string | null;
  uptime: Record<UptimeWindow, number | null>;
  responseTime: { avgMs: number | null; p95Ms: number | null };
  days: HistoryDay[];
}

export interface PingEntry {
  id: number;
  at: string;
  ok: boolean;
  status: string;
  responseTimeMs: number | null;
  error?: string;
  pingKind?: 'success' | 'start' | 'fail' | 'log' | 'ignored';
  exitCode?: number;
  body?: string;
}

export interface PingLogPage {
  paging: { size: number; limit: number; since?: number; next?: string };
  checks: PingEntry[];
}
