#!/usr/bin/env node
// `node bin/run-ts.js file.ts args...`: runs a TypeScript script of this repository.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';

const [script, ...rest] = process.argv.slice(2);
if (!script) {
  console.error('usage: node bin/run-ts.js <script.ts> [args...]');
  process.exit(2);
}
process.argv = [process.argv[0], resolve(script), ...rest];
register();
await import(pathToFileURL(resolve(script)).href);
