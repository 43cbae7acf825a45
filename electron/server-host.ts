import { join } from 'node:path';
import type { Config, ConfigInput } from '../server/config';
import type { BelfryServer, ServerDeps } from '../server/index';
import {
  createLogger,
  fileSink,
  type Logger,
  type LogLevel,
  type LogSink,
  stderrSink,
  teeSink,
} from '../server/lib/log';
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

/**
 * The data dir lives in the app's user-data folder (contract: "the OS app-data folder under Electron");
 * BELFRY_DATA_DIR moves it.
 */
export function desktopDataDir(userData: string, env: NodeJS.ProcessEnv = {}): string {
  return env.BELFRY_DATA_DIR || join(userData, 'data');
}

/** Where the desktop app logs: nobody reads the stderr of an app started from a menu or at login. */
export function desktopLogFile(dataDir: string): string {
  return join(dataDir, 'logs', 'belfry.log');
}

const LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error'] satisfies LogLevel[];

/**
 * The desktop app's logger: every line to `<dataDir>/logs/belfry.log` (0600, 2 MiB and one rotated
 * file, server/lib/log.ts) and to stderr (seen when started from a terminal). BELFRY_LOG_LEVEL sets the
 * level as for the server; an unknown value keeps `info` (the server's own config check reports it).
 */
export function desktopLogger(dataDir: string, env: NodeJS.ProcessEnv, alsoTo: LogSink = stderrSink): Logger {
  const wanted = env.BELFRY_LOG_LEVEL ?? '';
  const level = (LEVELS.includes(wanted) ? wanted : 'info') as LogLevel;
  return createLogger(level, teeSink(fileSink(desktopLogFile(dataDir)), alsoTo));
}

/**
 * Starts the server in-process: loopback only, or 0.0.0.0 in LAN mode with LAN access. When the chosen port is
 * taken (another Belfry, another program) it falls back to a free port rather than failing to open.
 */
export async function hostServer(
  f: ServerFactory,
  o: {
    userData: string;
    settings: DesktopSettings;
    env: NodeJS.ProcessEnv;
    log: (msg: string) => void;
    /** The server's logger (the desktop log file); the server's own stderr logger without it. */
    serverLog?: Logger;
  },
): Promise<HostedServer> {
  const overrides: Partial<ConfigInput> = {
    dataDir: desktopDataDir(o.userData, o.env),
    host: o.settings.lanAccess ? '0.0.0.0' : '127.0.0.1',
    // The LAN access setting is the explicit choice of plain HTTP on the network (server/config.ts).
    lan: o.settings.lanAccess,
    port: o.settings.port,
  };
  const start = async (port: number) => {
    const config = f.loadConfig({ env: o.env, overrides: { ...overrides, port } });
    const server = await f.createServer(config, o.serverLog ? { log: o.serverLog } : {});
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
