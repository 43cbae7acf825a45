import type { AppContext } from '../../context';
import type { TunnelProviderName } from './provider';
import { PROVIDER_NAMES } from './providers/index';
import { targetAddr } from './providers/ngrok';
import { MASK, type TunnelService } from './service';

/** §0.3's secret names. */
const SECRET_LIKE = /auth|cookie|token|secret|passw|api-?key|private/i;

/**
 * The tunnel record (docs/api.md "Public listener and tunnel"): `{provider, ssh?, ngrok?, cloudflared?,
 * status, publicUrl, target, lastCheck, error}`; each stored provider object with its secrets masked.
 */
export function presentTunnel(ctx: AppContext, s: TunnelService) {
  const { provider, settings } = s.stored();
  const providers: Partial<Record<TunnelProviderName, Record<string, unknown>>> = {};
  for (const name of PROVIDER_NAMES) {
    if (name === 'none') continue;
    const stored = settings[name];
    if (!stored) continue;
    // A provider missing from this build (settings stored by another): every key-like field is a secret.
    const known = s.deps.providers.get(name)?.secretFields;
    const secret = (k: string) => (known ? known.includes(k) : SECRET_LIKE.test(k));
    providers[name] = Object.fromEntries(
      Object.entries(stored).map(([k, v]) => [k, secret(k) && v !== undefined ? MASK : v]),
    );
  }
  const a = ctx.publicSurface.address();
  return {
    provider,
    ...providers,
    status: s.status,
    publicUrl: s.publicUrl,
    target: a ? targetAddr(a) : null,
    lastCheck: s.lastCheck,
    error: s.error,
  };
}
