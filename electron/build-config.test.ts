import { describe, expect, it } from 'vitest';
import config from '../electron-builder';
import { SERVER_V8_FLAGS } from '../server/lib/v8-flags';

/**
 * The packaging config (electron-builder.ts, read by `npm run dist`). The Electron binary is not
 * downloaded here, so the fuses are asserted on the config electron-builder flips them from; `tsc`
 * checks the option names against the installed electron-builder's types.
 */
describe('electron-builder config', () => {
  it('flips the fuses: no Node mode, no NODE_OPTIONS, no --inspect, only an integrity-checked app.asar', () => {
    expect(config.electronFuses).toEqual({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      enableCookieEncryption: true,
      grantFileProtocolExtraPrivileges: false,
    });
  });

  it('starts the Linux app from its menu entry with the server’s V8 flags', () => {
    expect(config.linux?.executableArgs).toEqual([`--js-flags=${SERVER_V8_FLAGS.join(' ')}`]);
  });

  it('packs the app into app.asar (onlyLoadAppFromAsar needs it) with only the wasm unpacked', () => {
    expect(config.asar ?? true).toBe(true);
    expect(config.asarUnpack).toEqual(['node_modules/sql.js/dist/*.wasm']);
    expect(config.extraMetadata).toEqual({ main: 'dist/electron/main.js' });
  });
});
