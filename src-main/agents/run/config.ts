import { resolve } from 'node:path';
import { extraAgentEnvNames } from '../sandbox/environment.js';

/** How the agent host runs agents: set from the command line and the environment. */
export interface AgentConfig {
  /** Milliseconds between the demo agent's steps (0 in tests). */
  demoPaceMs: number;
  demoSeed?: number;
  /** From SESSIONDESK_AGENT_COMMAND: the command agent for workspaces without their own setting. */
  defaultCommand?: string[];
  /** Where sessions' sandboxes live (--sandbox-dir); by default beside the data directory. */
  sandboxRoot?: string;
  /** From SESSIONDESK_AGENT_ENV: more variables agents may see, beyond the allow-list. */
  agentEnvNames?: string[];
  /** The environment agent CLIs are found in and run with; the server's own when unset. */
  env?: NodeJS.ProcessEnv;
  /** Runs of agents that run programs going on at once; more wait in a queue (default 3). */
  maxRuns?: number;
}

/** The demo agent at a pace a person can follow. */
export const DEFAULT_AGENT_CONFIG: AgentConfig = { demoPaceMs: 700 };

/**
 * SESSIONDESK_AGENT_COMMAND: the agent CLI for workspaces that have not chosen one, as a JSON
 * array (`["claude","-p","{prompt}","--output-format","stream-json","--verbose"]`) or words
 * separated by spaces. SESSIONDESK_DEMO_PACE_MS: the demo agent's pause between steps.
 * SESSIONDESK_SANDBOX_DIR: where sandboxes live. SESSIONDESK_AGENT_ENV: more variables
 * agents may see. SESSIONDESK_MAX_RUNS: how many agent programs run at once.
 */
export function agentConfigFromEnv(env: NodeJS.ProcessEnv): AgentConfig {
  const config: AgentConfig = { demoPaceMs: DEFAULT_AGENT_CONFIG.demoPaceMs };
  const pace = env.SESSIONDESK_DEMO_PACE_MS;
  if (pace !== undefined && pace !== '') {
    const ms = Number(pace);
    if (!Number.isFinite(ms) || ms < 0)
      throw new Error(`SESSIONDESK_DEMO_PACE_MS must be a number of milliseconds, not "${pace}"`);
    config.demoPaceMs = ms;
  }
  const maxRuns = env.SESSIONDESK_MAX_RUNS?.trim();
  if (maxRuns) config.maxRuns = parseMaxRuns(maxRuns, 'SESSIONDESK_MAX_RUNS');
  if (env.SESSIONDESK_SANDBOX_DIR) config.sandboxRoot = resolve(env.SESSIONDESK_SANDBOX_DIR);
  const extra = extraAgentEnvNames(env.SESSIONDESK_AGENT_ENV);
  if (extra.length > 0) config.agentEnvNames = extra;
  const command = env.SESSIONDESK_AGENT_COMMAND?.trim();
  if (command) {
    let parsed: unknown;
    if (command.startsWith('[')) {
      try {
        parsed = JSON.parse(command);
      } catch {
        throw new Error('SESSIONDESK_AGENT_COMMAND looks like JSON but does not parse');
      }
    } else {
      parsed = command.split(/\s+/u);
    }
    if (
      !Array.isArray(parsed) ||
      parsed.length === 0 ||
      !parsed.every((a) => typeof a === 'string' && a !== '')
    ) {
      throw new Error(
        'SESSIONDESK_AGENT_COMMAND must be a program and its arguments (a JSON array of strings, or words)',
      );
    }
    config.defaultCommand = parsed as string[];
  }
  return config;
}

/** The most runs allowed at once: a whole number from 1 to 1000. */
export function parseMaxRuns(text: string, source: string): number {
  const value = Number(text.trim());
  if (!/^\d+$/u.test(text.trim()) || value < 1 || value > 1000) {
    throw new Error(`${source} must be a whole number from 1 to 1000, not "${text}"`);
  }
  return value;
}
