import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, type ConfigInput, loadConfig } from '../server/config';
import type { BelfryServer, ServerDeps } from '../server/index';
import { memoryLogger } from '../server/lib/log';
import { desktopDataDir, desktopLogFile, desktopLogger, hostServer, type ServerFactory } from './server-host';
import { DEFAULT_SETTINGS } from './settings';

/** A factory that records what the desktop asks for and never binds a socket. */
function recordingFactory() {
  const made: { config: Config; deps: ServerDeps | undefined }[] = [];
  const factory: ServerFactory = {
    loadConfig: (input: { env?: NodeJS.ProcessEnv; overrides?: Partial<ConfigInput> }) => loadConfig(input),
    createServer: async (config, deps) => {
      made.push({ config, deps });
      return {
        start: async () => ({ url: `http://${config.host}:7878`, port: 7878, host: config.host }),
        stop: async () => {},
      } as unknown as BelfryServer;
    },
  };
  return { factory, made };
}

describe('desktop server host', () => {
  let dir = '';
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the data dir in userData unless BELFRY_DATA_DIR moves it; the log file lives in it', () => {
    expect(desktopDataDir('/u')).toBe(join('/u', 'data'));
    expect(desktopDataDir('/u', { BELFRY_DATA_DIR: '/elsewhere' })).toBe('/elsewhere');
    expect(desktopLogFile('/d')).toBe(join('/d', 'logs', 'belfry.log'));
  });

  it('the desktop logger writes to <dataDir>/logs/belfry.log, mode 0600, at BELFRY_LOG_LEVEL', () => {
    dir = mkdtempSync(join(tmpdir(), 'belfry-desktop-log-'));
    const stderr: string[] = [];
    const info = desktopLogger(dir, {}, (l) => stderr.push(l));
    info.debug('hidden at info');
    info.error('kept', { code: 'E1' });
    const warnOnly = desktopLogger(dir, { BELFRY_LOG_LEVEL: 'warn' }, (l) => stderr.push(l));
    warnOnly.info('hidden at warn');
    warnOnly.warn('shown at warn');
    const file = join(dir, 'logs', 'belfry.log');
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => l.replace(/^\S+ /, ''))).toEqual([
      'ERROR kept {"code":"E1"}',
      'WARN shown at warn',
    ]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(stderr).toEqual(lines); // and to stderr, for a start from a terminal
  });

  it('hands the desktop logger to the server it hosts', async () => {
    dir = mkdtempSync(join(tmpdir(), 'belfry-desktop-host-'));
    const { factory, made } = recordingFactory();
    const serverLog = memoryLogger();
    await hostServer(factory, {
      userData: dir,
      settings: DEFAULT_SETTINGS,
      env: {},
      log: () => {},
      serverLog,
    });
    expect(made).toHaveLength(1);
    expect(made[0]!.deps?.log).toBe(serverLog);
    expect(made[0]!.config).toMatchObject({ host: '127.0.0.1', lan: false, dataDir: join(dir, 'data') });
  });

  it('LAN access is LAN mode: 0.0.0.0 with the plain-HTTP choice made, so the UI warns', async () => {
    dir = mkdtempSync(join(tmpdir(), 'belfry-desktop-host-'));
    const { factory, made } = recordingFactory();
    const settings = { ...DEFAULT_SETTINGS, lanAccess: true };
    const hosted = await hostServer(factory, { userData: dir, settings, env: {}, log: () => {} });
    expect(made[0]!.config).toMatchObject({ host: '0.0.0.0', lan: true });
    expect(hosted.host).toBe('0.0.0.0');
  });
});
