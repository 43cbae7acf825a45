import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { API_PREFIXES } from './server/http/static';

/**
 * The web UI: renderer/ → dist/renderer, served by the server at `/` (server/http/static.ts).
 * `npx vite` serves it on its own with the API proxied to a local `npm run serve`.
 */
const API = 'http://127.0.0.1:7878';
/**
 * The server's own list of first path segments that belong to the API (server/http/static.ts), as
 * anchored patterns: `/a` must not swallow the UI's `/admin`.
 */
const apiPaths = API_PREFIXES.filter((p) => p !== 'ws').map((p) => `^/${p}(?:/|$|\\?)`);

export default defineConfig({
  root: 'renderer',
  base: '/',
  plugins: [react()],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    chunkSizeWarningLimit: 1200,
  },
  server: {
    proxy: {
      ...Object.fromEntries(apiPaths.map((p) => [p, { target: API, changeOrigin: false }])),
      '/ws': { target: API.replace('http', 'ws'), ws: true },
    },
  },
});
