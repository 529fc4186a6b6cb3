#!/usr/bin/env node
// Runs the TypeScript sources directly (through tsx), so the command works right after
// `npm install` and always runs the code in this checkout.
import { register } from 'tsx/esm/api';

register();
await import('../src-main/cli/main.ts');
