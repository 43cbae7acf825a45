/** The email inbox endpoints the page calls (wire-families §10), in one place. */
import { del, get, post, put, query } from '../../api/client';
import type {
  EmailInbox,
  EmailInboxInput,
  FromMailAnswer,
  InboxRule,
  InboxRuleInput,
  ListenerState,
  MailEvent,
  MailEventPage,
} from './types';

export const listInboxes = () => get<EmailInbox[]>('/email-inbox');
export const getInbox = (id: number) => get<EmailInbox>(`/email-inbox/${id}`);
export const createInbox = (body: EmailInboxInput) => post<EmailInbox>('/email-inbox', body);
export const updateInbox = (id: number, body: Partial<EmailInboxInput>) =>
  put<EmailInbox>(`/email-inbox/${id}`, body);
export const deleteInbox = (id: number) => del(`/email-inbox/${id}`);

/** Whether the SMTP listener runs (Belfry's addition). */
export const getListener = () => get<ListenerState>('/email-inbox/listener');

export const getMail = (eventId: number) => get<MailEvent>(`/email-inbox/event/${eventId}`);
export const listMail = (inboxId: number, limit: number) =>
  get<MailEventPage>(`/email-inbox/event${query({ inboxId, limit })}`);

/** The rules in any answer shape: a bare array or `{rules}`. */
export const listRules = async (inboxId: number) => {
  const r = await get<InboxRule[] | { rules: InboxRule[] }>(`/email-inbox/${inboxId}/rules`);
  return Array.isArray(r) ? r : r.rules;
};
export const createRule = (inboxId: number, body: InboxRuleInput) =>
  post<InboxRule>(`/email-inbox/${inboxId}/rules`, body);
export const updateRule = (
  inboxId: number,
  ruleId: number,
  body: Partial<InboxRuleInput & { position: number }>,
) => put<InboxRule>(`/email-inbox/${inboxId}/rules/${ruleId}`, body);
export const deleteRule = (inboxId: number, ruleId: number) => del(`/email-inbox/${inboxId}/rules/${ruleId}`);
export const ruleFromMail = (eventId: number) =>
  post<FromMailAnswer>(`/email-inbox/rule/from-event/${eventId}`, { save: false });
