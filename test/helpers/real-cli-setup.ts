import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  startScriptedAnthropicServer,
  type RecordedRequest,
} from '../fixtures/agents/scripted-anthropic-server.mjs';
import { startScriptedGeminiServer } from '../fixtures/agents/scripted-gemini-server.mjs';
import { startScriptedResponsesServer } from '../fixtures/agents/scripted-responses-server.mjs';
import { findAgentCli, writeScriptedCodexConfig } from './agent-cli.js';
import { claudeCodeEnv } from './claude-code-cli.js';

export type RealCliKind = 'claude-code' | 'codex' | 'gemini';

/** A real agent CLI set up against its scripted model server, offline, in a home of its own. */
export interface RealCli {
  kind: RealCliKind;
  bin: string;
  /** The CLI's own variables (its home, endpoint and key), to add to the agents' environment. */
  env: NodeJS.ProcessEnv;
  /** The names in `env` beyond the agents' allow-list. */
  names: string[];
  /** The requests its model server answered so far. */
  requests: RecordedRequest[];
  /** The requests its model server keeps unanswered (a turn scripted `hold`). */
  held: RecordedRequest[];
  close(): Promise<void>;
}

const PROGRAMS: Record<RealCliKind, [string, string]> = {
  'claude-code': ['claude', 'CLAUDE_CODE_BIN'],
  codex: ['codex', 'CODEX_BIN'],
  gemini: ['gemini', 'GEMINI_BIN'],
};

/** The kind's real program, or null when it is not installed. */
export function findRealCli(kind: RealCliKind): string | null {
  const [name, variable] = PROGRAMS[kind];
  return findAgentCli(name, variable);
}

/**
 * Starts the kind's scripted model server on `script` (the format of `<kind>-scenarios.mjs`)
 * and writes the CLI's configuration into `home`, as the recorders do. `close` stops the server
 * and removes `home` (call it once the CLI's runs have ended).
 */
export async function realCli(kind: RealCliKind, script: unknown[], home: string): Promise<RealCli> {
  const bin = findRealCli(kind);
  if (!bin) throw new Error(`${kind} is not installed`);
  mkdirSync(home, { recursive: true });
  if (kind === 'claude-code') {
    const server = await startScriptedAnthropicServer(script as never);
    const all = claudeCodeEnv(home, server.url);
    const names = [
      'ANTHROPIC_BASE_URL',
      'ANTHROPIC_API_KEY',
      'DISABLE_TELEMETRY',
      'DISABLE_ERROR_REPORTING',
      'DISABLE_AUTOUPDATER',
      'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
      'IS_SANDBOX',
    ];
    return {
      kind,
      bin,
      env: { HOME: home, ...Object.fromEntries(names.map((n) => [n, all[n]])) },
      names,
      requests: server.requests,
      held: server.held,
      close: () => closeAndRemove(server, home),
    };
  }
  if (kind === 'codex') {
    const server = await startScriptedResponsesServer(script as never);
    writeScriptedCodexConfig(home, server.url);
    return {
      kind,
      bin,
      env: { HOME: home, CODEX_HOME: home, SCRIPTED_API_KEY: 'scripted' },
      names: ['SCRIPTED_API_KEY'],
      requests: server.requests,
      held: server.held,
      close: () => closeAndRemove(server, home),
    };
  }
  const server = await startScriptedGeminiServer(script);
  mkdirSync(join(home, '.gemini'), { recursive: true });
  // API-key sign-in; with only GOOGLE_GEMINI_BASE_URL set the CLI would pick its gateway mode.
  writeFileSync(
    join(home, '.gemini', 'settings.json'),
    JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }),
  );
  return {
    kind,
    bin,
    env: {
      HOME: home,
      GEMINI_API_KEY: 'scripted',
      GOOGLE_GEMINI_BASE_URL: server.url,
      GEMINI_TELEMETRY_ENABLED: 'false',
    },
    names: ['GEMINI_TELEMETRY_ENABLED'],
    requests: server.requests,
    held: server.held,
    close: () => closeAndRemove(server, home),
  };
}

async function closeAndRemove(server: { close(): Promise<unknown> | unknown }, home: string): Promise<void> {
  await server.close();
  rmSync(home, { recursive: true, force: true });
}
