import { rmSync } from 'node:fs';
import { claudeCodeCommand } from '../../src-main/agents/kinds/claude-code/command.js';
import type { ClaudeCodeScenario } from '../fixtures/agents/claude-code-scenarios.mjs';
import { startScriptedAnthropicServer } from '../fixtures/agents/scripted-anthropic-server.mjs';
import { fieldOf, findAgentCli, makeRunRoot, runProgram, type ProgramRun } from './agent-cli.js';

/** The Claude Code program: CLAUDE_CODE_BIN, else `claude` on PATH, else the install prefix. */
export function findClaudeCode(): string | null {
  return findAgentCli('claude', 'CLAUDE_CODE_BIN');
}

/**
 * The variables of claudeCodeEnv that a server passes on to its agents, named (as any beyond the
 * agents' allow-list must be) in SESSIONDESK_AGENT_ENV or `agentEnvNames`.
 */
export const CLAUDE_CODE_VARIABLES = [
  'ANTHROPIC_BASE_URL',
  'ANTHROPIC_API_KEY',
  'DISABLE_TELEMETRY',
  'DISABLE_ERROR_REPORTING',
  'DISABLE_AUTOUPDATER',
  'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
  'IS_SANDBOX',
];

/** The environment that keeps the CLI on the scripted server and off every other host. */
export function claudeCodeEnv(home: string, baseUrl: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-scripted-server',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    // The CLI refuses bypassPermissions as root unless told it runs in a sandbox on purpose.
    IS_SANDBOX: '1',
  };
}

/**
 * Runs a scenario with the real CLI against the scripted server, in a fresh git repository with
 * its own home folder, using the product's command line. A run that asks to resume continues the
 * first run's conversation.
 */
export async function runClaudeCodeScenario(
  bin: string,
  scenario: ClaudeCodeScenario,
  model = 'claude-sonnet-4-5',
): Promise<{ runs: ProgramRun[]; repo: string; cleanup(): void }> {
  const { root, repo, home } = makeRunRoot('claude-code-run-');
  const server = await startScriptedAnthropicServer(scenario.script);
  try {
    const env = claudeCodeEnv(home, server.url);
    const runs: ProgramRun[] = [];
    for (const run of scenario.runs) {
      const resumeId = run.resume ? fieldOf(runs[0]!.stdout, 'system', 'session_id') : undefined;
      const command = claudeCodeCommand({ prompt: run.prompt, model, resumeId });
      const args = [...command.args, ...(run.extraArgs ?? [])];
      runs.push(await runProgram(bin, args, command.stdin, repo, { ...env, ...run.env }));
    }
    return { runs, repo, cleanup: () => rmSync(root, { recursive: true, force: true }) };
  } finally {
    await server.close();
  }
}
