import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * The one error type of the API. Rendered by error-handler.ts as
 * `{error, errorCode, errorDescription}` plus `extra` (mfa, reason, methods, ... where the spec says).
 * `errorCode` mirrors the status unless the spec names a code (`device_limit_exceeded`).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly description: string,
    readonly code: number | string = status,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = 'ApiError';
  }
}

export function errorBody(err: ApiError): Record<string, unknown> {
  return {
    error: STATUS_CODES[err.status] ?? 'Error',
    errorCode: err.code,
    errorDescription: err.description,
    ...err.extra,
  };
}

/** The catalog: every error the API produces has a name here, so wording and codes stay stable. */
export const errors = {
  badRequest: (description: string) => new ApiError(400, description),
  malformedJson: () => new ApiError(400, 'malformed JSON body'),
  unauthorized: (
    description = 'you need to provide a valid access token or user credentials to access this api',
  ) => new ApiError(401, description),
  invalidToken: () => new ApiError(401, 'invalid or expired token'),
  wrongTokenKind: () => new ApiError(401, 'this kind of token is not accepted here'),
  basicNotAccepted: () =>
    new ApiError(401, 'username and password are not accepted on this endpoint; use a token'),
  secondFactorRequired: (extra: Record<string, unknown> = {}) =>
    new ApiError(401, 'second factor required', 401, extra),
  invalidCode: () => new ApiError(401, 'invalid code'),
  paymentRequired: (description: string, extra: Record<string, unknown> = {}) =>
    new ApiError(402, description, 402, extra),
  deviceLimitExceeded: () => new ApiError(402, 'device limit of your plan reached', 'device_limit_exceeded'),
  forbidden: (description = 'you are not allowed to access this api') => new ApiError(403, description),
  tokenKindForbidden: () =>
    new ApiError(403, 'this kind of token cannot be used for account-level operations'),
  permissionDenied: (what: string) => new ApiError(403, `token lacks the ${what} permission`),
  notVerified: () => new ApiError(403, 'email address not verified'),
  sudoRequired: (methods: string[]) =>
    new ApiError(403, 'this action needs a recent confirmation (sudo)', 403, {
      reason: 'sudo_required',
      methods,
    }),
  notFound: (what = 'resource') => new ApiError(404, `${what} not found`),
  routeNotFound: (method: string, path: string) => new ApiError(404, `no route for ${method} ${path}`),
  conflict: (description: string) => new ApiError(409, description),
  gone: (description: string) => new ApiError(410, description),
  payloadTooLarge: (limit: number) => new ApiError(413, `request body larger than ${limit} bytes`),
  unsupportedMediaType: (description: string) => new ApiError(415, description),
  tooManyRequests: (description: string, retryAfterSec?: number) =>
    new ApiError(
      429,
      description,
      429,
      {},
      retryAfterSec === undefined ? {} : { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSec))) },
    ),
  dailyQuotaExceeded: () => new ApiError(429, 'daily event quota exceeded'),
  internal: () => new ApiError(500, 'internal server error'),
  notImplemented: (method: string, path: string) =>
    new ApiError(501, `${method} ${path} is part of the API but not built in this version of Belfry`),
  unavailable: (description: string) => new ApiError(503, description),
  // Channels, messages, sharing (issue 4).
  systemChannel: () => new ApiError(403, 'the system channel cannot be changed'),
  ownerOnly: (what: string) => new ApiError(403, `only the channel owner can ${what}`),
  restrictedScope: (what: string) => new ApiError(403, `an API token with a restricted scope cannot ${what}`),
  noAdapterToTest: () => new ApiError(400, 'no enabled adapter to test'),
  // Per-plan caps on configuration objects (issue 21; spec "Errors": 403 plan limit).
  planLimit: (what: string) => new ApiError(403, `plan limit reached: ${what}`),
  // Per-user caps on sources (not plan limits; issue 11).
  userCap: (n: number, things: string) => new ApiError(403, `limit reached: at most ${n} ${things} per user`),
  // Metrics (issue 17, wire rules §8): alerts of one metric source.
  perSourceCap: (n: number, things: string) =>
    new ApiError(403, `limit reached: at most ${n} ${things} per metric source`),
  // Web scripts (issue 18, wire rules §9): a browser origin not in the script's allowedOrigins.
  originNotAllowed: () => new ApiError(403, 'origin not allowed'),
  notASourceMap: (why = '') => new ApiError(400, `file: not a source map${why}`),
  // Email inboxes (issue 18, wire rules §10).
  localPartTaken: () => new ApiError(409, 'localPart: already taken'),
  perInboxCap: (n: number, things: string) =>
    new ApiError(403, `limit reached: at most ${n} ${things} per inbox`),
  // Errors that say what to do (issue 20).
  tokenKindNotAccepted: (given: string, accepted: string) =>
    new ApiError(401, `${given} is not accepted here; this endpoint takes ${accepted}`),
  maskedToken: () =>
    new ApiError(
      401,
      'this is the masked hint of a token (the * stand for hidden characters), not the token; use the full token shown once when it was created, or rotate it to get a new one',
    ),
  malformedAuthorization: () =>
    new ApiError(
      401,
      `malformed Authorization header: use "Bearer <token>" or "Basic <base64 of email:password>"; ${CREDENTIAL_TRANSPORTS}`,
    ),
  unknownCredentialHeader: (name: string) =>
    new ApiError(401, `${name} is not a header Belfry reads credentials from; ${CREDENTIAL_TRANSPORTS}`),
  /** 429 of a rate limit: when to retry, in the description, in `retryAfter` (seconds) and in Retry-After. */
  retryLater: (what: string, retryAfterSec: number) => {
    const sec = Math.max(1, Math.ceil(retryAfterSec));
    return new ApiError(
      429,
      `${what}; try again in ${sec} s`,
      429,
      { retryAfter: sec },
      { 'Retry-After': String(sec) },
    );
  },
  // Verified hosts and port scans (issue 13).
  hostNotVerified: (host: string) =>
    new ApiError(403, `host not verified: verify ${host} first (POST /verified-host/start)`),
  // Interactive questions (issue 16, wire rules §7).
  questionNotPending: () => new ApiError(409, 'question is not pending'),
  questionExpired: () => new ApiError(410, 'question expired'),
  questionCancelled: () => new ApiError(410, 'question cancelled'),
  notAQuestion: () => new ApiError(404, 'message is not a question'),
  questionNeedsSend: () => new ApiError(403, 'answering needs the send permission on this channel'),
  // The signed answer link (§7.4): the texts of its pages.
  answerLinkInvalid: () => new ApiError(400, 'This link is not valid'),
  answerLinkAnswered: (answer: string) => new ApiError(409, `This question was already answered: ${answer}`),
  answerLinkClosed: () => new ApiError(410, 'This question is no longer open'),
} as const;

/** Where a token may be sent (spec "Authentication", point 1), for the 401s that name them. */
const CREDENTIAL_TRANSPORTS =
  'a token may be sent as X-Service-Key, X-Legacy-Key (or X-Gotify-Key), Authorization: Bearer <token>, ?token= or the session cookie';

/**
 * Answers on a raw socket (a refused WebSocket upgrade, a request node's parser rejected) with an ordinary
 * HTTP error response carrying the API's JSON error body, and closes it.
 */
export function refuseOnSocket(socket: Duplex, err: ApiError): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(errorBody(err));
  const lines = [
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...Object.entries(err.headers).map(([k, v]) => `${k}: ${v}`),
  ];
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}
