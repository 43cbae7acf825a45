import type { TunnelProvider, TunnelProviderName } from '../provider';
import { cloudflaredProvider } from './cloudflared';
import { ngrokProvider } from './ngrok';
import { createSshProvider } from './ssh';

/** A provider of any settings type (the registry's view; each provider's own type is in its file). */
export type AnyTunnelProvider = TunnelProvider<Record<string, unknown>>;

/** Every provider name the wire knows (§13), `none` included; a known name may be missing from a build. */
export const PROVIDER_NAMES = ['none', 'ssh', 'ngrok', 'cloudflared'] as const;
export type ProviderChoice = 'none' | TunnelProviderName;

/**
 * The providers this build has, by name. A provider is one line here: a name of PROVIDER_NAMES without
 * an entry answers `PUT /tunnel` with 400 `provider: <name> is not available in this build`.
 */
export function builtInProviders(): Map<TunnelProviderName, AnyTunnelProvider> {
  const list = [entry(createSshProvider()), entry(ngrokProvider()), entry(cloudflaredProvider())];
  return new Map(list.map((p) => [p.name, p]));
}

/** A provider as the registry holds it: its settings are only ever what its own parse() returned. */
export function entry<C extends object>(p: TunnelProvider<C>): AnyTunnelProvider {
  return p as unknown as AnyTunnelProvider;
}
