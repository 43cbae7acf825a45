import { join } from 'node:path';
import type { Config, ConfigInput } from '../server/config';
import type { BelfryServer, ServerDeps } from '../server/index';
import type { DesktopSettings } from './settings';

export interface ServerFactory {
  createServer(config: Config, deps?: ServerDeps): Promise<BelfryServer>;
  loadConfig(input: { env?: NodeJS.ProcessEnv; overrides?: Partial<ConfigInput> }): Config;
}

export interface HostedServer {
  server: BelfryServer;
  url: string;
  port: number;
  host: string;
}

/** The data dir lives in the app's user-data folder (contract: "the OS app-data folder under Electron"). */
export function desktopDataDir(userData: string): string {
  return join(userData, 'data');
}

/**
 * Starts the server in-process: loopback only, or 0.0.0.0 with LAN access. When the chosen port is
 * taken (another Belfry, another program) it falls back to a free port rather than failing to open.
 */
export async function hostServer(
  f: ServerFactory,
  o: { userData: string; settings: DesktopSettings; env: NodeJS.ProcessEnv; log: (msg: string) => void },
): Promise<HostedServer> {
  const overrides: Partial<ConfigInput> = {
    dataDir: o.env.BELFRY_DATA_DIR || desktopDataDir(o.userData),
    host: o.settings.lanAccess ? '0.0.0.0' : '127.0.0.1',
    port: o.settings.port,
  };
  const start = async (port: number) => {
    const server = await f.createServer(f.loadConfig({ env: o.env, overrides: { ...overrides, port } }));
    try {
      const addr = await server.start();
      return { server, ...addr };
    } catch (err) {
      await server.stop().catch(() => {});
      throw err;
    }
  };
  try {
    return await start(o.settings.port);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    o.log(`port ${o.settings.port} is in use; Belfry picked a free port instead`);
    return await start(0);
  }
}

/** The URL the window loads: always loopback, even when the server also listens on the LAN. */
export function windowUrl(port: number): string {
  return `http://127.0.0.1:${port}`;
}
