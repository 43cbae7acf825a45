/** Wire shapes of the monitors family (docs/api.md "Monitors"; history "monitor-history"). */

export type MonitorKindName =
  | 'monitor'
  | 'http-monitor'
  | 'content-monitor'
  | 'port-monitor'
  | 'workflow-monitor'
  | 'browser-workflow';

export type MonitorStatus = 'pending' | 'up' | 'down' | 'maintenance' | 'unknown' | 'paused';

export interface JsonAssertion {
  path: string;
  op: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'contains' | 'exists' | 'notExists' | 'matches';
  value?: unknown;
}

export interface BasicAuth {
  username: string;
  password: string;
}

export interface Extract {
  var: string;
  from: 'json' | 'regex' | 'header';
  path?: string;
  pattern?: string;
  header?: string;
}

export interface WorkflowStep {
  name?: string;
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  basicAuth?: BasicAuth | null;
  expectedStatus?: string[];
  followRedirects?: boolean;
  assert?: {
    maxResponseMs?: number | null;
    bodyContains?: string | null;
    bodyNotContains?: string | null;
    json?: JsonAssertion[];
  } | null;
  extract?: Extract[];
}

/** Every kind's record: the common fields of §2.2 and its kind fields side by side. */
export interface Monitor {
  id: number;
  kind: MonitorKindName;
  appid: number;
  name: string;
  paused: boolean;
  status: MonitorStatus;
  statusSince: string | null;
  lastCheckAt: string | null;
  createdAt: string;
  intervalSec: number;
  timeoutSec: number;
  retries: number;
  resendEverySec: number;
  priority: number;
  consecutiveFailures: number;
  lastError: string | null;
  lastResponseMs: number | null;
  // monitor, http-monitor, content-monitor
  url?: string;
  // http-monitor
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  basicAuth?: BasicAuth | null;
  expectedStatus?: string[];
  followRedirects?: boolean;
  ignoreTlsErrors?: boolean;
  maxResponseMs?: number | null;
  bodyContains?: string | null;
  bodyNotContains?: string | null;
  json?: JsonAssertion[];
  tlsExpiryDays?: number;
  // content-monitor
  selector?: string;
  rule?: ContentRule;
  value?: string | number | null;
  render?: 'html' | 'browser';
  lastValue?: string | null;
  lastChangedAt?: string | null;
  // port-monitor
  host?: string;
  port?: number;
  tls?: boolean;
  // workflow-monitor, browser-workflow (its steps are BrowserStep[]: read them with browserStepsOf)
  variables?: Record<string, string>;
  steps?: WorkflowStep[];
  // browser-workflow
  cookies?: BrowserCookie[];
}

/** docs/api.md "Browser workflows": what a step does. */
export type BrowserAction = 'goto' | 'click' | 'fill' | 'press' | 'waitFor' | 'expectText' | 'expectUrl';

export interface BrowserStep {
  action: BrowserAction;
  selector?: string;
  /** fill: the text; press: the key; waitFor: milliseconds; expectText / expectUrl: a pattern. */
  value?: string | number;
  url?: string;
  timeoutMs?: number;
  secret?: boolean;
}

export interface BrowserCookie {
  name: string;
  value: string;
  domain?: string;
  path?: string;
  expires?: number | null;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: 'Strict' | 'Lax' | 'None';
}

/** One step of a browser run's `details.steps`. */
export interface BrowserStepResult {
  action: BrowserAction;
  ok: boolean;
  durationMs: number;
  error?: string;
}

/** `GET /power` (docs/api.md "Power: battery awareness"). */
export interface PowerState {
  onBattery: boolean;
  source: 'setting' | 'electron';
  intervalFactor: number;
  batteryIntervalFactor: number;
  browserWorkflowsPaused: boolean;
  since: string | null;
}

export type ContentRule = 'changed' | 'contains' | 'notContains' | 'matches' | 'numberAbove' | 'numberBelow';

/** The answer of `/test` and `check-now` (§2.6). */
export interface TestAnswer {
  ok: boolean;
  status: 'up' | 'down';
  responseTimeMs: number | null;
  error?: string;
  details: Record<string, unknown>;
}

/** The answer of `POST /content-monitor/test-rule`. */
export interface RuleAnswer {
  ok: boolean;
  text: string;
  number?: number;
  matched: number;
  error?: string;
}

export interface SelectorCandidate {
  selector: string;
  text: string;
  count: number;
}

export interface CheckEntry {
  id: number;
  at: string;
  ok: boolean;
  status: string;
  responseTimeMs: number | null;
  error?: string;
}
