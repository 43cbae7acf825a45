import type { Config } from './config';
import type { Db } from './db/database';
import type { RequestActivity } from './http/activity';
import type { Principal, PrincipalKind } from './http/auth';
import type { DueTimer } from './jobs/due';
import type { EventBus } from './lib/bus';
import type { Clock } from './lib/clock';
import type { Logger } from './lib/log';

/** What the HTTP layer needs of the durable store (server/db/store.ts implements it). */
export interface StoreHandle {
  readonly db: Db;
  sync(): Promise<void>;
  hasUnsynced(): boolean;
  healthy(): boolean;
  check(): void;
  maybeSnapshot(): Promise<boolean>;
  close(): Promise<void>;
}

/** Turns a token (already split off its transport) into a principal, or null when it is not valid. */
export type TokenResolver = (token: string, digest: string, meta: RequestMeta) => Principal | null;
export type BasicResolver = (email: string, password: string, meta: RequestMeta) => Promise<Principal>;
/** Extra checks a family adds to every authenticated request (sudo windows, 2FA on Basic, ...). */
export interface RequestMeta {
  ip: string;
  userAgent: string;
  path: string;
}

export interface AuthRegistry {
  tokens: Map<string, TokenResolver>;
  basic: BasicResolver | null;
  /** Throws sudoRequired when the principal has no open sudo window (accounts family). */
  sudo: ((principal: Principal) => void) | null;
  kinds?: PrincipalKind[];
}

/** Everything a family's routes and services get. Built once per server in index.ts. */
export interface AppContext {
  readonly config: Config;
  readonly clock: Clock;
  readonly log: Logger;
  readonly store: StoreHandle;
  readonly db: Db;
  readonly bus: EventBus;
  /** The one timer for per-item due times (server/jobs/due.ts): families register a DueSource at init. */
  readonly due: DueTimer;
  readonly auth: AuthRegistry;
  /** When HTTP requests last came and went (background upkeep waits for quiet moments). */
  readonly activity: RequestActivity;
  /** Per-install secret (data dir) for HMAC-signed links. */
  readonly secret: Buffer;
  /**
   * Base of links in emails, webhook and ping URLs: BELFRY_PUBLIC_URL, else the tunnel's URL while it is
   * up, else http://HOST:PORT (docs/public-access.md). Known once the server listens. `{tunnel: false}`
   * leaves the tunnel out (the mail domain of inboxes: mail never goes through the tunnel).
   */
  publicUrl(opts?: { tunnel?: boolean }): string;
  /** Random per data dir (`instance.id`): `/health` names it in X-Belfry-Instance on both listeners. */
  readonly instanceId: string;
  /** The public listener (server/http/public-listener.ts) and the tunnel URL it is reached at. */
  readonly publicSurface: PublicSurface;
}

/** Where the public listener listens, and the tunnel's URL (set by the tunnel family while it is up). */
export interface PublicSurface {
  /** The public listener's address, or null while it does not listen. */
  address(): { host: string; port: number } | null;
  /** Starts the public listener if needed (127.0.0.1:0 when BELFRY_PUBLIC_LISTEN is unset); its address. */
  ensure(): Promise<{ host: string; port: number }>;
  /** The tunnel's public URL while its status is `up`, else null (server/features/tunnel/service.ts). */
  tunnelUrl: string | null;
}
