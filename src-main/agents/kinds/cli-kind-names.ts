/** The agent CLIs Session Desk drives with a driver of its own, by the names the API uses. */
export type CliKind = 'claude-code' | 'codex' | 'gemini';
export const CLI_KINDS: readonly CliKind[] = ['claude-code', 'codex', 'gemini'];

export function isCliKind(kind: string): kind is CliKind {
  return (CLI_KINDS as readonly string[]).includes(kind);
}
