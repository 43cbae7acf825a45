import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The web UI: renderer/ → dist/renderer, served by the server at `/` (server/http/static.ts).
 * `npx vite` serves it on its own with the API proxied to a local `npm run serve`.
 */
const API = 'http://127.0.0.1:7878';
const apiPaths = [
  '/application',
  '/message',
  '/client',
  '/current',
  '/auth',
  '/user',
  '/api-token',
  '/token',
  '/share',
  '/webhook-config',
  '/device',
  '/admin',
  '/image',
  '/pairing',
  '/health',
  '/version',
  '/serverinfo',
  '/stream',
  '/heartbeat',
  '/monitor-history',
];

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
