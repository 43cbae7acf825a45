/** Wire shapes of the API (spec + docs/api.md). */

import type { PresentedDelivery } from '../../../server/delivery/outbox/present';

export interface Paging {
  size: number;
  limit: number;
  since?: number;
  next?: string;
}

export interface Message {
  id: number;
  appid: number;
  message: string;
  title: string;
  priority: number;
  date: string;
  read?: boolean;
  senderName?: string;
  extras?: Record<string, unknown>;
}

export interface MessagePage {
  paging: Paging;
  messages: Message[];
}

export interface Channel {
  id: number;
  token: string;
  name: string;
  description: string;
  internal: boolean;
  image: string;
  defaultPriority: number;
  lastUsed: string | null;
  sortKey: string;
  parentId?: number;
  tags: string[];
  shared?: boolean;
  sharePermission?: 'view' | 'send';
  canShare?: boolean;
  /** Heartbeat health (docs/api.md "Channel summary"). */
  hbTotal?: number;
  hbAlerting?: number;
  hbAlertingInfo?: number;
  hbPending?: number;
  hbStatus?: 'none' | 'ok' | 'degraded' | 'alerting' | 'pending';
  /** Re-delivery settings, secrets masked; only for the owner (docs/api.md "deliveryConfig"). */
  deliveryConfig?: DeliveryConfig;
}

/** `deliveryConfig`: one settings object per adapter (`email`, `webhook`, …), secrets as "********". */
export type DeliveryConfig = Record<string, Record<string, unknown>>;

/** An outbox entry (`GET /application/{id}/deliveries`): the server's own type (type-only import). */
export type DeliveryEntry = PresentedDelivery;

export interface DeliveryPage {
  paging: Paging;
  deliveries: DeliveryEntry[];
}

/** `POST /application/{id}/delivery/test` → one result per adapter tried. */
export interface DeliveryTestAnswer {
  results: Record<string, { ok: boolean; error?: string }>;
}

export interface ChannelKey {
  id: number;
  appid: number;
  name: string;
  note: string;
  canRead: boolean;
  canWrite: boolean;
  primary: boolean;
  expiresAt: number;
  revoked: boolean;
  lastUsed: string | null;
  createdAt: string;
  token: string;
}

export interface Share {
  id: number;
  appid: number;
  email: string;
  permission: 'view' | 'send';
  canShare: boolean;
  status: 'pending' | 'accepted' | 'declined';
  createdAt: string;
  channelName?: string;
  ownerEmail?: string;
}

export interface Webhook {
  id: number;
  appid: number;
  name: string;
  mode: 'static' | 'dynamic';
  title: string;
  text: string;
  priority: number | null;
  url: string;
  createdAt: string;
  lastUsed: string | null;
}

export interface Device {
  id: number;
  name: string;
  token: string;
  lastUsed: string | null;
  createdAt: string;
  status: 'active' | 'suspended' | 'revoked';
  platform: string;
  lastIp: string;
  lastUserAgent: string;
  current: boolean;
}

export interface LoginResponse {
  id: number;
  name: string;
  token: string;
  user_id: number;
  platform: string;
  suspended_device_id?: number;
}

export interface MfaChallenge {
  challenge: string;
  methods: ('totp' | 'mobile' | 'recovery')[];
  mobileCode?: string;
  expiresIn: number;
}

export interface User {
  id: number;
  email: string;
  name?: string;
  admin: boolean;
  verified: boolean;
  plan: 'free' | 'pro' | 'business';
  eventCounter: number;
  messageCounter: number;
  image: string;
  mfaEnabled: boolean;
  storageBytes?: number;
}

export interface MfaStatus {
  enabled: boolean;
  pendingSetup: boolean;
  recoveryCodesRemaining: number;
  mobileConnected: boolean;
  mobileEnabled: boolean;
  approverDevices: { id: number; name: string }[] | number[];
}

/** The wire shape is the server's own type (a type-only import: nothing of the server is bundled). */
export type { QuietHours } from '../../../server/features/current-user/quiet-hours';

export interface ApiToken {
  id: number;
  name: string;
  access: 'read' | 'write';
  appIds: number[];
  appTags: string[];
  expiresAt?: string | null;
  token: string;
  lastUsed?: string | null;
  createdAt?: string;
}

export interface QuotaBreakdown {
  day: string;
  plan: string;
  limit: number;
  used: number;
  remaining: number;
  hours: { at: string; count: number }[];
  minutes: { at: string; count: number }[];
  storage: { messages: number; messageBytes: number; imageBytes: number; totalBytes: number };
}

export interface OutboxMail {
  id: number;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  createdAt: string;
  /** kept: no SMTP configured; pending: to be (re)sent at nextAttemptAt; failed: given up. */
  status: 'kept' | 'pending' | 'failed';
  attempts: number;
  nextAttemptAt: string | null;
  lastError: string | null;
}

export interface Pairing {
  id: number;
  code: string;
  expiresAt: string;
  expiresIn: number;
  urls: string[];
  lan: boolean;
}

/** Interactive questions (wire-families §7): the kinds of question and of form field. */
export type QuestionType = 'choice' | 'multi' | 'form' | 'text';
export type QuestionFieldType =
  | 'text'
  | 'textarea'
  | 'number'
  | 'boolean'
  | 'select'
  | 'multiselect'
  | 'date'
  | 'email';
export type QuestionStatus = 'pending' | 'answered' | 'expired' | 'cancelled';

export interface QuestionField {
  name: string;
  label?: string;
  type: QuestionFieldType;
  required?: boolean;
  options?: string[];
  default?: unknown;
  placeholder?: string;
}

/** A question message's `extras["service::question"]`. */
export interface QuestionExtra {
  id: number;
  type: QuestionType;
  options: string[];
  defaultOption: string | null;
  multiSelect: boolean;
  fields: QuestionField[];
  format: 'text' | 'json';
  expiresAt: string;
  links?: Record<string, string>;
}

/** `GET /ask-question/{id}` (410 once expired or cancelled): the question's fields and its state. */
export interface QuestionRecord extends Omit<QuestionExtra, 'links'> {
  appid: number;
  messageId: number;
  status: QuestionStatus;
  title: string;
  question: string;
  answer: unknown;
  answeredAt: string | null;
  answeredBy: 'user' | 'link' | 'default' | null;
  timeout_sec: number;
  clientMessageId: string | null;
  parentId: number | null;
  nextQuestionId: number | null;
  createdAt: string;
}

/** The `question:updated` service frame's data (wire-families §1.7). */
export interface QuestionUpdated {
  id: number;
  status: QuestionStatus;
  messageId: number;
}

/** `GET /assistant/threads`: a conversation with the assistant (docs/api.md, "Assistant"). */
export interface AssistantThread {
  id: number;
  title: string;
  createdAt: string;
  updatedAt: string;
}

/** `GET /assistant/threads/{id}/messages`, oldest first. */
export interface AssistantMessage {
  id: number;
  role: 'user' | 'assistant';
  content: string;
  createdAt: string;
}

/** `POST /assistant/chat`'s answer; `provider` is `local` or the configured model's name. */
export interface AssistantReply {
  threadId: number;
  reply: string;
  provider: string;
}

export type InsightSeverity = 'info' | 'warning' | 'critical';

/** A place an insight points at: `kind` is `channel` or a source kind (`heartbeat`, `http-monitor`, …). */
export interface InsightLink {
  label: string;
  kind: string;
  id: number;
}

export interface Insight {
  kind: string;
  title: string;
  detail: string;
  severity: InsightSeverity;
  links: InsightLink[];
}

/** `GET /assistant/insights`. */
export interface Insights {
  generatedAt: string;
  provider: string;
  polished: boolean;
  /** The configured model, null without one (ext). */
  model?: string | null;
  items: Insight[];
}
