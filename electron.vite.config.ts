import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig, externalizeDepsPlugin } from 'electron-vite';
import type { Plugin } from 'vite';

/**
 * electron-vite builds the renderer with relative asset paths (for file://). Ours is always
 * served over HTTP by the server, where a deep link such as /sessions/ses_1 needs /assets/….
 */
function absoluteAssetPaths(): Plugin {
  return {
    name: 'absolute-asset-paths',
    enforce: 'post',
    transformIndexHtml: (html) => html.replaceAll('"./assets/', '"/assets/'),
  };
}

const apiPort = process.env.SESSIONDESK_PORT || '4319';

export default defineConfig({
  main: {
    plugins: [externalizeDepsPlugin()],
    build: { rollupOptions: { input: { main: resolve('src-main/electron/main.ts') } } },
  },
  preload: {
    plugins: [externalizeDepsPlugin()],
    build: {
      rollupOptions: {
        input: { preload: resolve('src-main/electron/preload.ts') },
        // A sandboxed preload must be CommonJS.
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: 'src-renderer',
    plugins: [react(), absoluteAssetPaths()],
    server: {
      proxy: {
        // npm run dev: the window loads this dev server; the API stays on the app's own server.
        '/api': {
          target: `http://127.0.0.1:${apiPort}`,
          changeOrigin: true,
          configure: (proxy) => {
            // The server takes cookie writes only from its own origin: present the dashboard's
            // own requests (and only those) as coming from it.
            proxy.on('proxyReq', (proxyReq, req) => {
              if (req.headers.origin === `http://${req.headers.host}`) {
                proxyReq.setHeader('origin', `http://127.0.0.1:${apiPort}`);
              }
            });
          },
        },
      },
    },
    build: {
      // Served to browsers over HTTP as well as to the desktop window: keep it small.
      minify: true,
      rollupOptions: { input: { index: resolve('src-renderer/index.html') } },
    },
  },
});
