import { checkedConversationId, type AgentCommand, type AgentCommandInput } from '../agent-command.js';

/**
 * `claude -p` with stream-json output. The prompt goes on stdin and values are joined to their
 * options with `=`, so no prompt or model text can ever be read as an option.
 * `bypassPermissions` lets it edit files and run commands (git included) without asking: nobody
 * is there to answer, and the narrower modes refuse either the edits or the commits.
 * In a workspace that asks before agents act, it asks Session Desk instead (`asksPermission`).
 * Sub-agents' own text is forwarded so that their messages can be attributed to their parent call.
 */
export function claudeCodeCommand({
  prompt,
  model,
  resumeId,
  asksPermission,
}: AgentCommandInput): AgentCommand {
  // Asking: its own permission prompts come to Session Desk (permission-prompts.ts), and the
  // prompt goes as the first message of that same stream.
  const permissions = asksPermission
    ? ['--input-format=stream-json', '--permission-prompt-tool=stdio', '--permission-mode=default']
    : ['--permission-mode=bypassPermissions'];
  const args = ['-p', '--output-format=stream-json', '--verbose', ...permissions, '--forward-subagent-text'];
  if (model) args.push(`--model=${model}`);
  if (resumeId) args.push(`--resume=${checkedConversationId(resumeId)}`);
  return asksPermission ? { args } : { args, stdin: prompt };
}
