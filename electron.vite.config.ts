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
    build: {
      // Served to browsers over HTTP as well as to the desktop window: keep it small.
      minify: true,
      rollupOptions: { input: { index: resolve('src-renderer/index.html') } },
    },
  },
});
