import type { AgentCommand, AgentCommandInput } from './agent-command.js';
import type { AgentEvent, AgentParser, AgentUsage } from '../agent-events.js';
import { claudeCodeCommand } from './claude-code/command.js';
import { createClaudeCodeParser } from './claude-code/parse.js';
import { claudeCodePermissionPrompts } from './claude-code/permission-prompts.js';
import { codexCommand } from './codex/command.js';
import { createCodexParser, threadUsage } from './codex/parse.js';
import { geminiCommand } from './gemini/command.js';
import { createGeminiParser, geminiStderrEvents } from './gemini/parse.js';
import {
  claudeCodeLoggedUsage,
  codexLoggedUsage,
  geminiLoggedUsage,
  type LoggedUsage,
} from './cli/logged-usage.js';
import type { CliKind } from './cli-kind-names.js';

/** What Session Desk knows about one agent CLI: how to find it, run it and read it. */
export interface CliKindSpec {
  kind: CliKind;
  name: string;
  /** The program looked up on PATH. */
  program: string;
  /** Names the program's path instead of PATH. */
  envVar: string;
  /** The npm package it installs from. */
  npm: string;
  command(input: AgentCommandInput): AgentCommand;
  /** `usageBefore`: the resumed conversation's earlier usage, for CLIs that report running totals. */
  parser(options: { usageBefore?: AgentUsage }): AgentParser;
  /**
   * A run's usage from the CLI's own session file: for a run that ended without its final
   * line (stopped, interrupted), and for one a crash cut off. It stands in for what the run
   * printed before the stop: Claude Code prints each response's usage as the response starts
   * (an output of 1 or 3 tokens), and logs the whole response's in its file.
   */
  loggedUsage?: LoggedUsage;
  /**
   * What the CLI prints on stderr when it does not have the conversation it was asked to resume
   * (its files are gone: another home folder, a cleaned cache). Recorded in
   * test/fixtures/agents/<kind>/<version>/refused-resume.json.
   */
  refusedResume: RegExp;
  /** What a line the CLI writes on stderr means for the transcript, as it is written. */
  stderrEvents?: (line: string) => AgentEvent[];
  /** How the CLI's own permission prompts reach Session Desk, for a kind that can put them. */
  permissionPrompts?: typeof claudeCodePermissionPrompts;
}

export const CLI_KIND_SPECS: Record<CliKind, CliKindSpec> = {
  'claude-code': {
    kind: 'claude-code',
    name: 'Claude Code',
    program: 'claude',
    envVar: 'SESSIONDESK_CLAUDE_BIN',
    npm: '@anthropic-ai/claude-code',
    command: claudeCodeCommand,
    parser: () => createClaudeCodeParser(),
    loggedUsage: claudeCodeLoggedUsage,
    refusedResume: /No conversation found with session ID/u,
    permissionPrompts: claudeCodePermissionPrompts,
  },
  codex: {
    kind: 'codex',
    name: 'Codex',
    program: 'codex',
    envVar: 'SESSIONDESK_CODEX_BIN',
    npm: '@openai/codex',
    command: codexCommand,
    parser: (options) => createCodexParser(options),
    loggedUsage: codexLoggedUsage(threadUsage),
    refusedResume: /no rollout found for thread id/u,
  },
  gemini: {
    kind: 'gemini',
    name: 'Gemini CLI',
    program: 'gemini',
    envVar: 'SESSIONDESK_GEMINI_BIN',
    npm: '@google/gemini-cli',
    command: geminiCommand,
    parser: () => createGeminiParser(),
    loggedUsage: geminiLoggedUsage,
    refusedResume: /Error resuming session: (?:No previous sessions found|Invalid session identifier)/u,
    stderrEvents: geminiStderrEvents,
  },
};
