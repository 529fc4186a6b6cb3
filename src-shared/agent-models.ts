import { DEFAULT_MODEL } from './constants.js';

/** What a kind of agent accepts as its `--model`, for the dashboard's model picker. */
export interface AgentModels {
  /** Model ids (and aliases) the agent is known to accept, most useful first. */
  models: readonly string[];
  /** What the form starts with. */
  defaultModel: string;
  /** Whether any other id may be typed: true where the agent passes the name through. */
  freeEntry: boolean;
}

const CLAUDE_MODELS = [
  'claude-opus-4-6',
  'claude-sonnet-4-5',
  'claude-haiku-4-5',
  'claude-opus-4-1',
  'opus',
  'sonnet',
  'haiku',
] as const;

/**
 * Per agent kind. The API checks a model only by its shape; these lists are what the form
 * offers, so a typo like "banana split!" is caught before a run fails on it.
 */
export const AGENT_MODELS: Readonly<Record<string, AgentModels>> = {
  // The demo agent plays a run whatever the model; it offers the ids a real run would use.
  demo: { models: CLAUDE_MODELS, defaultModel: DEFAULT_MODEL, freeEntry: false },
  // A local command receives {model} as it is: only its author knows what it accepts.
  command: { models: [DEFAULT_MODEL], defaultModel: DEFAULT_MODEL, freeEntry: true },
  // Claude Code takes its aliases and full ids, and new ids as they are released.
  'claude-code': { models: CLAUDE_MODELS, defaultModel: DEFAULT_MODEL, freeEntry: true },
  codex: {
    models: ['gpt-5.1-codex', 'gpt-5.1-codex-mini', 'gpt-5-codex', 'gpt-5'],
    defaultModel: 'gpt-5.1-codex',
    freeEntry: false,
  },
  gemini: {
    models: ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite'],
    defaultModel: 'gemini-2.5-pro',
    freeEntry: false,
  },
};

/** The models of an agent kind; an unknown kind allows free entry, so nothing is blocked. */
export function modelsFor(kind: string): AgentModels {
  return AGENT_MODELS[kind] ?? { models: [DEFAULT_MODEL], defaultModel: DEFAULT_MODEL, freeEntry: true };
}
