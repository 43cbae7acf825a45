/** The tunnel record of `GET/PUT /tunnel` (docs/api.md "Public listener and tunnel"). */
export type TunnelProviderName = 'none' | 'ssh' | 'ngrok' | 'cloudflared';
export type TunnelStatus = 'off' | 'starting' | 'up' | 'error';

export interface SshTunnelSettings {
  host: string;
  port: number;
  user: string;
  /** Always `"********"` in answers; sent back as such it keeps the stored key. */
  privateKey: string;
  remotePort: number;
  publicUrl: string;
  bindAddress?: string;
  hostFingerprint?: string | null;
}

export interface NgrokTunnelSettings {
  authtoken: string;
  domain?: string | null;
}

export interface CloudflaredTunnelSettings {
  token?: string | null;
  hostname?: string | null;
}

export interface TunnelCheck {
  at: string;
  ok: boolean;
  status: number | null;
  latencyMs: number | null;
  error?: string;
}

export interface TunnelRecord {
  provider: TunnelProviderName;
  ssh?: SshTunnelSettings;
  ngrok?: NgrokTunnelSettings;
  cloudflared?: CloudflaredTunnelSettings;
  status: TunnelStatus;
  publicUrl: string | null;
  /** The public listener the tunnel forwards to (`host:port`, or its parts). */
  target: string | { host: string; port: number } | null;
  lastCheck: TunnelCheck | null;
  error: string | null;
}

export const SECRET_MASK = '********';
