import type { ParseArgsConfig } from 'node:util';
import { DEFAULT_PORT } from '../../src-shared/constants.js';
import type { Command } from './usage.js';

/**
 * Each command's options, the one table its parser reads (`parse` in command-line.ts): what is
 * here is all a command accepts. Every command takes --data-dir and --help besides. The help
 * (usage.ts) and the command-line reference name each of them; test/cli/help-and-reference.test.ts
 * holds the three together.
 */

export type Options = NonNullable<ParseArgsConfig['options']>;

/** The options every command takes. */
export const COMMON_OPTIONS = {
  'data-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

/**
 * A team server's PostgreSQL (else SESSIONDESK_DATABASE_URL): taken by the commands that work on
 * it, and by those that must refuse it (exit 2) rather than act on the data directory instead.
 */
const database = { type: 'string' } as const;
const json = { type: 'boolean' } as const;
const text = { type: 'string' } as const;

export const COMMAND_OPTIONS = {
  serve: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: String(DEFAULT_PORT) },
    'log-level': { type: 'string', default: 'info' },
    'log-format': { type: 'string', default: 'pretty' },
    'sandbox-dir': text,
    'max-runs': text,
    demo: { type: 'boolean' },
    database,
    'public-url': text,
    'trust-proxy': text,
    // Sign-in through the team's identity provider (identity-options.ts reads them).
    'oidc-issuer': text,
    'oidc-client-id': text,
    'oidc-allowed-domains': text,
    'password-sign-in': text,
  },
  'user create': { database, email: text, name: text, password: text, 'image-url': text },
  'user list': { database, json },
  'user set-password': { database, email: text, password: text },
  'workspace create': { database, name: text, owner: text, agent: text, 'acp-agent': text },
  'workspace list': { database, json },
  'member add': { database, workspace: text, email: text },
  'member remove': { database, workspace: text, email: text },
  'key create': {
    database,
    workspace: text,
    name: text,
    'can-approve': { type: 'boolean' },
    'push-only': { type: 'boolean' },
  },
  'key list': { database, workspace: text, json },
  'key revoke': { database, workspace: text, id: text },
  'agent-command set': { database },
  'agent-command list': { database, json },
  'agent-command remove': { database },
  'agent check': { database, workspace: text, json },
  'acp-agent set': { database },
  'acp-agent list': { database, json },
  'acp-agent unset': { database },
  export: { database, workspace: text, format: { type: 'string', default: 'ndjson' }, output: text },
  import: { database, workspace: text, input: text },
  'history import': {
    database,
    workspace: text,
    'claude-dir': text,
    'codex-dir': text,
    'gemini-dir': text,
    'qwen-dir': text,
    'opencode-dir': text,
    author: text,
  },
  push: { database, to: text, key: text, workspace: text, watch: { type: 'boolean' } },
  backup: { database, output: text },
  restore: { database, input: text },
  doctor: { database, json, repair: { type: 'boolean' } },
} as const satisfies Record<Command, Options>;

/** The commands that take operands (a NAME, a program after "--") besides their options. */
export const TAKES_OPERANDS: ReadonlySet<Command> = new Set([
  'agent-command set',
  'agent-command remove',
  'acp-agent set',
  'acp-agent unset',
]);
