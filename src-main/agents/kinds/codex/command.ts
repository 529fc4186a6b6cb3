import { checkedConversationId, type AgentCommand, type AgentCommandInput } from '../agent-command.js';

/** Models Codex can run; any other session model (a Claude one, say) is left to Codex's default. */
const CODEX_MODEL = /^(?:gpt-|o\d|codex-)/u;

/**
 * `codex exec --json`, the prompt read from stdin (`-`), so no prompt text is ever an option.
 * `--dangerously-bypass-approvals-and-sandbox` is what lets it edit, run commands and commit
 * unattended: exec mode never asks, and its workspace-write sandbox keeps `.git` read-only, so
 * commits would fail. A follow-up is `codex exec … resume <thread_id> -`.
 */
export function codexCommand({ prompt, model, resumeId }: AgentCommandInput): AgentCommand {
  const args = [
    'exec',
    '--json',
    '--dangerously-bypass-approvals-and-sandbox',
    '--skip-git-repo-check',
    // Its plan tool, the source of `todo_list` items (the session's tasks), is off unless asked for.
    '--config=tools.update_plan.enabled=true',
  ];
  if (model && CODEX_MODEL.test(model)) args.push(`--model=${model}`);
  if (resumeId) args.push('resume', checkedConversationId(resumeId));
  args.push('-');
  return { args, stdin: prompt };
}
