/** Values both the server and the dashboard rely on. */

export const SESSION_STATUSES = ['active', 'completed', 'failed'] as const;
export const PR_STATUSES = ['draft', 'open', 'merged', 'closed'] as const;
export const TASK_STATUSES = ['pending', 'in_progress', 'completed'] as const;

export const DEFAULT_MODEL = 'claude-opus-4-6';
export const DEFAULT_BASE_BRANCH = 'main';
export const DEFAULT_PORT = 4319;

export const SESSION_COOKIE = '__session';
/** Set when the dashboard presents the launch token: lets this browser set up and open the demo. */
export const LAUNCH_COOKIE = '__launch';

export const TITLE_MAX_CHARS = 80;
export const PREVIEW_MAX_CHARS = 120;
export const UNTITLED_SESSION = 'Untitled session';
/** Longest title accepted by an update, in characters after trimming. */
export const TITLE_UPDATE_MAX_CHARS = 200;
/** Longest initial message or follow-up accepted, in characters. */
export const MESSAGE_MAX_CHARS = 100_000;

export const LIST_LIMIT_MAX = 1000;
export const STATS_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

/** Request bodies larger than this are refused with 413. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Which agent runs a workspace's sessions: the built-in simulation (`demo`), a custom command
 * (`command`), or one of the coding-agent CLIs Session Desk knows.
 */
export const AGENT_KINDS = ['demo', 'command', 'claude-code', 'codex', 'gemini', 'acp'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];
