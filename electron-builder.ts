import type { Configuration } from 'electron-builder';

/**
 * Packaging of the desktop app: `npm run dist` (= npm run build, then electron-builder for this OS).
 * Icons are drawn by build/make-icons.mjs and committed. The Electron binary is downloaded by
 * electron-builder at packaging time, so this does not run in CI (no download there).
 *
 * A TypeScript file rather than YAML: the option names are checked against the installed
 * electron-builder by `tsc`, and electron/build-config.test.ts asserts the fuses without a YAML parser.
 */
const config: Configuration = {
  appId: 'app.belfry.desktop',
  productName: 'Belfry',
  copyright: 'Belfry contributors',
  directories: { output: 'release', buildResources: 'build' },
  files: [
    'package.json',
    'dist/electron/**',
    'dist/renderer/**',
    'build/icons/**',
    'build/tray*.png',
    'build/trayTemplate*.png',
    '!**/*.map',
  ],
  extraMetadata: { main: 'dist/electron/main.js' },
  // sql.js loads its .wasm from node_modules at run time: keep it outside the asar archive.
  asarUnpack: ['node_modules/sql.js/dist/*.wasm'],
  // Electron's fuses, flipped in the packaged binary (docs/operations.md, "Desktop app"): the shipped
  // app cannot be turned into a Node runtime or a debug target, nor made to run code other than its
  // own app.asar.
  electronFuses: {
    // ELECTRON_RUN_AS_NODE=1 would make the signed binary a plain `node` for any script.
    runAsNode: false,
    // NODE_OPTIONS / NODE_EXTRA_CA_CERTS: --require a script, or trust another CA, from the environment.
    enableNodeOptionsEnvironmentVariable: false,
    // --inspect and friends (and SIGUSR1): a debugger attached to the process holding the tokens.
    enableNodeCliInspectArguments: false,
    // app.asar is checked against the hash recorded at build time (macOS and Windows).
    enableEmbeddedAsarIntegrityValidation: true,
    // Only app.asar is loaded: no `app/` folder or default_app.asar beside it.
    onlyLoadAppFromAsar: true,
    // The cookie store (the session cookie) encrypted with the OS keychain, as Chrome does.
    enableCookieEncryption: true,
    // The window loads http://127.0.0.1, never file://: no extra privileges for file pages.
    grantFileProtocolExtraPrivileges: false,
  },
  linux: {
    target: ['AppImage', 'deb'],
    category: 'Utility',
    icon: 'build/icons',
    synopsis: 'A personal notification server that lives on your laptop',
    // The server's V8 flags (server/lib/v8-flags.ts; build-config.test.ts holds this to that list) on the
    // menu entry's command line, so a start from the menu needs no relaunch (electron/v8-relaunch.ts).
    executableArgs: ['--js-flags=--max-semi-space-size=16'],
  },
  deb: { depends: ['libnotify4', 'libsecret-1-0'] },
  mac: {
    target: ['dmg'],
    category: 'public.app-category.productivity',
    icon: 'build/icon.icns',
    hardenedRuntime: true,
  },
  dmg: { title: 'Belfry' },
  win: { target: ['nsis'], icon: 'build/icon.ico' },
  nsis: {
    oneClick: false,
    perMachine: false,
    allowToChangeInstallationDirectory: true,
    createDesktopShortcut: true,
  },
};

export default config;
