import type { Config, Listener } from '@ngrok/ngrok';
import { z } from 'zod';
import type { RunningTunnel, TunnelProvider, TunnelTarget } from '../provider';
import { hostName, optionalText, parseSettings, requiredText, scrubSecrets } from './settings';

/** `ngrok` settings (docs/api.md "Public listener and tunnel"): the account's authtoken, a reserved domain. */
export type NgrokSettings = { authtoken: string; domain?: string | undefined };

const schema = z.object({
  authtoken: requiredText(500),
  domain: optionalText(253).pipe(hostName().optional()),
});

export interface NgrokDeps {
  /**
   * The ngrok service address to dial (default: ngrok's own). Tests point it at a closed loopback port,
   * so nothing leaves the machine and the start fails like it does without internet.
   */
  serverAddr?: string;
  /** The SDK's forward() (tests may stand in for it). */
  forward?: (config: Config) => Promise<Listener>;
}

/** `host:port` of the target as ngrok's `addr` takes it. */
export function targetAddr(target: TunnelTarget): string {
  return target.host.includes(':') ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
}

/**
 * ngrok through its official Node SDK (@ngrok/ngrok: the agent built in, prebuilt per platform, no
 * `ngrok` binary or local API to run). The listener forwards to the public listener; its URL is the
 * public URL. The SDK is loaded on first use only.
 */
export function ngrokProvider(deps: NgrokDeps = {}): TunnelProvider<NgrokSettings> {
  return {
    name: 'ngrok',
    secretFields: ['authtoken'],
    parse: (body) => parseSettings('ngrok', schema, body),
    async start(settings, target, signal) {
      const scrub = (text: string) => scrubSecrets(text, [settings.authtoken]);
      let exited: ((reason: string) => void) | null = null;
      let listener: Listener | null = null;
      let stopped = false;
      const forward = deps.forward ?? (await loadForward());
      try {
        listener = await forward({
          addr: targetAddr(target),
          authtoken: settings.authtoken,
          ...(settings.domain ? { domain: settings.domain } : {}),
          ...(deps.serverAddr ? { server_addr: deps.serverAddr } : {}),
          // 'closed': the session to ngrok was lost (the SDK says 'connected' again if it reconnects by
          // itself; Belfry does not wait for that and restarts the tunnel on its own schedule).
          onStatusChange: (status: string) => {
            if (status !== 'closed' || !listener || stopped) return;
            stopped = true;
            void listener.close().catch(() => undefined);
            exited?.('ngrok: the connection to ngrok was lost');
          },
        });
      } catch (err) {
        throw new Error(`ngrok: ${scrub((err as Error).message || String(err))}`);
      }
      const url = listener.url();
      if (signal.aborted || !url) {
        await listener.close().catch(() => undefined);
        throw new Error(signal.aborted ? 'ngrok: start cancelled' : 'ngrok: no URL for the listener');
      }
      const running: RunningTunnel = {
        publicUrl: url.replace(/\/+$/, ''),
        onExit: (l) => {
          exited = l;
        },
        stop: async () => {
          if (stopped) return;
          stopped = true;
          await listener?.close().catch(() => undefined);
        },
      };
      return running;
    },
  };
}

async function loadForward(): Promise<(config: Config) => Promise<Listener>> {
  const mod = (await import('@ngrok/ngrok')) as typeof import('@ngrok/ngrok') & {
    default?: typeof import('@ngrok/ngrok');
  };
  return mod.forward ?? mod.default!.forward;
}
