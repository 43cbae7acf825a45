import type { AppContext } from '../../context';

/**
 * The assistant's provider client (docs/assistant.md): any OpenAI-compatible server (Ollama, llama.cpp's
 * server, vLLM, a hosted API) at `BELFRY_ASSISTANT_URL`, asked `POST {url}/chat/completions` with the
 * global fetch (undici). Unset: every caller uses its local rules.
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export const PROVIDER_TIMEOUT_MS = 60_000;
export const TEMPERATURE = 0.2;

/** A provider call that failed: network, timeout, non-2xx or an answer without a reply. */
export class ProviderFailure extends Error {}

const timeouts = new WeakMap<AppContext, number>();

/** Tests shorten the 60 s timeout of one server. */
export function setProviderTimeout(ctx: AppContext, ms: number): void {
  timeouts.set(ctx, ms);
}

/** The model name when a provider is configured, else undefined. */
export function providerModel(ctx: AppContext): string | undefined {
  return ctx.config.assistantUrl && ctx.config.assistantModel ? ctx.config.assistantModel : undefined;
}

function endpoint(base: string): string {
  return `${base.replace(/\/+$/, '')}/chat/completions`;
}

/** One completion; the reply text. Throws ProviderFailure with a short detail. */
export async function complete(ctx: AppContext, messages: ChatMessage[]): Promise<string> {
  const model = providerModel(ctx);
  if (!model || !ctx.config.assistantUrl) throw new ProviderFailure('no provider configured');
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (ctx.config.assistantKey) headers.authorization = `Bearer ${ctx.config.assistantKey}`;
  const ms = timeouts.get(ctx) ?? PROVIDER_TIMEOUT_MS;
  let res: Response;
  try {
    res = await fetch(endpoint(ctx.config.assistantUrl), {
      method: 'POST',
      headers,
      body: JSON.stringify({ model, messages, temperature: TEMPERATURE }),
      signal: AbortSignal.timeout(ms),
    });
  } catch (err) {
    const name = (err as { name?: string }).name;
    throw new ProviderFailure(
      name === 'TimeoutError' || name === 'AbortError' ? `no answer within ${within(ms)}` : causeOf(err),
    );
  }
  const text = await res.text().catch(() => '');
  if (!res.ok) throw new ProviderFailure(`HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ProviderFailure('the answer is not JSON');
  }
  const content = (body as { choices?: { message?: { content?: unknown } }[] })?.choices?.[0]?.message
    ?.content;
  if (typeof content !== 'string' || content.trim() === '')
    throw new ProviderFailure('the answer has no choices[0].message.content');
  return content.trim();
}

function within(ms: number): string {
  return ms >= 1_000 ? `${Math.round(ms / 1_000)} s` : `${ms} ms`;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function causeOf(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause;
  return cause ? errorMessage(cause) : errorMessage(err);
}

/** The first JSON object or array in a model's reply (models wrap JSON in ``` fences or prose). */
export function extractJson(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  const candidate = (fenced ? fenced[1]! : text).trim();
  try {
    return JSON.parse(candidate);
  } catch {
    const start = candidate.search(/[[{]/);
    const end = Math.max(candidate.lastIndexOf('}'), candidate.lastIndexOf(']'));
    if (start < 0 || end <= start) return undefined;
    try {
      return JSON.parse(candidate.slice(start, end + 1));
    } catch {
      return undefined;
    }
  }
}

/**
 * The seam other families use (suggest-selector, build-step, from-event, issue analysis): ask for a strict
 * JSON answer and validate it. undefined when no provider is set, the call failed or the answer did not
 * validate, so the caller falls back to its local rules; it never throws.
 */
export async function askJson<T>(
  ctx: AppContext,
  system: string,
  user: string,
  validate: (v: unknown) => T | undefined,
): Promise<T | undefined> {
  if (!providerModel(ctx)) return undefined;
  try {
    const reply = await complete(ctx, [
      { role: 'system', content: `${system}\nAnswer with one JSON value only, no prose.` },
      { role: 'user', content: user },
    ]);
    const parsed = extractJson(reply);
    return parsed === undefined ? undefined : validate(parsed);
  } catch (err) {
    ctx.log.warn('assistant provider failed', { detail: errorMessage(err) });
    return undefined;
  }
}
