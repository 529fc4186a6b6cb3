// Bundles the command line (src-main/cli/main.ts) into out/cli/sessiondesk.mjs, which
// bin/sessiondesk.js runs while it is newer than the sources: plain JavaScript starts in
// about half the time of compiling TypeScript on every start. Packages stay in node_modules.
import { build } from 'esbuild';

await build({
  entryPoints: ['src-main/cli/main.ts'],
  outfile: 'out/cli/sessiondesk.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22.13',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
});
