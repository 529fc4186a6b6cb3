import { checkedConversationId, type AgentCommand, type AgentCommandInput } from '../agent-command.js';

/** Models and aliases Gemini CLI can run; any other session model is left to the CLI's default. */
const GEMINI_MODEL = /^(?:gemini-|gemma-|auto(?:-|$)|pro$|flash(?:-lite)?$)/u;

/**
 * `gemini --output-format stream-json` with the prompt on stdin (without a TTY it runs headless),
 * so no prompt text is ever an option. `--approval-mode=yolo` approves every tool call (edits,
 * shell commands, git) since nobody is there to answer; `--skip-trust` trusts the sandbox
 * folder for this run only, as an untrusted folder turns approvals back on. A follow-up passes
 * the session id from the `init` line to `--resume`.
 */
export function geminiCommand({ prompt, model, resumeId }: AgentCommandInput): AgentCommand {
  const args = ['--output-format=stream-json', '--approval-mode=yolo', '--skip-trust'];
  if (model && GEMINI_MODEL.test(model)) args.push(`--model=${model}`);
  if (resumeId) args.push(`--resume=${checkedConversationId(resumeId)}`);
  return { args, stdin: prompt };
}
