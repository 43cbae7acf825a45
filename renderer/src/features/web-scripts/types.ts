/** Web scripts on the wire (wire-families §9, docs/api.md "Web scripts"). */

export type ScriptStatus = 'pending' | 'ok' | 'issues' | 'paused';

export interface WebScript {
  id: number;
  appid: number;
  name: string;
  paused: boolean;
  status: ScriptStatus;
  statusSince?: string;
  lastCheckAt: string | null;
  createdAt: string;
  allowedOrigins: string[];
  priority: number;
  /** The full token only in the create and rotate answers; elsewhere the masked hint. */
  token: string;
  url: string;
  snippet: string;
  unresolvedCount: number;
}

export interface WebScriptInput {
  appid?: number;
  name?: string;
  paused?: boolean;
  allowedOrigins?: string[];
  priority?: number;
}

export type IssueStatus = 'unresolved' | 'resolved' | 'ignored';
export type IssueFilter = IssueStatus | 'all';

export interface Issue {
  id: number;
  scriptId: number;
  title: string;
  culprit: string;
  type: 'error' | 'rejection' | 'message';
  count: number;
  firstSeen: string;
  lastSeen: string;
  status: IssueStatus;
  lastUrl: string | null;
  lastRelease: string | null;
  /** Events in each hour of the last 24, oldest first (Belfry's addition to the list answer). */
  sparkline?: number[];
}

export type BreadcrumbType = 'click' | 'navigation' | 'fetch' | 'xhr' | 'console' | 'custom';

export interface Breadcrumb {
  at: string;
  type: BreadcrumbType;
  message: string;
}

/** A frame of the latest event's stack (Belfry's addition to the breadcrumbs answer). */
export interface StackFrame {
  fn: string | null;
  file: string;
  line: number;
  col: number;
  inApp: boolean;
  resolved: boolean;
  original?: { file: string; line: number; col: number; name: string | null };
}

export interface Breadcrumbs {
  eventAt: string | null;
  breadcrumbs: Breadcrumb[];
  frames?: StackFrame[];
}

export interface Analysis {
  issueId: number;
  summary: string;
  likelyCause: string;
  suggestions: string[];
  provider: string;
  lang: 'en' | 'ru';
  createdAt: string;
}

export type Bucket = '1m' | '1h' | '1d';

export interface LoadPoint {
  at: string;
  loads: number;
  pings: number;
  batches: number;
  events: number;
}

export interface ErrorPoint {
  at: string;
  errors: number;
  rejections: number;
  messages: number;
  newIssues: number;
}

export interface SeriesAnswer<P> {
  bucket: Bucket;
  from: string;
  to: string;
  points: P[];
}

export type FlushReason = 'interval' | 'size' | 'unload' | 'error' | 'ping';

export interface FlushStats {
  from: string;
  to: string;
  total: number;
  reasons: Record<FlushReason, number>;
}

export interface SourceMap {
  id: number;
  scriptId: number;
  url: string;
  release: string | null;
  size: number;
  sources: string[];
  createdAt: string;
}
