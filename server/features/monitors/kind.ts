import type { AppContext } from '../../context';
import type { RouteTable } from '../../http/routes';

/**
 * One monitor kind (`monitor`, `http-monitor`, `content-monitor`, `port-monitor`, `workflow-monitor`; later
 * `browser-workflow`) as one module: its settings schema, its check and its details. The engine
 * (engine.ts) owns everything else — ids, scheduling, timeouts, retries, states, messages, history,
 * routes — and never asks which kind it runs: no `if (kind === …)` outside a kind's own module.
 */
export interface MonitorKind<
  S extends object = Record<string, unknown>,
  K extends object = Record<string, unknown>,
> {
  /** The path noun and the `kind` value. */
  readonly kind: string;
  /** Defaults of the common fields that differ per kind (browser: 300 / 60). */
  readonly defaults: { intervalSec: number; timeoutSec: number; timeoutMaxSec: number };
  /**
   * Validates the kind fields of a create (`prev` undefined: required fields enforced, defaults filled)
   * or a partial update (`prev` = stored settings: absent fields keep `prev`, `null` clears, `"********"`
   * in a secret keeps the stored secret, §0.3). Throws `errors.badRequest('<field>: <problem>')`.
   * Unknown fields are ignored (the common fields are the engine's and are not in `body`'s concern).
   */
  parse(body: Record<string, unknown>, prev: S | undefined, ctx: AppContext): S;
  /** The kind fields as answered (secrets as `"********"`), plus read-only kind state (content: lastValue, lastChangedAt). */
  present(settings: S, state: K | null): Record<string, unknown>;
  /** `{target}` of the messages (§2.5): url, `host:port`, first step's URL. */
  target(settings: S): string;
  /** Host names the check contacts (loopback hosts always run; others need the connectivity witness). */
  hosts(settings: S): string[];
  /** Runs one check. Must honour `io.signal` (aborted at timeoutSec) and never throw for a target failure. */
  check(settings: S, state: K | null, io: CheckIo): Promise<CheckOutcome<K>>;
  /**
   * The kind's assisted endpoints (§2.6: `POST /content-monitor/suggest-selector`, `/test-rule`,
   * `/workflow-monitor/build-step`), added to the monitors' route table with full paths. The engine adds
   * the CRUD, pause/resume, `/test` and `check-now` routes of every kind itself.
   */
  routes?(t: RouteTable, ctx: AppContext): void;
  /**
   * On battery (server/lib/power.ts) this kind's checks do not run at all (browser workflows): status
   * `unknown`, no message, no failure counted, checked again at once on mains power. Other kinds' intervals
   * stretch by the battery factor instead.
   */
  readonly pausedOnBattery?: boolean;
  /** A per-user cap of this kind within the monitors' one (§0.7: browser workflows 20): 403 `limit reached`. */
  readonly perUser?: { max: number; things: string };
}

/** A kind of any settings and state types (the registry holds kinds of different types). */
// biome-ignore lint/suspicious/noExplicitAny: kinds differ in their settings and state types
export type AnyMonitorKind = MonitorKind<any, any>;

export interface CheckIo {
  ctx: AppContext;
  /** The monitor's name (titles of kind events: `{name} changed`); the test answer's body name or the kind. */
  name: string;
  /** Aborted when timeoutSec passes or the server stops. */
  signal: AbortSignal;
  timeoutSec: number;
  /** Wall time (ctx.clock) the check started. */
  startedAt: number;
  /**
   * False when BELFRY_BLOCK_PRIVATE_TARGETS is on and the owner is not an administrator: the network layer
   * then refuses loopback/private/link-local addresses (`private address refused`).
   */
  allowPrivate: boolean;
  /** True for checks of `/test` and `check-now` answers (kinds may add detail; nothing else differs). */
  test: boolean;
  /** Whose check this is: the monitor (null for `/test`) and its owner (files a kind keeps, e.g. screenshots). */
  owner?: { userId: number; monitorId: number | null };
}

export interface CheckOutcome<K extends object = Record<string, unknown>> {
  ok: boolean;
  /** The first failure's text (§2.3), absent when ok. */
  error?: string;
  /** The check could not run at all (no Chromium, …): status `unknown`, no message, no failure counted. */
  cannotRun?: boolean;
  responseTimeMs: number | null;
  /** The kind's `details` of the test answer (§2.6). */
  details: Record<string, unknown>;
  /** New kind state to store (content: lastValue, lastChangedAt); absent = unchanged. */
  state?: K;
  /** A kind event besides up/down (content `changed`): title and message per §2.5, sent at `priority`. */
  event?: { event: string; title: string; message: string };
  /** Extra `extras` keys of the down message this check causes (`service::screenshot`, §2.3). */
  extras?: Record<string, unknown>;
}

/** The kinds of one server, keyed by path noun. Registered at feature init, per server (never module-global). */
const perServer = new WeakMap<AppContext, Map<string, AnyMonitorKind>>();

export function registerMonitorKind(ctx: AppContext, k: AnyMonitorKind): void {
  let m = perServer.get(ctx);
  if (!m) {
    m = new Map();
    perServer.set(ctx, m);
  }
  if (m.has(k.kind)) throw new Error(`monitor kind ${k.kind} is registered twice`);
  m.set(k.kind, k);
}

export function monitorKind(ctx: AppContext, kind: string): AnyMonitorKind | undefined {
  return perServer.get(ctx)?.get(kind);
}

export function monitorKinds(ctx: AppContext): AnyMonitorKind[] {
  return [...(perServer.get(ctx)?.values() ?? [])];
}

/** What §0.3 prints for a secret, and what a client sends back to keep the stored value. */
export const SECRET_MASK = '********';

/**
 * The machine's view of the network, per server. Production leaves both unset (system DNS, the witness's
 * own probes); tests set them through `t.server.ctx` so a non-loopback name can point at a loopback fake
 * and "the laptop lost Wi-Fi" can be simulated without sending traffic anywhere else.
 */
export interface MonitorNet {
  /** Host name → IP literal, consulted before DNS (tests: `monitored.test` → `127.0.0.1`). */
  hosts?: Map<string, string>;
  /** Replaces the connectivity witness's probes: resolves true when the machine is online. */
  online?: () => Promise<boolean>;
}

const nets = new WeakMap<AppContext, MonitorNet>();

export function monitorNet(ctx: AppContext): MonitorNet {
  let n = nets.get(ctx);
  if (!n) {
    n = {};
    nets.set(ctx, n);
  }
  return n;
}

/**
 * A target on this machine: `localhost` (and `*.localhost`), 127.0.0.0/8, ::1. Such checks always run;
 * checks of other hosts are judged down only while the connectivity witness says the machine is online.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(h) || h === '::1';
}
