/**
 * The typed HTTP client of the UI. It talks to the server like any other client: a device token from
 * sign-in sent as a Bearer header (the session cookie also exists, but the WebSocket needs the token).
 * Every non-2xx answer becomes an ApiError with the server's readable description.
 */

const TOKEN_KEY = 'belfry.token';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown> | null,
    message: string,
    /** Seconds until a 429 may be retried (Retry-After, else the body's `retryAfter`); else null. */
    readonly retryAfter: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
  get errorCode(): unknown {
    return this.body?.errorCode;
  }
}

/** A readable sentence for any thrown value; errors are shown, never swallowed. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError && err.retryAfter !== null)
    return `${err.message.replace(/[;,.]?\s*(try again later)?[.\s]*$/i, '')}. You can try again ${retryWhen(err.retryAfter)}.`;
  if (err instanceof ApiError) return err.message;
  if (err instanceof TypeError)
    return 'Cannot reach the Belfry server. Check that it is running and try again.';
  if (err instanceof Error) return err.message;
  return String(err);
}

/** "in 45 seconds (at 09:41)": when a throttled request may be sent again. */
export function retryWhen(seconds: number, now = Date.now()): string {
  const at = new Date(now + seconds * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  if (seconds < 60) return `in ${seconds} second${seconds === 1 ? '' : 's'} (at ${at})`;
  const minutes = Math.ceil(seconds / 60);
  return `in ${minutes} minute${minutes === 1 ? '' : 's'} (at ${at})`;
}

/** Retry-After as seconds (delta or HTTP date), else a `retryAfter` number in the error body. */
function retryAfterOf(res: Response, body: Record<string, unknown> | null): number | null {
  const header = res.headers.get('Retry-After');
  if (header && /^\d+$/.test(header.trim())) return Number(header.trim());
  if (header && !Number.isNaN(Date.parse(header)))
    return Math.max(0, Math.ceil((Date.parse(header) - Date.now()) / 1000));
  const fromBody = body?.retryAfter;
  return typeof fromBody === 'number' && Number.isFinite(fromBody) ? Math.max(0, Math.ceil(fromBody)) : null;
}

type Listener = (token: string | null) => void;
const listeners = new Set<Listener>();

export const session = {
  get token(): string | null {
    try {
      return localStorage.getItem(TOKEN_KEY);
    } catch {
      return null;
    }
  },
  set(token: string | null): void {
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
    for (const l of listeners) l(token);
  },
  subscribe(l: Listener): () => void {
    listeners.add(l);
    return () => listeners.delete(l);
  },
};

/** Asked when the API answers 403 `sudo_required`; resolves true once the user confirmed. */
type SudoPrompt = (methods: string[]) => Promise<boolean>;
let sudoPrompt: SudoPrompt | null = null;
export function setSudoPrompt(p: SudoPrompt | null): void {
  sudoPrompt = p;
}

export interface RequestOptions {
  /** JSON body, or FormData for uploads. */
  body?: unknown;
  /** Basic credentials instead of the session token (sign-in). */
  basic?: { email: string; password: string };
  /** Do not send the session token (public endpoints). */
  anonymous?: boolean;
  /** Do not open the sudo dialog on 403 sudo_required (the sudo call itself). */
  noSudo?: boolean;
}

function basic(email: string, password: string): string {
  const bytes = new TextEncoder().encode(`${email}:${password}`);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return `Basic ${btoa(bin)}`;
}

export async function api<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const token = session.token;
  if (opts.basic) headers.Authorization = basic(opts.basic.email, opts.basic.password);
  else if (token && !opts.anonymous) headers.Authorization = `Bearer ${token}`;
  let body: BodyInit | undefined;
  if (opts.body instanceof FormData) body = opts.body;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['Content-Type'] = 'application/json';
  }
  const res = await fetch(path, { method, headers, body, credentials: 'same-origin' });
  const text = await res.text();
  let parsed: unknown = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  if (res.ok) return parsed as T;
  const b = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null;
  const description =
    (typeof b?.errorDescription === 'string' && b.errorDescription) ||
    (typeof b?.error === 'string' && b.error) ||
    `${res.status} ${res.statusText || 'request failed'}`;
  const err = new ApiError(res.status, b, description, res.status === 429 ? retryAfterOf(res, b) : null);
  if (res.status === 403 && b?.reason === 'sudo_required' && !opts.noSudo && sudoPrompt) {
    const methods = Array.isArray(b.methods) ? (b.methods as string[]) : ['password'];
    if (await sudoPrompt(methods)) return api<T>(method, path, { ...opts, noSudo: true });
  }
  // A token the server no longer accepts (signed out elsewhere, revoked, suspended): back to sign-in.
  if (
    res.status === 401 &&
    !opts.basic &&
    !opts.anonymous &&
    token &&
    description === 'invalid or expired token'
  )
    session.set(null);
  throw err;
}

export const get = <T>(path: string) => api<T>('GET', path);
export const post = <T>(path: string, body?: unknown) => api<T>('POST', path, { body: body ?? {} });
export const put = <T>(path: string, body?: unknown) => api<T>('PUT', path, { body: body ?? {} });
export const del = <T>(path: string) => api<T>('DELETE', path);

export function query(params: Record<string, string | number | boolean | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** A question's record (`GET /ask-question/{id}`); expired or cancelled ones answer 410. */
export const getQuestion = <T>(id: number) => get<T>(`/ask-question/${id}`);
/** Answers a question (`POST /ask-question/{id}/answer`); 400 names the field, 409 when not pending. */
export const answerQuestion = <T>(id: number, answer: unknown) =>
  post<T>(`/ask-question/${id}/answer`, { answer });

/**
 * A binary resource behind the session's auth (a failure screenshot, `GET /browser-shot/{key}`): fetched
 * with the Bearer header, so no token goes into an `<img>` URL. Non-2xx answers throw an ApiError.
 */
export async function getBlob(path: string): Promise<Blob> {
  const token = session.token;
  const res = await fetch(path, {
    headers: token ? { Authorization: `Bearer ${token}` } : {},
    credentials: 'same-origin',
  });
  if (res.ok) return res.blob();
  let body: Record<string, unknown> | null = null;
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    body = null;
  }
  const description =
    (typeof body?.errorDescription === 'string' && body.errorDescription) ||
    `${res.status} ${res.statusText || 'request failed'}`;
  throw new ApiError(res.status, body, description);
}
