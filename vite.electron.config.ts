import { defineConfig } from 'vite';

/**
 * The Electron main process with the server it hosts, bundled into dist/electron/main.js (Node ESM).
 * Dependencies stay external (SSR build) and are shipped in node_modules by electron-builder; the server's
 * extensionless TypeScript imports are resolved here, so no loader is needed at run time.
 */
export default defineConfig({
  build: {
    ssr: 'electron/main.ts',
    outDir: 'dist/electron',
    emptyOutDir: false,
    target: 'node20',
    sourcemap: true,
    rollupOptions: { output: { format: 'es', entryFileNames: 'main.js' } },
  },
  ssr: { target: 'node' },
});
