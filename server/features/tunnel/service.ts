import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { ApiError, errors } from '../../http/errors';
import type { DueSource } from '../../jobs/due';
import { rfc3339 } from '../../lib/clock';
import { seal, unseal } from '../../lib/seal';
import { isRestricted } from '../channels/access';
import { ensureSystemChannel } from '../channels/service';
import { sendMessages } from '../messages/service';
import type { RunningTunnel, TunnelProviderName } from './provider';
import {
  type AnyTunnelProvider,
  builtInProviders,
  PROVIDER_NAMES,
  type ProviderChoice,
} from './providers/index';
import { scrubSecrets } from './providers/settings';
import { adminsToTell, findTunnel, saveTunnel } from './store';

/**
 * The tunnel (docs/api.md "Public listener and tunnel", docs/public-access.md): the stored choice of
 * provider and its settings, the one running tunnel, its status, the reachability check and the restart
 * policy. One per server, kept beside its context.
 */

export type TunnelStatus = 'off' | 'starting' | 'up' | 'error';

export interface LastCheck {
  at: string;
  ok: boolean;
  /** The HTTP status of `GET {publicUrl}/health`, or null when nothing answered. */
  status: number | null;
  latencyMs: number | null;
  error?: string;
}

/** Every provider's stored settings object, by provider name. */
export type StoredSettings = Partial<Record<TunnelProviderName, Record<string, unknown>>>;

export interface TunnelDeps {
  providers: Map<TunnelProviderName, AnyTunnelProvider>;
  fetch: typeof fetch;
  /**
   * The URL the reachability check asks for `{publicUrl}/health` (default: the public URL itself). The
   * seam for tests, whose fake providers report a URL on the internet that the test maps to a loopback
   * listener.
   */
  resolveCheckUrl: (publicUrl: string) => string;
  checkTimeoutMs: number;
}

/** How often a tunnel that is up is checked (§13). */
export const CHECK_EVERY_MS = 5 * 60_000;
/** Restart after a failure: 5 s, doubling, at most 5 min, for as long as the tunnel is configured. */
export const RETRY_FIRST_MS = 5_000;
export const RETRY_MAX_MS = 5 * 60_000;
const SEAL_PURPOSE = 'tunnel-settings';
export const MASK = '********';
/** Priority of the "public access is down" notice (high: webhooks and pings from outside are failing). */
const DOWN_PRIORITY = 8;
const BACK_PRIORITY = 4;
export const TUNNEL_EXTRA = 'service::tunnel';

export class TunnelService {
  status: TunnelStatus = 'off';
  publicUrl: string | null = null;
  lastCheck: LastCheck | null = null;
  error: string | null = null;
  readonly deps: TunnelDeps;
  /** Bumped by every (re)configuration and stop: work of an older generation is dropped. */
  private gen = 0;
  private abort: AbortController | null = null;
  private running: RunningTunnel | null = null;
  /** Consecutive failures since the tunnel was last up or configured (the backoff's exponent). */
  private failures = 0;
  private retryAt: number | null = null;
  private nextCheckAt: number | null = null;
  /** The administrators were told the tunnel is down (and are told once when it is back). */
  private toldDown = false;
  private readonly work = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(private readonly ctx: AppContext) {
    this.deps = {
      providers: builtInProviders(),
      fetch: (...a) => fetch(...a),
      resolveCheckUrl: (u) => u,
      checkTimeoutMs: 10_000,
    };
  }

  /** The stored provider choice and every provider's settings (secrets in clear). */
  stored(): { provider: ProviderChoice; settings: StoredSettings; configuredBy: number | null } {
    const row = findTunnel(this.ctx.db);
    if (!row) return { provider: 'none', settings: {}, configuredBy: null };
    let settings: StoredSettings = {};
    try {
      settings = JSON.parse(unseal(this.ctx.secret, SEAL_PURPOSE, row.settings)) as StoredSettings;
    } catch (err) {
      this.ctx.log.error('tunnel settings cannot be opened (another secret.key?)', { err });
    }
    return { provider: row.provider as ProviderChoice, settings, configuredBy: row.configured_by };
  }

  /** At server start: a configured tunnel starts once the due timer runs (after the server listens). */
  resume(): void {
    if (this.stored().provider === 'none') return;
    this.status = 'starting';
    this.retryAt = this.ctx.clock.now();
  }

  /**
   * PUT /tunnel: validates and saves the body, stops the old tunnel, starts the new one; answers
   * `answer()` taken as the start begins (`starting`), whatever the start does next.
   */
  async configure<T>(p: Principal, body: unknown, answer: () => T): Promise<T> {
    const next = this.merge(body);
    this.ctx.db.transaction(() =>
      saveTunnel(this.ctx.db, {
        provider: next.provider,
        settings: seal(this.ctx.secret, SEAL_PURPOSE, JSON.stringify(next.settings)),
        configuredBy: p.userId,
        now: this.ctx.clock.now(),
      }),
    );
    await this.halt();
    this.lastCheck = null;
    this.failures = 0;
    this.toldDown = false;
    if (next.provider === 'none') {
      this.changed();
      return answer();
    }
    // The answer names the target: the public listener listens before it goes out (start() reports a failure).
    await this.ctx.publicSurface.ensure().catch(() => undefined);
    this.track(this.start());
    return answer();
  }

  /**
   * The stored record changed by a PUT body (§0.1 partial update: an absent field is unchanged, `null`
   * clears a provider's settings, a present object replaces them; `"********"` keeps a stored secret).
   */
  private merge(body: unknown): { provider: ProviderChoice; settings: StoredSettings } {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw errors.badRequest('body: must be an object');
    const b = body as Record<string, unknown>;
    const old = this.stored();
    let provider = old.provider;
    if (b.provider !== undefined) {
      if (typeof b.provider !== 'string' || !(PROVIDER_NAMES as readonly string[]).includes(b.provider))
        throw errors.badRequest(`provider: must be one of ${PROVIDER_NAMES.join(', ')}`);
      provider = b.provider as ProviderChoice;
    }
    const settings: StoredSettings = { ...old.settings };
    for (const name of PROVIDER_NAMES) {
      if (name === 'none' || b[name] === undefined) continue;
      if (b[name] === null) {
        delete settings[name];
        continue;
      }
      const impl = this.provider(name, name);
      if (typeof b[name] !== 'object' || Array.isArray(b[name]))
        throw errors.badRequest(`${name}: must be an object`);
      const sent = { ...(b[name] as Record<string, unknown>) };
      // A masked secret sent back keeps the stored value; with none stored it is as if absent.
      for (const f of impl.secretFields)
        if (sent[f] === MASK) {
          const kept = old.settings[name]?.[f];
          if (kept === undefined) delete sent[f];
          else sent[f] = kept;
        }
      settings[name] = clean(impl.parse(sent));
    }
    if (provider !== 'none') {
      const impl = this.provider(provider, 'provider');
      // The chosen provider's settings must be complete (`ssh.host: required` for none stored yet).
      settings[provider] = clean(impl.parse(settings[provider] ?? {}));
    }
    return { provider, settings };
  }

  private provider(name: TunnelProviderName, field: string): AnyTunnelProvider {
    const impl = this.deps.providers.get(name);
    if (!impl) throw errors.badRequest(`${field}: ${name} is not available in this build`);
    return impl;
  }

  /** Starts the stored tunnel (a generation of its own); its outcome sets the status. */
  private async start(): Promise<void> {
    const gen = ++this.gen;
    const { provider, settings } = this.stored();
    if (provider === 'none') return;
    this.status = 'starting';
    this.error = null;
    this.setUrl(null);
    this.retryAt = null;
    this.changed();
    const impl = this.deps.providers.get(provider);
    const config = settings[provider] ?? {};
    const secrets = impl ? impl.secretFields.map((f) => config[f]).filter((v) => typeof v === 'string') : [];
    const abort = new AbortController();
    this.abort = abort;
    try {
      if (!impl) throw new Error(`${provider} is not available in this build`);
      const target = await this.ctx.publicSurface.ensure();
      if (gen !== this.gen) return;
      const tunnel = await impl.start(impl.parse(config), target, abort.signal);
      if (gen !== this.gen || this.stopped) {
        await tunnel.stop();
        return;
      }
      this.running = tunnel;
      tunnel.onExit((reason) => {
        if (this.running !== tunnel) return;
        this.running = null;
        this.down(scrubSecrets(reason, secrets));
      });
      this.up(tunnel.publicUrl);
    } catch (err) {
      if (gen !== this.gen) return;
      const text = err instanceof ApiError ? err.description : (err as Error).message || String(err);
      this.down(scrubSecrets(text, secrets));
    } finally {
      if (this.abort === abort) this.abort = null;
    }
  }

  private up(url: string): void {
    const wasDown = this.toldDown;
    this.status = 'up';
    this.error = null;
    this.failures = 0;
    this.toldDown = false;
    this.setUrl(url.replace(/\/+$/, ''));
    // Checked at once, then every 5 minutes.
    this.nextCheckAt = this.ctx.clock.now();
    this.changed();
    if (wasDown)
      this.tell(
        'Public access is back',
        `The ${this.stored().provider} tunnel is up again: public URLs use ${this.publicUrl} once more.`,
        BACK_PRIORITY,
        'up',
      );
  }

  /** The tunnel ended or could not start: `error`, the URL falls back, a restart is planned, admins hear once. */
  private down(reason: string): void {
    this.status = 'error';
    this.error = reason;
    this.setUrl(null);
    this.nextCheckAt = null;
    this.failures++;
    const delay = Math.min(RETRY_FIRST_MS * 2 ** (this.failures - 1), RETRY_MAX_MS);
    this.retryAt = this.ctx.clock.now() + delay;
    this.changed();
    if (!this.toldDown) {
      this.toldDown = true;
      this.tell(
        'Public access is down',
        `The ${this.stored().provider} tunnel stopped: ${reason}. Public URLs (webhooks, pings, status pages) ` +
          `fall back to ${this.ctx.publicUrl()}, which the internet cannot reach. Belfry retries on its own ` +
          `(next in ${Math.round(delay / 1000)} s, then less often); Settings → Public access shows the state.`,
        DOWN_PRIORITY,
        'down',
      );
    }
  }

  /** A notice in the internal channel of the administrator(s), which the desktop tray shows. */
  private tell(title: string, message: string, priority: number, event: 'down' | 'up'): void {
    try {
      for (const userId of adminsToTell(this.ctx.db, this.stored().configuredBy)) {
        const channel = ensureSystemChannel(this.ctx, userId);
        sendMessages(
          this.ctx,
          channel.id,
          'Belfry',
          [
            {
              title,
              message,
              priority,
              extras: { [TUNNEL_EXTRA]: { event, provider: this.stored().provider, error: this.error } },
            },
          ],
          { system: true },
        );
      }
    } catch (err) {
      this.ctx.log.error('could not post the tunnel notice', { err });
    }
  }

  /** POST /tunnel/check and the 5-minute check: `GET {publicUrl}/health`, ours when X-Belfry-Instance matches. */
  async check(): Promise<LastCheck> {
    const url = this.publicUrl;
    if (this.status !== 'up' || url === null) throw errors.conflict('the tunnel is not up');
    const gen = this.gen;
    const started = this.ctx.clock.monotonic();
    const at = rfc3339(this.ctx.clock.now());
    let result: LastCheck;
    try {
      const res = await this.deps.fetch(`${this.deps.resolveCheckUrl(url)}/health`, {
        redirect: 'manual',
        signal: AbortSignal.timeout(this.deps.checkTimeoutMs),
        headers: { 'User-Agent': 'Belfry tunnel check' },
      });
      await res.body?.cancel().catch(() => undefined);
      const latencyMs = Math.max(0, Math.round(this.ctx.clock.monotonic() - started));
      const instance = res.headers.get('x-belfry-instance');
      const ok = res.status === 200 && instance === this.ctx.instanceId;
      result = { at, ok, status: res.status, latencyMs };
      if (res.status !== 200) result.error = `${url}/health answered HTTP ${res.status}`;
      else if (!ok) result.error = 'another server answered at this URL (X-Belfry-Instance does not match)';
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      const timedOut = e.name === 'TimeoutError';
      result = {
        at,
        ok: false,
        status: null,
        latencyMs: null,
        error: timedOut
          ? `no answer within ${Math.round(this.deps.checkTimeoutMs / 1000)} s`
          : `${url} cannot be reached: ${e.cause?.code ?? e.message}`,
      };
    }
    if (gen === this.gen && this.status === 'up') {
      this.lastCheck = result;
      this.changed();
    }
    return result;
  }

  /** Stops the tunnel (a new configuration, or the server stopping); status `off`. */
  private async halt(): Promise<void> {
    this.gen++;
    this.abort?.abort();
    this.abort = null;
    const r = this.running;
    this.running = null;
    this.retryAt = null;
    this.nextCheckAt = null;
    this.status = 'off';
    this.error = null;
    this.setUrl(null);
    if (r) await r.stop().catch((err: unknown) => this.ctx.log.warn('stopping the tunnel failed', { err }));
  }

  /** Server stop: the tunnel goes, nothing restarts it. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.halt();
    await Promise.allSettled([...this.work]);
  }

  /** The time passed unwatched (sleep, restart): a failed tunnel retries now, an up one is checked now. */
  woke(): void {
    const now = this.ctx.clock.now();
    if (this.status === 'error' && this.retryAt !== null) this.retryAt = now;
    if (this.status === 'up') this.nextCheckAt = now;
    // No poke here: whoever emits clock:gap re-arms the due timer after every listener (jobs/alive.ts),
    // and a poke inside the listener would arm it before the other families have moved their items.
  }

  /** The due source: restarts and checks fall due here; the work runs in the background (see idle). */
  dueSource(): DueSource {
    return {
      name: 'tunnel',
      nextDueAt: () => {
        const times = [this.retryAt, this.nextCheckAt].filter((t): t is number => t !== null);
        return times.length === 0 ? null : Math.min(...times);
      },
      runDue: (_ctx, now) => {
        if (this.stopped) return;
        if (this.retryAt !== null && this.retryAt <= now) {
          this.retryAt = null;
          this.track(this.start());
        }
        if (this.nextCheckAt !== null && this.nextCheckAt <= now && this.status === 'up') {
          this.nextCheckAt = now + CHECK_EVERY_MS;
          this.track(this.check());
        }
      },
      idle: () => this.idle(),
    };
  }

  /** Resolves when every start and check in progress has finished (tests; Scheduler.tick()). */
  async idle(): Promise<void> {
    while (this.work.size > 0) await Promise.allSettled([...this.work]);
  }

  private track(p: Promise<unknown>): void {
    const q = p.catch((err: unknown) => this.ctx.log.error('tunnel work failed', { err }));
    this.work.add(q);
    void q.finally(() => this.work.delete(q));
    this.ctx.due.poke();
  }

  private setUrl(url: string | null): void {
    this.publicUrl = url;
    this.ctx.publicSurface.tunnelUrl = url;
  }

  private changed(): void {
    this.ctx.bus.emit('tunnel:changed', {
      status: this.status,
      publicUrl: this.publicUrl,
      error: this.error,
    });
    this.ctx.due.poke();
  }

  /** Whether a principal may read (`read`) or change the tunnel (§0.2): administrators, unscoped tokens. */
  static authorize(p: Principal): void {
    if (isRestricted(p)) throw errors.restrictedScope('do this');
    if (!p.admin) throw errors.forbidden('administrator only');
  }
}

/** A provider's parsed settings as stored: without the keys it left undefined. */
function clean(settings: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined));
}

const services = new WeakMap<AppContext, TunnelService>();

/** The tunnel of a server (created at feature init). Tests set `deps` on it before configuring. */
export function tunnelService(ctx: AppContext): TunnelService {
  let s = services.get(ctx);
  if (!s) {
    s = new TunnelService(ctx);
    services.set(ctx, s);
  }
  return s;
}
