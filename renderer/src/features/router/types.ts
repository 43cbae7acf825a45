/** Wire shapes of the webhook router (design: wire-families.md §11; docs/api.md "Webhook router"). */
import type { Message, Paging } from '../../api/types';

/** The caller's one router. `token` and `url` are full only in the first GET and the rotate answer. */
export interface WebhookRouter {
  token: string;
  url: string;
  enabled: boolean;
  defaultAppid: number | null;
  createdAt: string;
}

export type RouterMethod = 'POST' | 'PUT' | 'PATCH' | 'GET';
export const METHODS: RouterMethod[] = ['POST', 'PUT', 'PATCH', 'GET'];

/** One request that reached `/router/{token}/{path…}`. */
export interface RouterEvent {
  id: number;
  /** Starts with `/`, no query. */
  path: string;
  method: RouterMethod;
  query: Record<string, string | string[]>;
  /** Lowercased names; credentials and hop-by-hop headers are never stored. */
  headers: Record<string, string>;
  /** Parsed JSON, a form as an object, else the text. */
  body: unknown;
  receivedAt: string;
  matchedRuleId: number | null;
  appid: number | null;
  messageId: number | null;
  size: number;
}

export interface RouterEventPage {
  paging: Paging;
  events: RouterEvent[];
}

export type MatchOp = 'equals' | 'exists' | 'notExists';
export const MATCH_OPS: { op: MatchOp; label: string }[] = [
  { op: 'equals', label: 'equals' },
  { op: 'exists', label: 'exists' },
  { op: 'notExists', label: 'does not exist' },
];

export interface MatchCondition {
  path: string;
  op: MatchOp;
  value?: unknown;
}

export interface RouterRule {
  id: number;
  name: string;
  pathPattern: string;
  method: RouterMethod | null;
  match: MatchCondition[];
  appid: number | null;
  title: string;
  /** null: the default text, the body as indented JSON. */
  message: string | null;
  priority: number | null;
  enabled: boolean;
  position: number;
  createdAt: string;
}

/** The body of POST /webhook-router/rule and PUT /webhook-router/rule/{id}. */
export type RouterRuleInput = Omit<RouterRule, 'id' | 'position' | 'createdAt'>;

/** `POST /webhook-router/rule/from-event/{eid}` answers a draft (no id unless `save: true`). */
export interface FromEventAnswer {
  rule: Omit<RouterRule, 'id' | 'position' | 'createdAt'> & { id: number | null };
}

/** A message the router made, with the event and rule behind it. */
export interface RoutedMessage extends Message {
  routerEventId: number;
  ruleId: number | null;
}

export interface RoutedMessagePage {
  paging: Paging;
  messages: RoutedMessage[];
}
