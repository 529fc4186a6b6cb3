import { checkedConversationId, type AgentCommand, type AgentCommandInput } from '../agent-command.js';

/**
 * `claude -p` with stream-json output. The prompt goes on stdin and values are joined to their
 * options with `=`, so no prompt or model text can ever be read as an option.
 * `bypassPermissions` lets it edit files and run commands (git included) without asking: nobody
 * is there to answer, and the narrower modes refuse either the edits or the commits.
 * Sub-agents' own text is forwarded so that their messages can be attributed to their parent call.
 */
export function claudeCodeCommand({ prompt, model, resumeId }: AgentCommandInput): AgentCommand {
  const args = [
    '-p',
    '--output-format=stream-json',
    '--verbose',
    '--permission-mode=bypassPermissions',
    '--forward-subagent-text',
  ];
  if (model) args.push(`--model=${model}`);
  if (resumeId) args.push(`--resume=${checkedConversationId(resumeId)}`);
  return { args, stdin: prompt };
}
