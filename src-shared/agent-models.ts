import { DEFAULT_MODEL } from './constants.js';

/** What a kind of agent accepts as its model, for the dashboard's model picker. */
export interface AgentModels {
  /** Model ids (and aliases) the agent is known to accept, most useful first. */
  models: readonly string[];
  /**
   * What a session gets when the person picks none. Empty for the agents that run a model:
   * they then run without a model option, so the CLI's own configured default applies.
   */
  defaultModel: string;
  /** Whether any other id may be typed: true where the agent passes the name through. */
  freeEntry: boolean;
  /** The CLI version whose own model list `models` was taken from. */
  checkedWith?: string;
}

/**
 * Kept as a table per CLI version rather than read from the installed CLI: only Codex can
 * print its list (`codex debug models --bundled`), Gemini CLI and Claude Code keep theirs in
 * their bundles, and the form needs the list without asking the server to run a program.
 * test/agents/agent-models.test.ts checks each list against the installed CLI of that version;
 * the form says which version a list is for when another one is installed.
 */
const CLI_MODELS: Readonly<Record<'claude-code' | 'codex' | 'gemini', AgentModels>> = {
  // Aliases follow Claude Code's own choice per release; full ids from its list of known models.
  'claude-code': {
    models: [
      'opus',
      'sonnet',
      'haiku',
      'claude-opus-5-5',
      'claude-sonnet-5-5',
      'claude-haiku-5-5',
      'claude-opus-5',
      'claude-sonnet-5',
      'claude-opus-4-8',
      'claude-sonnet-4-6',
      'claude-opus-4-6',
      'claude-haiku-4-5',
    ],
    defaultModel: '',
    freeEntry: true,
    checkedWith: '2.1.330',
  },
  // Codex runs an id outside its catalog without its tools (no apply_patch): only listed ones.
  codex: {
    models: [
      'gpt-6.1-sol',
      'gpt-6-astra',
      'gpt-6-sol',
      'gpt-6-luna',
      'gpt-5.6-sol',
      'gpt-6.1-terra',
      'gpt-5.6-terra',
      'gpt-5.6-luna',
      'gpt-5.5',
    ],
    defaultModel: '',
    freeEntry: false,
    checkedWith: '0.169.0',
  },
  // Its aliases resolve per account (preview access); the ids are its VALID_GEMINI_MODELS.
  gemini: {
    models: [
      'auto',
      'pro',
      'flash',
      'flash-lite',
      'gemini-3.1-pro-preview',
      'gemini-3-pro-preview',
      'gemini-2.5-pro',
      'gemini-3.5-flash',
      'gemini-3-flash-preview',
      'gemini-3.1-flash-lite',
    ],
    defaultModel: '',
    freeEntry: false,
    checkedWith: '0.61.0',
  },
};

/**
 * Per agent kind. The API checks a model only by its shape; these lists are what the form
 * offers, so a typo like "banana split!" is caught before a run fails on it.
 */
export const AGENT_MODELS: Readonly<Record<string, AgentModels>> = {
  // The demo agent runs no model: its sessions record the specification's default.
  demo: { models: [], defaultModel: DEFAULT_MODEL, freeEntry: false },
  // A local command receives {model} as it is (empty unless chosen): only its author knows
  // what it accepts.
  command: { models: [], defaultModel: '', freeEntry: true },
  ...CLI_MODELS,
};

/** The models of an agent kind; an unknown kind allows free entry, so nothing is blocked. */
export function modelsFor(kind: string): AgentModels {
  return AGENT_MODELS[kind] ?? { models: [], defaultModel: '', freeEntry: true };
}
