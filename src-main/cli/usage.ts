/** Help texts: the command line is a contract (see the README), so it is spelled out here. */
export const USAGE = {
  main: `Usage: sessiondesk <command> [options]

Commands:
  serve               Run the API and dashboard on 127.0.0.1
  user create         Create a local user
  workspace create    Create a workspace owned by a user
  member add          Add a user to a workspace
  key create          Create an API key for a workspace (prints the key)
  key list            List a workspace's API keys
  key revoke          Revoke an API key

Every command takes --data-dir DIR (else SESSIONDESK_DATA_DIR, else the app's data folder).
Run "sessiondesk <command> --help" for a command's options.`,
  serve: `Usage: sessiondesk serve [--host 127.0.0.1] [--port 4319] [--data-dir DIR] [--demo] [--log-level LEVEL]

Runs the Session Management API and the dashboard. Prints the URL it listens on and
writes it to DIR/server.json. Only loopback hosts are allowed. A port in use is an error.
  --demo        create the demo workspace (sample data, once) and print its sign-in
  --log-level   info (default: one JSON line per request, on stderr), warn, error or silent

Environment: SESSIONDESK_AGENT_COMMAND (the agent CLI for workspaces without their own
setting), SESSIONDESK_DEMO_PACE_MS (the demo agent's pause between steps, default 700).`,
  'user create': `Usage: sessiondesk user create --email E --name N --password P [--image-url U] [--data-dir DIR]

Creates a local user who can sign in to the dashboard. Prints the user id.
The password needs at least 8 characters.`,
  'workspace create': `Usage: sessiondesk workspace create --name N --owner EMAIL [--data-dir DIR]

Creates a workspace owned by the user with that email. Prints the organizationId.`,
  'member add': `Usage: sessiondesk member add --workspace ORG --email E [--data-dir DIR]

Adds the user with that email to the workspace ORG (an organizationId).`,
  'key create': `Usage: sessiondesk key create --workspace ORG [--name LABEL] [--data-dir DIR]

Creates an API key for the workspace ORG and prints the key, and nothing else.
The key is shown only this once; only a hash of it is stored.`,
  'key list': `Usage: sessiondesk key list --workspace ORG [--json] [--data-dir DIR]

Lists the workspace's active API keys: id, prefix, label, created and last used.`,
  'key revoke': `Usage: sessiondesk key revoke --workspace ORG --id KEY_ID [--data-dir DIR]

Revokes an API key; requests using it are refused from then on.`,
} as const;

export type CommandName = keyof typeof USAGE;

export class UsageError extends Error {
  constructor(
    message: string,
    readonly command: CommandName,
  ) {
    super(message);
  }
}
