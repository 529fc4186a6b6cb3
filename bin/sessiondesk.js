#!/usr/bin/env node
// Runs the code in this checkout: the build of the command line (out/cli/sessiondesk.mjs,
// made by `npm run build`, which `npm install` runs) while it is newer than every source file,
// else the TypeScript sources themselves through tsx, so an edit takes effect at once. Either
// runs in this very process, not a child, so a signal sent to it reaches the command itself.
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { nodeEnvFor, nodeFlagsFor } from './node-flags.js';

// The search index needs node:sqlite (Node 22.13 and later); say so plainly on an older Node.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  process.stderr.write(
    `Session Desk needs Node.js 22.13 or later (24 recommended); this is Node ${process.version}.\n`,
  );
  process.exit(1);
}

// The server and the long data commands run with V8 flags and an allocator setting of their own
// (node-flags.js). process.execve starts Node again in this very process (the same pid, so a
// signal sent to it still reaches the command), with them; where Node lacks it (before 22.15,
// or on Windows) the command runs without them.
const command = process.argv[2] ?? '';
const flags = nodeFlagsFor(command);
if (
  flags.length > 0 &&
  !flags.every((flag) => process.execArgv.includes(flag)) &&
  typeof process.execve === 'function' &&
  process.platform !== 'win32'
) {
  process.execve(
    process.execPath,
    [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)],
    nodeEnvFor(command, process.env),
  );
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'out', 'cli', 'sessiondesk.mjs');

/** The newest modification time of the files under `dir`, in milliseconds. */
function newest(dir) {
  let time = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    time = Math.max(time, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return time;
}

function builtIsCurrent() {
  let builtAt;
  try {
    builtAt = statSync(built).mtimeMs;
  } catch {
    return false;
  }
  const sources = Math.max(
    newest(join(root, 'src-main')),
    newest(join(root, 'src-shared')),
    statSync(join(root, 'package.json')).mtimeMs,
  );
  return builtAt > sources;
}

if (process.env.SESSIONDESK_FROM_SOURCE !== '1' && builtIsCurrent()) {
  // Without the build's source map: reading it (1.7 MB) cost every start about 100 ms of CPU.
  // Stack traces point into the build then; NODE_OPTIONS=--enable-source-maps points them into
  // the TypeScript sources.
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src-main/cli/main.ts');
}
