/** What a session asks of an agent CLI for one run. */
export interface AgentCommandInput {
  prompt: string;
  /** The session's model; each kind decides whether its CLI can take it. */
  model?: string | undefined;
  /** The CLI's own conversation id from an earlier run, to continue that conversation. */
  resumeId?: string | undefined;
  /**
   * The workspace asks before agents act: the CLI puts its permission requests to Session Desk
   * (a kind that can, see `CliKindSpec.permissionPrompts`) and takes its prompt that way too.
   */
  asksPermission?: boolean;
}

/** The program's arguments (after its name) and what to write to its stdin, if anything. */
export interface AgentCommand {
  args: string[];
  stdin?: string;
}

const CONVERSATION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/u;

/**
 * A conversation id as the CLI printed it. Ids are checked because they go on the command line:
 * one that could read as an option or a path is refused rather than passed on.
 */
export function checkedConversationId(id: string): string {
  if (!CONVERSATION_ID.test(id)) throw new Error(`not a conversation id: ${JSON.stringify(id)}`);
  return id;
}
