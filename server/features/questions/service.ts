import type { AppContext } from '../../context';
import { QUESTION_EXTRA } from '../../delivery/adapters/common';
import { enqueueCallback } from '../../delivery/outbox/callbacks';
import { messageLink } from '../../delivery/outbox/service';
import type { Principal } from '../../http/auth';
import { ApiError, errors } from '../../http/errors';
import { rfc3339, rfc3339OrNull } from '../../lib/clock';
import { seal, unseal } from '../../lib/seal';
import { readLink, signLink } from '../auth/links';
import { inScope, receivedChannel } from '../channels/access';
import { findChannel } from '../channels/store';
import { markMessagesRead, senderNameOf, sendMessages } from '../messages/service';
import { findMessage, markRead, setMessageExtras } from '../messages/store';
import { maySend } from '../sources/access';
import { answerText, presentQuestion, presentReady } from './present';
import {
  type AnsweredBy,
  ackQuestions,
  duePending,
  findByClientId,
  findQuestion,
  findQuestionOfMessage,
  insertQuestion,
  nextExpiry,
  type QuestionRow,
  type QuestionStatus,
  setExpiry,
  setNextQuestion,
  setQuestionMessage,
  settleQuestion,
  unackedOfChannel,
} from './store';
import { type AnswerShape, type AskSpec, checkAnswer, DEFAULT_TITLE, parseAsk } from './validate';

/** The DueSource of question deadlines. */
export const KIND = 'question';
/** `callbackSecret` at rest. */
export const QUESTION_SECRET_PURPOSE = 'question-callback-secret-at-rest';
/** clientMessageId idempotency window (§7.1). */
export const CLIENT_ID_WINDOW_MS = 30 * 86_400_000;
/** Signed answer links stay valid this long; the question's own state decides 409/410 before that. */
export const ANSWER_LINK_TTL_MS = 30 * 86_400_000;
/** At most this many entries in GET /ask/pending-answers. */
export const READY_MAX = 100;
/** Questions expired per transaction by the DueSource. */
const EXPIRE_BATCH = 50;
/** User agents of link previews (§7.4): shown a page, nothing recorded. */
const PREVIEW_AGENTS =
  /Slackbot-LinkExpanding|TelegramBot|Discordbot|facebookexternalhit|Twitterbot|WhatsApp/i;

/** What a write did, for after commit: frames and the earliest new deadline. */
interface Effects {
  frames: { appid: number; id: number; status: QuestionStatus; messageId: number | null }[];
  dueAt: number | null;
}

function newEffects(): Effects {
  return { frames: [], dueAt: null };
}

/** After commit: `question:updated` frames (§1.7) and the due timer. */
function publish(ctx: AppContext, fx: Effects): void {
  for (const f of fx.frames)
    ctx.bus.emit('source:event', {
      appid: f.appid,
      kind: 'question:updated',
      data: { id: f.id, status: f.status, messageId: f.messageId },
    });
  if (fx.dueAt !== null) ctx.due.poke(fx.dueAt);
}

function frameOf(fx: Effects, row: QuestionRow, status: QuestionStatus = row.status): void {
  fx.frames.push({ appid: row.channel_id, id: row.id, status, messageId: row.message_id });
}

function shapeOf(row: QuestionRow): AnswerShape {
  return {
    type: row.type,
    options: JSON.parse(row.options) as string[],
    fields: JSON.parse(row.fields),
    format: row.format,
  };
}

// ---------------------------------------------------------------- asking

interface Inherited {
  title?: string;
  priority?: number;
  callbackUrl?: string | null;
  /** Sealed. */
  callbackSecret?: string | null;
}

function answerLink(ctx: AppContext, questionId: number, option: string): string {
  const token = signLink(ctx, 'answer', { q: questionId, o: option }, ANSWER_LINK_TTL_MS);
  return `${ctx.publicUrl()}/a/answer?token=${token}`;
}

/** `extras["service::question"]` (§7.1): what clients and delivery adapters show. */
function questionExtra(ctx: AppContext, row: QuestionRow): Record<string, unknown> {
  const shape = shapeOf(row);
  return {
    id: row.id,
    type: row.type,
    options: shape.options,
    defaultOption: row.default_option,
    multiSelect: row.type === 'multi',
    fields: shape.fields,
    format: row.format,
    expiresAt: rfc3339(row.expires_at),
    ...(row.type === 'choice'
      ? { links: Object.fromEntries(shape.options.map((o) => [o, answerLink(ctx, row.id, o)])) }
      : {}),
  };
}

/**
 * Inserts the question and writes its message through the messages service (quota, push, re-delivery),
 * inside the caller's transaction. Returns the stored row.
 */
function createQuestion(
  ctx: AppContext,
  channelId: number,
  senderName: string,
  spec: AskSpec,
  opts: { parentId: number | null; clientMessageId: string | null; inherit: Inherited },
  fx: Effects,
): QuestionRow {
  const channel = findChannel(ctx.db, channelId);
  if (!channel) throw errors.notFound('channel');
  const now = ctx.clock.now();
  const expiresAt = now + spec.timeoutSec * 1000;
  const ownCallback = spec.callbackUrl !== undefined && spec.callbackUrl !== null;
  const callbackUrl = ownCallback ? spec.callbackUrl! : (opts.inherit.callbackUrl ?? null);
  const callbackSecret = ownCallback
    ? spec.callbackSecret
      ? seal(ctx.secret, QUESTION_SECRET_PURPOSE, spec.callbackSecret)
      : null
    : (opts.inherit.callbackSecret ?? null);
  const id = insertQuestion(ctx.db, {
    userId: channel.user_id,
    channelId,
    title: spec.title ?? opts.inherit.title ?? DEFAULT_TITLE,
    question: spec.question,
    type: spec.type,
    options: JSON.stringify(spec.options),
    defaultOption: spec.defaultOption,
    fields: JSON.stringify(spec.fields),
    format: spec.format,
    defaultAnswer: spec.defaultAnswer === null ? null : JSON.stringify(spec.defaultAnswer),
    next: JSON.stringify(spec.next),
    priority: spec.priority ?? opts.inherit.priority ?? channel.default_priority,
    senderName,
    expiresAt,
    timeoutSec: spec.timeoutSec,
    clientMessageId: opts.clientMessageId,
    callbackUrl,
    callbackSecret,
    parentId: opts.parentId,
    createdAt: now,
  });
  const row = findQuestion(ctx.db, id)!;
  const message = sendMessages(ctx, channelId, senderName, [
    {
      title: row.title,
      message: row.question,
      priority: row.priority,
      extras: { [QUESTION_EXTRA]: questionExtra(ctx, row) },
      extrasFor: (messageId) => ({
        'client::notification': { click: { url: messageLink(ctx, channelId, messageId) } },
      }),
    },
  ])[0]!;
  setQuestionMessage(ctx.db, id, message.id);
  row.message_id = message.id;
  frameOf(fx, row);
  fx.dueAt = fx.dueAt === null ? expiresAt : Math.min(fx.dueAt, expiresAt);
  return row;
}

function askAnswer(row: QuestionRow) {
  return { id: row.id, status: row.status, messageId: row.message_id, expiresAt: rfc3339(row.expires_at) };
}

/** `POST /ask` (§7.1) with a channel key (A with write, S with send). */
export function ask(ctx: AppContext, p: Principal, body: unknown) {
  const channelId = p.channelId!;
  // A repeated clientMessageId answers the existing question; the rest of the body is not read.
  const raw = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  if (typeof raw.clientMessageId === 'string' && raw.clientMessageId !== '') {
    const existing = findByClientId(
      ctx.db,
      channelId,
      raw.clientMessageId,
      ctx.clock.now() - CLIENT_ID_WINDOW_MS,
    );
    if (existing) return askAnswer(existing);
  }
  const spec = parseAsk(body);
  const fx = newEffects();
  const row = ctx.db.transaction(() =>
    createQuestion(
      ctx,
      channelId,
      senderNameOf(p),
      spec,
      { parentId: null, clientMessageId: spec.clientMessageId, inherit: {} },
      fx,
    ),
  );
  publish(ctx, fx);
  return askAnswer(row);
}

// ---------------------------------------------------------------- access

type Use = 'read' | 'write';

/**
 * The question a principal may reach (§0.2): a channel key only its channel's (else 404); a device or API
 * token the owner's or an accepted recipient's, inside the token's scope (else 404). Writing (answer,
 * cancel, extend) also needs `send` on a shared channel (403).
 */
function reach(ctx: AppContext, p: Principal, row: QuestionRow | undefined, use: Use): QuestionRow {
  if (!row) throw errors.notFound('question');
  if (p.kind === 'app' || p.kind === 'share') {
    if (p.channelId !== row.channel_id) throw errors.notFound('question');
    if (!p.canWrite) throw errors.permissionDenied(p.kind === 'share' ? 'send' : 'write');
    return row;
  }
  const v = receivedChannel(ctx, p.userId, row.channel_id);
  if (!v || !inScope(p, v.row)) throw errors.notFound('question');
  if (use === 'write' && !maySend(v)) throw errors.questionNeedsSend();
  return row;
}

export function getQuestion(ctx: AppContext, p: Principal, id: number) {
  const row = reach(ctx, p, findQuestion(ctx.db, id), 'read');
  if (row.status === 'expired') throw errors.questionExpired();
  if (row.status === 'cancelled') throw errors.questionCancelled();
  return presentQuestion(row);
}

export function pendingAnswers(ctx: AppContext, p: Principal) {
  return { answers: unackedOfChannel(ctx.db, p.channelId!, READY_MAX).map(presentReady) };
}

export function ack(ctx: AppContext, p: Principal, ids: readonly number[]) {
  const acked = ctx.db.transaction(() => ackQuestions(ctx.db, p.channelId!, [...new Set(ids)]));
  return { acked };
}

// ---------------------------------------------------------------- state changes

/** The callback of an outcome (§7.5), inside the transaction; none without a callbackUrl. */
function callback(ctx: AppContext, row: QuestionRow): void {
  if (row.callback_url === null) return;
  enqueueCallback(ctx, {
    userId: row.user_id,
    appid: row.channel_id,
    messageId: row.message_id,
    url: row.callback_url,
    secret:
      row.callback_secret === null ? null : unseal(ctx.secret, QUESTION_SECRET_PURPOSE, row.callback_secret),
    body: {
      id: row.id,
      status: row.status,
      answer: row.answer === null ? null : JSON.parse(row.answer),
      answeredAt: rfc3339OrNull(row.answered_at),
      clientMessageId: row.client_message_id,
    },
  });
}

/**
 * Leaves pending inside the caller's transaction: the row, the callback, the frame, and for an answer with
 * a follow-up (`next`), the follow-up. False when the question was no longer pending.
 */
function settle(
  ctx: AppContext,
  row: QuestionRow,
  s: {
    status: Exclude<QuestionStatus, 'pending'>;
    answer: unknown;
    answeredAt: number | null;
    by: AnsweredBy | null;
    at: number;
  },
  fx: Effects,
): boolean {
  const answer = s.answer === null ? null : JSON.stringify(s.answer);
  const changed = settleQuestion(ctx.db, row.id, {
    status: s.status,
    answer,
    answeredAt: s.answeredAt,
    answeredBy: s.by,
    at: s.at,
  });
  if (!changed) return false;
  Object.assign(row, {
    status: s.status,
    answer,
    answered_at: s.answeredAt,
    answered_by: s.by,
    settled_at: s.at,
  });
  if (typeof s.answer === 'string' && row.type === 'choice') askFollowUp(ctx, row, s.answer, fx);
  callback(ctx, row);
  frameOf(fx, row);
  return true;
}

/**
 * The follow-up of an option (§7.3 `next`), asked at once in the same channel. A spent daily quota skips
 * it (the answer stands; `nextQuestionId` stays null).
 */
function askFollowUp(ctx: AppContext, row: QuestionRow, option: string, fx: Effects): void {
  const next = (JSON.parse(row.next) as Record<string, AskSpec>)[option];
  if (!next) return;
  const spec: AskSpec = { ...next, defaultAnswer: next.defaultAnswer ?? null, next: next.next ?? {} };
  const inner = newEffects();
  try {
    const child = ctx.db.transaction(() =>
      createQuestion(
        ctx,
        row.channel_id,
        row.sender_name,
        spec,
        {
          parentId: row.id,
          clientMessageId: row.client_message_id === null ? null : `${row.client_message_id}/${option}`,
          inherit: {
            title: row.title,
            priority: row.priority,
            callbackUrl: row.callback_url,
            callbackSecret: row.callback_secret,
          },
        },
        inner,
      ),
    );
    setNextQuestion(ctx.db, row.id, child.id);
    row.next_question_id = child.id;
  } catch (err) {
    if (err instanceof ApiError && err.status === 429) return;
    throw err;
  }
  fx.frames.push(...inner.frames);
  if (inner.dueAt !== null) fx.dueAt = fx.dueAt === null ? inner.dueAt : Math.min(fx.dueAt, inner.dueAt);
}

/** The deadline (§7.3): expired, with the default answer submitted when there is one. */
function expire(ctx: AppContext, row: QuestionRow, fx: Effects): void {
  const answer = row.default_answer === null ? null : (JSON.parse(row.default_answer) as unknown);
  settle(
    ctx,
    row,
    {
      status: 'expired',
      answer,
      answeredAt: answer === null ? null : row.expires_at,
      by: answer === null ? null : 'default',
      at: row.expires_at,
    },
    fx,
  );
}

/**
 * A pending question whose deadline has passed but which the due timer has not reached yet is expired
 * here, so an answer never lands after the deadline. True when it was.
 */
function expireIfDue(ctx: AppContext, row: QuestionRow): boolean {
  if (row.status !== 'pending' || row.expires_at > ctx.clock.now()) return false;
  const fx = newEffects();
  ctx.db.transaction(() => expire(ctx, row, fx));
  publish(ctx, fx);
  return true;
}

function requirePending(ctx: AppContext, row: QuestionRow): void {
  if (row.status !== 'pending' || expireIfDue(ctx, row)) throw errors.questionNotPending();
}

function record(ctx: AppContext, id: number) {
  return presentQuestion(findQuestion(ctx.db, id)!);
}

/** `POST /ask-question/{id}/answer`, `POST /message/{id}/answer` (§7.3). */
function answerAs(ctx: AppContext, p: Principal, row: QuestionRow, value: unknown) {
  requirePending(ctx, row);
  const answer = checkAnswer(shapeOf(row), value);
  const fx = newEffects();
  const now = ctx.clock.now();
  const ok = ctx.db.transaction(() => {
    if (!settle(ctx, row, { status: 'answered', answer, answeredAt: now, by: 'user', at: now }, fx))
      return false;
    // The answering user has seen it: their read mark (which cancels the owner's queued re-deliveries).
    if (row.message_id !== null) markMessagesRead(ctx, p, [row.message_id]);
    return true;
  });
  if (!ok) throw errors.questionNotPending();
  publish(ctx, fx);
  return record(ctx, row.id);
}

export function answerQuestion(ctx: AppContext, p: Principal, id: number, value: unknown) {
  return answerAs(ctx, p, reach(ctx, p, findQuestion(ctx.db, id), 'write'), value);
}

export function answerMessage(ctx: AppContext, p: Principal, messageId: number, value: unknown) {
  const message = findMessage(ctx.db, messageId);
  const v = message ? receivedChannel(ctx, p.userId, message.channel_id) : undefined;
  if (!message || !v || !inScope(p, v.row)) throw errors.notFound('message');
  const row = findQuestionOfMessage(ctx.db, messageId);
  if (!row) throw errors.notAQuestion();
  return answerAs(ctx, p, reach(ctx, p, row, 'write'), value);
}

/** `DELETE /ask-question/{id}`: cancelled (§7.3); answers the record. */
export function cancelQuestion(ctx: AppContext, p: Principal, id: number) {
  const row = reach(ctx, p, findQuestion(ctx.db, id), 'write');
  requirePending(ctx, row);
  const fx = newEffects();
  const now = ctx.clock.now();
  const ok = ctx.db.transaction(() =>
    settle(ctx, row, { status: 'cancelled', answer: null, answeredAt: null, by: null, at: now }, fx),
  );
  if (!ok) throw errors.questionNotPending();
  publish(ctx, fx);
  return record(ctx, id);
}

/** `POST /ask-question/{id}/extend`: the deadline becomes now + timeout_sec (not added; spec). */
export function extendQuestion(ctx: AppContext, p: Principal, id: number, timeoutSec: number) {
  const row = reach(ctx, p, findQuestion(ctx.db, id), 'write');
  requirePending(ctx, row);
  const expiresAt = ctx.clock.now() + timeoutSec * 1000;
  const fx = newEffects();
  ctx.db.transaction(() => {
    setExpiry(ctx.db, id, expiresAt, timeoutSec);
    row.expires_at = expiresAt;
    row.timeout_sec = timeoutSec;
    // The message's extras carry the deadline (delivery adapters close the buttons after it).
    const message = row.message_id === null ? undefined : findMessage(ctx.db, row.message_id);
    if (message?.extras) {
      const extras = JSON.parse(message.extras) as Record<string, unknown>;
      const q = extras[QUESTION_EXTRA];
      if (typeof q === 'object' && q !== null) {
        extras[QUESTION_EXTRA] = { ...q, expiresAt: rfc3339(expiresAt) };
        setMessageExtras(ctx.db, message.id, JSON.stringify(extras));
      }
    }
  });
  frameOf(fx, row);
  // A later deadline needs no poke (the timer wakes early and finds nothing); an earlier one does.
  fx.dueAt = expiresAt;
  publish(ctx, fx);
  return record(ctx, id);
}

// ---------------------------------------------------------------- the signed link

export type LinkOutcome = { preview: true } | { preview: false; option: string; id: number };

/**
 * `GET /a/answer?token=` (§7.4). Throws the page's error (400, 409, 410) from the catalog; a link-preview
 * agent records nothing.
 */
export function answerByLink(ctx: AppContext, token: unknown, userAgent: string): LinkOutcome {
  if (PREVIEW_AGENTS.test(userAgent)) return { preview: true };
  const data = readLink(ctx, 'answer', token);
  const qid = data?.q;
  const option = data?.o;
  if (typeof qid !== 'number' || typeof option !== 'string') throw errors.answerLinkInvalid();
  const row = findQuestion(ctx.db, qid);
  if (!row) throw errors.answerLinkClosed();
  if (row.status === 'answered') throw errors.answerLinkAnswered(answerText(row.answer));
  if (row.status !== 'pending' || expireIfDue(ctx, row)) throw errors.answerLinkClosed();
  if (row.type !== 'choice' || !(JSON.parse(row.options) as string[]).includes(option))
    throw errors.answerLinkInvalid();
  const fx = newEffects();
  const now = ctx.clock.now();
  const ok = ctx.db.transaction(() => {
    if (!settle(ctx, row, { status: 'answered', answer: option, answeredAt: now, by: 'link', at: now }, fx))
      return false;
    // The link carries no user: the owner's read mark, as /m/read does.
    if (row.message_id !== null && findMessage(ctx.db, row.message_id))
      markRead(ctx.db, row.user_id, [row.message_id]);
    return true;
  });
  if (!ok) throw errors.answerLinkAnswered(answerText(findQuestion(ctx.db, qid)!.answer));
  publish(ctx, fx);
  return { preview: false, option, id: row.id };
}

// ---------------------------------------------------------------- deadlines

export function questionNextDue(ctx: AppContext): number | null {
  return nextExpiry(ctx.db);
}

/** DueSource 'question': expires what is due, a bounded batch per transaction. */
export function runDueQuestions(ctx: AppContext, now: number): void {
  const rows = duePending(ctx.db, now, EXPIRE_BATCH);
  if (rows.length === 0) return;
  const fx = newEffects();
  ctx.db.transaction(() => {
    for (const row of rows) expire(ctx, row, fx);
  });
  publish(ctx, fx);
}
