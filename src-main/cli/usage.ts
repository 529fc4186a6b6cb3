/** What every account command says of --database. */
const ON_TEAM_DATABASE = `With --database URL (else SESSIONDESK_DATABASE_URL) it works on a team server's PostgreSQL
instead of a data directory, migrating it first as "serve --database" does.`;

/** What the administrator's program commands say of --database. */
const PROGRAMS_NOT_ON_TEAM_DATABASE = `A team server's database (--database URL, else SESSIONDESK_DATABASE_URL) is refused (exit 2):
each "serve --database" process reads these from its own --data-dir.`;

/**
 * Each command's help: the command line is a contract (docs/reference/command-line.md), so it is
 * spelled out here. A help's first line is the command's usage line, naming every option its
 * parser takes (command-options.ts); the reference shows each usage line as it is here.
 */
const COMMAND_USAGE = {
  serve: `Usage: sessiondesk serve [--host 127.0.0.1] [--port 4319] [--data-dir DIR] [--database URL] [--public-url URL] [--trust-proxy ADDRS] [--sandbox-dir DIR] [--max-runs N] [--demo] [--oidc-issuer URL --oidc-client-id ID [--oidc-allowed-domains D,…]] [--password-sign-in on|off] [--log-level LEVEL] [--log-format pretty|json]

Runs the Session Management API and the dashboard. Prints the URL to open, with a token
new at every start (first-run setup and the demo's sign-in need it), and writes where it
listens to DIR/server.json. A port in use is an error.
  --host        where to listen: a loopback address (default 127.0.0.1); any other only with
                --database and --public-url (a team server behind its proxy)
  --demo        create the demo workspace (sample data, once) and print its sign-in
                (a random password, made with the demo)
  --database    a team server's PostgreSQL 15+ (postgres://USER@HOST:PORT/DB, else
                SESSIONDESK_DATABASE_URL): the record of everything, migrated at start; DIR
                then holds only this process's own files (and its agent commands). The demo
                and importing the agent CLIs' history are a desktop's; back the database up
                with pg_dump ("sessiondesk backup --database URL" prints how)
  --public-url  the https://HOST[:PORT] people reach it at through a reverse proxy (else
                SESSIONDESK_PUBLIC_URL): requests must name that host (or loopback, from this
                machine), signed-in writes come from it, cookies are Secure, and no token goes
                in a URL: with no account yet it prints a setup code to type in instead
  --trust-proxy the proxies (addresses, ADDR/BITS ranges, "loopback"; comma-separated; else
                SESSIONDESK_TRUST_PROXY) whose X-Forwarded-For and X-Forwarded-Proto are
                believed: limits and logs then use the real client's address
  --sandbox-dir where agents work, one folder per session (else SESSIONDESK_SANDBOX_DIR, else
                DIR-sandboxes beside the data directory; never inside it)
  --log-level   info (default: a line per event on stderr: start, sessions created and ended,
                failed sign-ins, refused requests, errors), debug (also every request), warn,
                error or silent
  --log-format  pretty (default: "12:04:31 session ses_… created by ann@… (claude-code)") or
                json (one object per line, with an ISO time, for programs)
  --port        a number, 0 for any free port
  --max-runs    how many agent programs run at once (default 3, else SESSIONDESK_MAX_RUNS);
                more sessions wait, queued, first come first served
  --oidc-issuer        sign people in through this OpenID Connect provider (an https:// issuer
                       URL, else SESSIONDESK_OIDC_ISSUER), found at start; register the redirect
                       URI <this server's URL>/api/auth/oidc/callback there
  --oidc-client-id     this server's client id at the provider (else SESSIONDESK_OIDC_CLIENT_ID).
                       Its secret only in SESSIONDESK_OIDC_CLIENT_SECRET, never as an option
                       (options show in the process list); none: a public client (PKCE)
  --oidc-allowed-domains  emails of these domains (a.com,b.org; else
                       SESSIONDESK_OIDC_ALLOWED_DOMAINS) get an account at their first sign-in;
                       otherwise only invited emails ("sessiondesk member add") do
  --password-sign-in   on (default) or off (else SESSIONDESK_PASSWORD_SIGN_IN): off refuses
                       email and password sign-in; needs --oidc-issuer

Environment: SESSIONDESK_AGENT_COMMAND (the agent CLI for workspaces without their own
setting), SESSIONDESK_AGENT_ENV (more variables agents may see, beyond the allow-list),
SESSIONDESK_SANDBOX_DIR, SESSIONDESK_MAX_RUNS, SESSIONDESK_DEMO_PACE_MS (the demo agent's pause between steps,
default 700), SESSIONDESK_SNAPSHOT_AFTER_BYTES (snapshot once the journals pass this, default
64 MiB), SESSIONDESK_SEARCH_TIME_LIMIT_MS (a search running longer is stopped and answered 503,
default 5000), SESSIONDESK_OIDC_CLIENT_SECRET (the identity provider's client secret).
An identity provider with a certificate of a private CA: start with NODE_EXTRA_CA_CERTS=CA.pem.`,
  'user create': `Usage: sessiondesk user create --email E --name N --password P [--image-url U] [--data-dir DIR | --database URL]

Creates a local user who can sign in to the dashboard. Prints the user id.
The password needs at least 8 characters.
${ON_TEAM_DATABASE}`,
  'user set-password': `Usage: sessiondesk user set-password --email E --password P [--data-dir DIR | --database URL]

Sets the password of the user with that email (an account made by a sign-in through the
identity provider has none until then) and ends that user's sign-ins.
The password needs at least 8 characters.
${ON_TEAM_DATABASE}`,
  'workspace create': `Usage: sessiondesk workspace create --name N --owner EMAIL [--agent KIND [--acp-agent ID]] [--data-dir DIR | --database URL]

Creates a workspace owned by the user with that email. Prints the organizationId, and on stderr
which agent the workspace runs.
  --agent      demo, claude-code, codex or gemini (its program must be installed), or acp with
               --acp-agent ID (an ACP agent Session Desk knows, installed: GET /api/agents lists
               them). Without it the workspace runs the demo agent, which only simulates work (or
               the command SESSIONDESK_AGENT_COMMAND names), until an owner chooses in Settings.
${ON_TEAM_DATABASE}`,
  'user list': `Usage: sessiondesk user list [--json] [--data-dir DIR | --database URL]

Lists every user: id, email, name, how many workspaces they are in, created.
${ON_TEAM_DATABASE}`,
  'workspace list': `Usage: sessiondesk workspace list [--json] [--data-dir DIR | --database URL]

Lists every workspace: organizationId, name, owners, members, sessions, created.
${ON_TEAM_DATABASE}`,
  'member add': `Usage: sessiondesk member add --workspace ORG --email E [--data-dir DIR | --database URL]

Adds the user with that email to the workspace ORG (an organizationId). An email without an
account is invited instead (said on stdout, exit code 0): it joins ORG as a member when it first
signs in through the identity provider, or once an account with that email is made.
${ON_TEAM_DATABASE}`,
  'member remove': `Usage: sessiondesk member remove --workspace ORG --email E [--data-dir DIR | --database URL]

Removes the user with that email from the workspace ORG. Their sessions stay. The last
owner of a workspace cannot be removed. An email that is only invited has its invitation
withdrawn.
${ON_TEAM_DATABASE}`,
  'key create': `Usage: sessiondesk key create --workspace ORG [--name LABEL] [--can-approve] [--push-only] [--data-dir DIR | --database URL]

Creates an API key for the workspace ORG and prints the key, and nothing else.
The key is shown only this once; only a hash of it is stored.
With --can-approve the key may decide what agents ask (POST /api/approvals/{id});
every key may list them.
With --push-only the key may only push a desktop's sessions (sessiondesk push);
every other request with it is refused (403).
${ON_TEAM_DATABASE}`,
  'key list': `Usage: sessiondesk key list --workspace ORG [--json] [--data-dir DIR | --database URL]

Lists the workspace's active API keys: id, prefix, label, created and last used.
${ON_TEAM_DATABASE}`,
  'key revoke': `Usage: sessiondesk key revoke --workspace ORG --id KEY_ID [--data-dir DIR | --database URL]

Revokes an API key; requests using it are refused from then on.
${ON_TEAM_DATABASE}`,
  'agent-command set': `Usage: sessiondesk agent-command set NAME [--data-dir DIR] -- PROGRAM [ARG…]

Defines (or changes) the agent command NAME: the program and its arguments, run without a
shell in a session's sandbox. {prompt}, {model} and {sessionId} are replaced inside single
arguments; leave {prompt} out to send the prompt on the program's stdin (recommended), or put
it after "--". Workspace owners choose among these commands in the dashboard; nobody can
send a program over HTTP. A running server uses the change from its next run.
${PROGRAMS_NOT_ON_TEAM_DATABASE}`,
  'agent-command list': `Usage: sessiondesk agent-command list [--json] [--data-dir DIR]

Lists the agent commands the administrator defined.
${PROGRAMS_NOT_ON_TEAM_DATABASE}`,
  'agent-command remove': `Usage: sessiondesk agent-command remove NAME [--data-dir DIR]

Removes the agent command NAME. Workspaces that chose it fail their next run, saying so,
until an owner chooses another agent.
${PROGRAMS_NOT_ON_TEAM_DATABASE}`,
  'agent check': `Usage: sessiondesk agent check --workspace ORG [--json] [--data-dir DIR | --database URL]

Checks the agent of the workspace ORG as a session would run it, within 30 seconds, and
prints each step:
  Program      found as a run finds it, its version asked in the sandbox
  Credentials  the sign-in a session's home gets (variables and files)
  Test prompt  "Reply with OK", run in a sandbox of its own through the workspace's network
               allow-list; a model API that cannot be reached is said within seconds
A failed step says what to do: the install command, the credential to add, the host to allow,
and names the model API it tried (endpoint). The demo agent's check passes: it is simulated.
Nothing of the check is kept.
While a server holds the data directory, the check runs in it, with its environment; else
here, with this shell's environment, as "sessiondesk serve" started from it would run agents.
With --database URL (else SESSIONDESK_DATABASE_URL) the workspace is read from a team
server's PostgreSQL, and the check runs here with DIR's agent commands and ACP agents.
  --json   the check as JSON: { ok, agent, steps: [{ name, ok, detail, endpoint?, fix? }] }
Exit code 0 when every step passed, 1 when one failed or the check could not run.`,
  'acp-agent set': `Usage: sessiondesk acp-agent set NAME [--data-dir DIR] -- PROGRAM [ARG…]

Adds the ACP agent NAME, an agent that speaks the Agent Client Protocol on stdio: the program
(a name on PATH or an absolute path) and its arguments, run without a shell in a session's
sandbox. NAME given as one Session Desk knows (GET /api/agents lists them: opencode,
qwen-code, gemini, claude-code, codex and the ACP registry's) changes how that agent starts
and keeps the rest. Workspace owners then choose it as agent "acp" with acpAgent NAME. A
running server uses the change from its next run.
${PROGRAMS_NOT_ON_TEAM_DATABASE}`,
  'acp-agent list': `Usage: sessiondesk acp-agent list [--json] [--data-dir DIR]

Lists the ACP agents the administrator added or changed.
${PROGRAMS_NOT_ON_TEAM_DATABASE}`,
  'acp-agent unset': `Usage: sessiondesk acp-agent unset NAME [--data-dir DIR]

Removes the ACP agent NAME the administrator added (one Session Desk knows starts as it
knows it again). Workspaces that chose an added one fail their next run, saying so.
${PROGRAMS_NOT_ON_TEAM_DATABASE}`,
  export: `Usage: sessiondesk export --workspace ORG [--format ndjson|json] [--output FILE] [--data-dir DIR | --database URL]

Writes every session of the workspace ORG, with its messages, tasks and metadata, session by
session (never the whole export in memory).
  --format   ndjson (default): a header line; for each session a line of its own, a line per
             message and a closing line; then an end line. json: one document, the
             header's fields and "sessions", each with its "messages"
  --output   write FILE (as FILE.tmp, renamed when complete) instead of stdout
While a server holds the data directory, the export comes from it. With --database URL (else
SESSIONDESK_DATABASE_URL) it exports from a team server's PostgreSQL instead, the same export.`,
  import: `Usage: sessiondesk import --workspace ORG [--input FILE] [--data-dir DIR | --database URL]

Adds the sessions of an export (from stdin, or FILE) to the workspace ORG. Idempotent: a
session whose id is already there is left as it is. Each session is checked first and written
whole or not at all; invalid ones are skipped and reported with their line. Authors are matched
by email; sessions of people without an account here go to the workspace's owner. Sessions keep
their ids, timestamps and status. Prints what was imported and what was skipped.
Exit code 0 when the input is an export (even if some sessions were skipped), 1 when it is not.
While a server holds the data directory, the import goes through it. With --database URL (else
SESSIONDESK_DATABASE_URL) it imports into a team server's PostgreSQL instead, the same way.`,
  'history import': `Usage: sessiondesk history import --workspace ORG [--claude-dir DIR] [--codex-dir DIR] [--gemini-dir DIR] [--qwen-dir DIR] [--opencode-dir DIR] [--author EMAIL] [--data-dir DIR]

Imports the sessions the agent CLIs wrote in their own folders into the workspace ORG (its id
or its name), and remembers those folders: a running server (and every later start) follows them.
  --claude-dir  Claude Code's root (what CLAUDE_CONFIG_DIR names; else ~/.claude)
  --codex-dir   Codex's root (what CODEX_HOME names; else ~/.codex)
  --gemini-dir  Gemini CLI's root (else ~/.gemini)
  --qwen-dir    Qwen Code's root (what QWEN_RUNTIME_DIR, else QWEN_HOME names; else ~/.qwen)
  --opencode-dir  OpenCode's data folder, holding opencode.db (else $XDG_DATA_HOME/opencode,
                else ~/.local/share/opencode)
  --author      the workspace member the sessions are imported as (else its first owner)
A default folder that is not there is a note. A named one must be that CLI's folder: holding
its conversations where it writes them (projects/, sessions/, tmp/, projects/*/chats/, opencode.db),
or only the empty folders of a fresh install (OpenCode: its database without a session); anything
else, or Session Desk's own data, is refused (exit 2).
Run again, it reads only what changed. The CLIs' files are only read, never changed.
Prints one line per source. While a server holds the data directory, the import goes through it.
A team server's database (--database URL, else SESSIONDESK_DATABASE_URL) is refused (exit 2):
import on the desktop, then "sessiondesk push" its sessions.`,
  backup: `Usage: sessiondesk backup --output FILE [--data-dir DIR]

Writes the whole database, consistent at one instant and holding every write acknowledged
before the command started, to FILE: one SQLite file (written as FILE.tmp, renamed when
complete and checked with PRAGMA integrity_check). While a server holds the data directory, it
makes the copy. FILE holds password and key hashes: keep it private. Restore it with
"sessiondesk restore".
A team server's database (--database URL, else SESSIONDESK_DATABASE_URL) is refused (exit 2)
with the pg_dump command that backs it up.`,
  restore: `Usage: sessiondesk restore --input FILE [--data-dir DIR]

Makes a backup (from "sessiondesk backup") the database of the data directory DIR (else
SESSIONDESK_DATA_DIR, else the app's data folder), which must be new or empty: restore never
overwrites data. Checks the backup first, then opens DIR as a
server would. Start it with "sessiondesk serve --data-dir DIR".
A team server's database (--database URL, else SESSIONDESK_DATABASE_URL) is refused (exit 2)
with the pg_restore command that restores pg_dump's copy.`,
  push: `Usage: sessiondesk push --to URL --key KEY [--workspace ORG] [--watch] [--data-dir DIR]

Sends this desktop's sessions (those run here and those imported from the agent CLIs' history)
to the team server at URL, into the workspace the API key KEY belongs to (a key made with
"sessiondesk key create --push-only" on the team server is enough). Each session goes once:
the team server is asked how far it holds it, and only what it lacks is sent, so pushing
again sends nothing new, a session grown since sends its new messages, and a push stopped
anywhere goes on where it stopped. The team server shows the machine's name, the session's
author here and when it was pushed.
  --workspace  the local workspace to push, by organizationId or name (needed when the data
               directory has more than one)
  --watch      keep running: look for new sessions and messages every 2 seconds and send
               them, until Ctrl-C (SIGINT) or SIGTERM
Works beside a running server on the data directory (through it) or on the directory alone.
Exit code 1 when the team server refused a session (another workspace's id, or a session it
ran itself); the others are sent. --database is refused (exit 2): push goes over HTTP (--to).`,
  doctor: `Usage: sessiondesk doctor [--json] [--repair] [--data-dir DIR | --database URL]

Checks a data directory without changing anything (it takes no lock, so it works beside a
running server): the database rebuilt in memory (PRAGMA integrity_check, schema version),
snapshots and their checksums, journals (records, torn tail, damage), files kept aside by a
recovery, the lock, and server.json. Says what to do about each problem.
--repair   first open the directory as a start does, but cut a journal damaged before its
           end (a start refuses it): what comes before the damage is kept, the writes after
           it are lost; copies are kept as *.cut-* and *.damaged-*. Stop the server first.
With --database URL (else SESSIONDESK_DATABASE_URL) it checks a team server's PostgreSQL
instead, changing nothing: that it answers, its version, the schema version against this
Session Desk's (older: the next serve migrates it; newer: a problem), and how many users,
workspaces and sessions it holds. --repair is refused with it (exit 2).
Exit code 0 when healthy, 1 when it found a problem or cannot reach the database.`,
} as const;

/** A command: one word, or a group's word and the command's (`key create`). */
export type Command = keyof typeof COMMAND_USAGE;

/** What `sessiondesk --help` and a group's help say of each command, in this order. */
const SUMMARY: Record<Command, string> = {
  serve: 'Run the API and dashboard on 127.0.0.1',
  'user create': 'Create a local user',
  'user list': 'List the users',
  'user set-password': "Set a user's password",
  'workspace create': 'Create a workspace owned by a user',
  'workspace list': 'List the workspaces, their owners and sizes',
  'member add': 'Add a user to a workspace (an email without an account: invite it)',
  'member remove': 'Remove a user (or an invitation) from a workspace',
  'key create': 'Create an API key for a workspace (prints the key)',
  'key list': "List a workspace's API keys",
  'key revoke': 'Revoke an API key',
  'agent-command set': 'Define an agent command workspaces may choose (administrator)',
  'agent-command list': 'List the agent commands',
  'agent-command remove': 'Remove an agent command',
  'agent check': "Check a workspace's agent as a session would run it",
  'acp-agent set': 'Add an ACP agent, or change how one starts (administrator)',
  'acp-agent list': 'List the ACP agents the administrator added',
  'acp-agent unset': 'Remove an ACP agent the administrator added',
  export: "Export a workspace's sessions (NDJSON or JSON)",
  import: 'Import an export into a workspace (idempotent)',
  'history import': "Import the agent CLIs' own session files (Claude Code, Codex, Gemini CLI, …)",
  push: "Send this desktop's sessions to a team server's workspace (--watch: keep sending)",
  backup: 'Copy the whole database to one SQLite file',
  restore: 'Make a backup the database of a new data directory',
  doctor: 'Check a data directory without changing it (--repair: cut damage)',
};

/** Every command, in the order the help lists them. */
export const COMMANDS = Object.keys(SUMMARY) as Command[];

/** A command's usage line: the first line of its help, from "sessiondesk". */
export function usageLine(command: Command): string {
  return COMMAND_USAGE[command].split('\n', 1)[0]!.replace(/^Usage: /u, '');
}

/**
 * Whether the command works on a team server's PostgreSQL (`--database URL`), as its usage line
 * says; the other commands that take the option refuse it (exit 2), as their help says.
 */
export function worksOnTeamDatabase(command: Command): boolean {
  return usageLine(command).includes('--database URL');
}

/** "a, b and c" */
function listed(words: string[]): string {
  return words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)!}`;
}

/** Words filled into lines of at most `width` characters. */
function wrapped(text: string, width = 95): string {
  const lines: string[] = [];
  for (const word of text.split(' ')) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + word.length <= width)
      lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines.join('\n');
}

/** The commands that work on a team database, a group named whole when all of it does. */
function teamDatabaseCommands(): string {
  const names: string[] = [];
  for (const command of COMMANDS.filter(worksOnTeamDatabase)) {
    const [group, sub] = command.split(' ') as [string, string | undefined];
    const inGroup = COMMANDS.filter((c) => c.startsWith(`${group} `));
    const name = sub !== undefined && inGroup.every(worksOnTeamDatabase) ? group : command;
    if (!names.includes(name)) names.push(name);
  }
  return listed(names);
}

/** Commands and their summaries in aligned columns. */
function columns(commands: Command[]): string {
  const width = Math.max(...commands.map((c) => c.length)) + 4;
  return commands.map((c) => `  ${c.padEnd(width)}${SUMMARY[c]}`).join('\n');
}

const MAIN_USAGE = `Usage: sessiondesk <command> [options]

Commands:
${columns(COMMANDS)}

${wrapped(
  "Every command takes --data-dir DIR (else SESSIONDESK_DATA_DIR, else the app's data folder). " +
    `--database URL (else SESSIONDESK_DATABASE_URL) makes ${teamDatabaseCommands()} work on a ` +
    "team server's PostgreSQL instead; the other commands refuse it (exit 2).",
)}
Run "sessiondesk <command> --help" for a command's options, "sessiondesk --version" (or -v) for the version.`;

/** Help texts: the command line's, and each command's. */
export const USAGE: Readonly<Record<Command | 'main', string>> = { main: MAIN_USAGE, ...COMMAND_USAGE };

export type CommandName = keyof typeof USAGE;

export class UsageError extends Error {
  constructor(
    message: string,
    readonly command: CommandName,
  ) {
    super(message);
  }
}

/** A command's help was asked for (`--help`, `-h`): it is printed, and nothing else is done. */
export class HelpAsked extends Error {
  constructor(readonly command: Command) {
    super(`the help of ${command}`);
  }
}

/** The groups of commands (`key`: `key create`, `key list`, …), each with its commands. */
const GROUP_COMMANDS = new Map<string, Command[]>();
for (const command of COMMANDS) {
  const [group, sub] = command.split(' ') as [string, string | undefined];
  if (sub !== undefined) GROUP_COMMANDS.set(group, [...(GROUP_COMMANDS.get(group) ?? []), command]);
}

/** What `sessiondesk <group> --help` prints: the group's commands. */
export const GROUPS: Readonly<Record<string, string>> = Object.fromEntries(
  [...GROUP_COMMANDS].map(([group, commands]) => [
    group,
    `Usage: sessiondesk ${group} <command>\n\n${columns(commands)}\n\nRun "sessiondesk ${group} <command> --help" for its options.`,
  ]),
);
