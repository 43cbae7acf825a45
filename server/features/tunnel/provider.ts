/**
 * The seam between the tunnel family's record, routes and reachability check (feature.ts, routes.ts,
 * service.ts) and the programs that actually carry traffic from the internet to the public listener
 * (providers/ssh.ts, providers/ngrok.ts, providers/cloudflared.ts). Wire: docs/api.md "Public listener
 * and tunnel".
 *
 * A provider never sees the API listener: `target` is always the public listener (BELFRY_PUBLIC_LISTEN,
 * or one started on 127.0.0.1:0 for the tunnel), which serves the public routes only.
 */

export type TunnelProviderName = 'ssh' | 'ngrok' | 'cloudflared';

/** Where the tunnel forwards to: the public listener. */
export interface TunnelTarget {
  host: string;
  port: number;
}

/** A started tunnel. */
export interface RunningTunnel {
  /** The URL the internet reaches Belfry's public routes at (no trailing slash). */
  readonly publicUrl: string;
  /**
   * Called once when the tunnel ends without stop() having been called (the ssh connection dropped,
   * the child process exited, the ngrok session closed), with a short reason for the record's `error`.
   */
  onExit(listener: (reason: string) => void): void;
  /** Ends the tunnel; resolves when its connection or process is gone. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * One provider. `C` is its stored settings object (the `ssh`, `ngrok` or `cloudflared` field of the
 * record), secrets included; the routes mask them on output (§0.3 `"********"`).
 */
export interface TunnelProvider<C extends object> {
  readonly name: TunnelProviderName;
  /** Field names of C that are secrets: output as "********", "********" sent back keeps the stored value. */
  readonly secretFields: readonly (keyof C & string)[];
  /**
   * Validates a PUT body's provider object (secrets already merged back from `stored`). Throws
   * `ApiError(400, '<provider>.<field>: <problem>')`, e.g. `ssh.host: required`.
   */
  parse(body: unknown): C;
  /**
   * Starts the tunnel. Rejects with an Error whose message is shown as the record's `error` (e.g.
   * `cloudflared not found in PATH`, `ssh: authentication failed`); must not leak secrets in it.
   * `signal` aborts a start that is still in progress (a PUT replaced it, or the server stops).
   */
  start(settings: C, target: TunnelTarget, signal: AbortSignal): Promise<RunningTunnel>;
}
