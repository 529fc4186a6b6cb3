import { DatabaseTooNewError } from './errors.js';
import { moveMessagesToTranscripts } from './move-messages.js';
import type { MigrationStep } from './migration-step.js';
import type { Db } from './sqljs.js';

/**
 * Append-only: never edit a migration that has shipped; add a new one. They live in
 * code so the bundler includes them. Each runs inside the write that records it.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string[];
  /** Data work done before the SQL, in writes of its own; it must be safe to repeat. */
  prepare?: (step: MigrationStep) => Promise<void>;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: [
      `CREATE TABLE users (
        id TEXT PRIMARY KEY,
        email TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        image_url TEXT,
        password_hash TEXT NOT NULL,
        created_at TEXT NOT NULL
      )`,
      `CREATE TABLE workspaces (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL
      )`,
      `CREATE TABLE memberships (
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        user_id TEXT NOT NULL REFERENCES users(id),
        role TEXT NOT NULL CHECK (role IN ('owner', 'member')),
        created_at TEXT NOT NULL,
        PRIMARY KEY (workspace_id, user_id)
      )`,
      `CREATE INDEX memberships_by_user ON memberships(user_id)`,
      `CREATE TABLE auth_sessions (
        token_hash TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id),
        created_at TEXT NOT NULL,
        last_seen_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      )`,
      `CREATE INDEX auth_sessions_by_user ON auth_sessions(user_id)`,
      `CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        key_hash TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        label TEXT NOT NULL,
        created_by TEXT REFERENCES users(id),
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at TEXT
      )`,
      `CREATE INDEX api_keys_by_workspace ON api_keys(workspace_id)`,
      `CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        author_id TEXT NOT NULL REFERENCES users(id),
        title TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('active', 'completed', 'failed')),
        model TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        repo_url TEXT,
        repository TEXT,
        base_branch TEXT NOT NULL,
        branch TEXT,
        pr_number INTEGER,
        pr_url TEXT,
        pr_status TEXT CHECK (pr_status IN ('draft', 'open', 'merged', 'closed')),
        pr_merged_at TEXT,
        first_message TEXT,
        message_count INTEGER NOT NULL DEFAULT 0,
        first_preview TEXT,
        last_preview TEXT
      )`,
      // The list's one order, newest first; keyset pages walk this index.
      `CREATE INDEX sessions_by_workspace_created ON sessions(workspace_id, created_at DESC, id DESC)`,
      `CREATE INDEX sessions_by_workspace_status ON sessions(workspace_id, status, author_id)`,
      `CREATE INDEX sessions_by_workspace_merged ON sessions(workspace_id, pr_merged_at)
        WHERE pr_merged_at IS NOT NULL`,
      `CREATE TABLE messages (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        workspace_id TEXT NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('user', 'assistant', 'result')),
        author_id TEXT,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) WITHOUT ROWID`,
      `CREATE TABLE tasks (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        id TEXT NOT NULL,
        position INTEGER NOT NULL,
        title TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'in_progress', 'completed')),
        PRIMARY KEY (session_id, id)
      ) WITHOUT ROWID`,
      // Who works in a workspace, kept up to date on every write, so the stats cost one
      // row per person instead of a scan of every session and message of the week.
      `CREATE TABLE workspace_people (
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        user_id TEXT NOT NULL REFERENCES users(id),
        last_session_at TEXT,
        last_prompt_at TEXT,
        active_sessions INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (workspace_id, user_id)
      ) WITHOUT ROWID`,
    ],
  },
  {
    version: 2,
    name: 'agent runs and settings',
    sql: [
      // 'running' while an agent works on the session, so a restart can tell which were cut off.
      `ALTER TABLE sessions ADD COLUMN agent_state TEXT`,
      `CREATE INDEX sessions_running ON sessions(agent_state) WHERE agent_state IS NOT NULL`,
      `CREATE TABLE workspace_settings (
        workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id),
        agent TEXT NOT NULL CHECK (agent IN ('demo', 'command')),
        command TEXT,
        timeout_ms INTEGER
      )`,
    ],
  },
  {
    version: 3,
    name: 'messages in a rowid table; merges index with status',
    sql: [
      // In a WITHOUT ROWID table a message of about 1 KB spilled into an overflow page of its
      // own (a 4x larger database); a rowid table keeps bodies up to about 4 KB in the page.
      `CREATE TABLE messages_new (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        workspace_id TEXT NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('user', 'assistant', 'result')),
        author_id TEXT,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (session_id, seq)
      )`,
      `INSERT INTO messages_new (session_id, seq, workspace_id, type, author_id, body, created_at)
        SELECT session_id, seq, workspace_id, type, author_id, body, created_at FROM messages
        ORDER BY session_id, seq`,
      `DROP TABLE messages`,
      `ALTER TABLE messages_new RENAME TO messages`,
      // mergesPastWeek reads only this index: no lookup of each merged session.
      `DROP INDEX sessions_by_workspace_merged`,
      `CREATE INDEX sessions_merges ON sessions(workspace_id, pr_status, pr_merged_at)`,
    ],
  },
  {
    version: 4,
    name: 'transcripts in files: committed lengths, marks and prompt authors',
    sql: [
      // How many bytes of the session's transcript file are committed; reads stop there.
      `ALTER TABLE sessions ADD COLUMN transcript_bytes INTEGER NOT NULL DEFAULT 0`,
      // Where every 64th message starts in the transcript, so a page is found without
      // reading the file from its start.
      `CREATE TABLE transcript_marks (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        byte_offset INTEGER NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) WITHOUT ROWID`,
      // Who wrote each person's message (prompts and follow-ups); agents' messages have none.
      `CREATE TABLE prompts (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        author_id TEXT NOT NULL REFERENCES users(id),
        PRIMARY KEY (session_id, seq)
      ) WITHOUT ROWID`,
    ],
  },
  {
    version: 5,
    name: 'message bodies moved out to transcript files',
    prepare: moveMessagesToTranscripts,
    sql: [`DROP TABLE messages`],
  },
  {
    version: 6,
    name: 'agent CLI kinds, conversations to resume, and usage per run',
    sql: [
      // SQLite cannot change a CHECK: the table is rebuilt with the new kinds allowed.
      `CREATE TABLE workspace_settings_new (
        workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id),
        agent TEXT NOT NULL CHECK (agent IN ('demo', 'command', 'claude-code', 'codex', 'gemini')),
        command TEXT,
        timeout_ms INTEGER
      )`,
      `INSERT INTO workspace_settings_new (workspace_id, agent, command, timeout_ms)
        SELECT workspace_id, agent, command, timeout_ms FROM workspace_settings`,
      `DROP TABLE workspace_settings`,
      `ALTER TABLE workspace_settings_new RENAME TO workspace_settings`,
      // The kind of the session's latest run, and the CLI's own conversation id with the kind
      // that printed it (a follow-up resumes it only with the same kind).
      `ALTER TABLE sessions ADD COLUMN agent_kind TEXT`,
      `ALTER TABLE sessions ADD COLUMN conversation_id TEXT`,
      `ALTER TABLE sessions ADD COLUMN conversation_kind TEXT`,
      // Usage summed over the session's runs; null until a run reports some.
      `ALTER TABLE sessions ADD COLUMN usage_input INTEGER`,
      `ALTER TABLE sessions ADD COLUMN usage_output INTEGER`,
      `ALTER TABLE sessions ADD COLUMN usage_cache_read INTEGER`,
      `ALTER TABLE sessions ADD COLUMN usage_cache_write INTEGER`,
      `ALTER TABLE sessions ADD COLUMN usage_cost_usd REAL`,
      // One row per run that reported usage: what costPastWeek sums, and what a resumed
      // conversation's earlier runs used.
      `CREATE TABLE agent_runs (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        kind TEXT NOT NULL,
        conversation_id TEXT,
        ended_at TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        cache_read_tokens INTEGER NOT NULL,
        cache_write_tokens INTEGER NOT NULL,
        cost_usd REAL
      )`,
      `CREATE INDEX agent_runs_by_session ON agent_runs(session_id)`,
      `CREATE INDEX agent_runs_cost ON agent_runs(workspace_id, ended_at, cost_usd)`,
    ],
  },
  {
    version: 7,
    name: 'run queue and agent process groups',
    sql: [
      // sessions.agent_state may now also be 'queued': waiting here, first position first.
      `CREATE TABLE run_queue (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        position INTEGER NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('start', 'follow-up')),
        prompt TEXT
      )`,
      // The process group of each run going on, with what identifies its leader, so that a
      // start after a crash can end the groups that are still the runs' (and only those).
      `CREATE TABLE agent_processes (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        pgid INTEGER NOT NULL,
        start_time TEXT,
        boot_id TEXT,
        started_at TEXT NOT NULL
      )`,
    ],
  },
  {
    version: 12,
    name: 'imported agent CLI history',
    sql: [
      // The agent CLIs' own session folders a workspace imports and follows.
      `CREATE TABLE history_sources (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        kind TEXT NOT NULL CHECK (kind IN ('claude-code', 'codex', 'gemini')),
        root_dir TEXT NOT NULL,
        author_id TEXT NOT NULL REFERENCES users(id),
        paused INTEGER NOT NULL DEFAULT 0,
        session_count INTEGER NOT NULL DEFAULT 0,
        message_count INTEGER NOT NULL DEFAULT 0,
        last_import_at TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (workspace_id, kind, root_dir)
      )`,
      // How far each session file was read: messages up to byte_offset are committed in the
      // same write that records it; parser_state is what reading on from there needs.
      // session_id is null for a file whose conversation a session of our own already holds.
      `CREATE TABLE history_files (
        source_id TEXT NOT NULL REFERENCES history_sources(id),
        path TEXT NOT NULL,
        session_id TEXT REFERENCES sessions(id),
        byte_offset INTEGER NOT NULL,
        fingerprint TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ms INTEGER NOT NULL,
        parser_state TEXT,
        PRIMARY KEY (source_id, path)
      )`,
      `CREATE INDEX history_files_by_session ON history_files(session_id)`,
      // Where an imported session came from; null for the sessions Session Desk ran.
      `ALTER TABLE sessions ADD COLUMN source_kind TEXT`,
      `ALTER TABLE sessions ADD COLUMN source_path TEXT`,
      `ALTER TABLE sessions ADD COLUMN source_cwd TEXT`,
      `ALTER TABLE sessions ADD COLUMN source_conversation_id TEXT`,
      `CREATE INDEX sessions_by_conversation ON sessions(conversation_id)`,
    ],
  },
  {
    version: 13,
    name: 'a stopped run marked on its session',
    sql: [
      // 1 while the session's latest run was stopped on request (its result is marked
      // `stopped: true`): the list tells a stop from a success without reading transcripts.
      `ALTER TABLE sessions ADD COLUMN stopped INTEGER`,
    ],
  },
  {
    version: 14,
    name: 'the isolation of agent runs',
    sql: [
      // Whether the latest run of a program went in an operating-system sandbox ('sandbox')
      // or ran as the user without one ('none'); null for sessions no program ran.
      `ALTER TABLE sessions ADD COLUMN isolation TEXT`,
    ],
  },
  {
    version: 15,
    name: "the hosts a workspace's agents may reach",
    sql: [
      // A JSON array of host patterns; null when the workspace leaves the network open.
      `ALTER TABLE workspace_settings ADD COLUMN allowed_hosts TEXT`,
    ],
  },
  {
    version: 16,
    name: 'runs whose cost is unknown',
    sql: [
      // The model a run ran when its cost is unknown because the price table has no price for it.
      `ALTER TABLE agent_runs ADD COLUMN unpriced_model TEXT`,
      // Runs with tokens but no cost, and the JSON array of their unpriced models: the part of
      // the session's usage that usage_cost_usd leaves out. Null while there is none.
      `ALTER TABLE sessions ADD COLUMN usage_unpriced_runs INTEGER`,
      `ALTER TABLE sessions ADD COLUMN usage_unpriced_models TEXT`,
      // Earlier runs of unknown cost are counted; which models they ran was not kept.
      `UPDATE sessions SET usage_unpriced_runs = (
         SELECT count(*) FROM agent_runs r WHERE r.session_id = sessions.id AND r.kind <> 'demo'
           AND r.cost_usd IS NULL
           AND r.input_tokens + r.output_tokens + r.cache_read_tokens + r.cache_write_tokens > 0),
         usage_unpriced_models = '[]'
       WHERE id IN (SELECT session_id FROM agent_runs WHERE kind <> 'demo' AND cost_usd IS NULL
         AND input_tokens + output_tokens + cache_read_tokens + cache_write_tokens > 0)`,
    ],
  },
  {
    version: 17,
    name: 'agents that speak the Agent Client Protocol',
    sql: [
      // SQLite cannot change a CHECK: the table is rebuilt with the `acp` kind allowed, and
      // the ACP agent a workspace chose beside it.
      `CREATE TABLE workspace_settings_new (
        workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id),
        agent TEXT NOT NULL CHECK (agent IN ('demo', 'command', 'claude-code', 'codex', 'gemini', 'acp')),
        command TEXT,
        timeout_ms INTEGER,
        allowed_hosts TEXT,
        acp_agent TEXT
      )`,
      `INSERT INTO workspace_settings_new (workspace_id, agent, command, timeout_ms, allowed_hosts)
        SELECT workspace_id, agent, command, timeout_ms, allowed_hosts FROM workspace_settings`,
      `DROP TABLE workspace_settings`,
      `ALTER TABLE workspace_settings_new RENAME TO workspace_settings`,
      // The ACP agent of the session's latest run, beside its kind (`acp`).
      `ALTER TABLE sessions ADD COLUMN acp_agent TEXT`,
    ],
  },
  {
    version: 18,
    name: "an imported session's status before a queued continuation",
    sql: [
      // A follow-up to an imported session waiting for a place: the status its import gave,
      // which the session keeps if the continuation never starts (a restart in between).
      `ALTER TABLE run_queue ADD COLUMN status_before TEXT`,
    ],
  },
  {
    version: 19,
    name: 'what agents ask before they act, and who answered',
    sql: [
      // Null: `auto`, as before (every tool call allowed inside the sandbox).
      `ALTER TABLE workspace_settings ADD COLUMN approvals TEXT CHECK (approvals IN ('auto', 'ask'))`,
      `ALTER TABLE workspace_settings ADD COLUMN approval_timeout_s INTEGER`,
      // An owner's choice: the key may decide requests, not only list them.
      `ALTER TABLE api_keys ADD COLUMN can_approve INTEGER NOT NULL DEFAULT 0`,
      // tool, options and decided_by are JSON; decided_at is null while the request is pending.
      `CREATE TABLE approvals (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        session_id TEXT NOT NULL REFERENCES sessions(id),
        agent TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        title TEXT NOT NULL,
        tool TEXT NOT NULL,
        options TEXT NOT NULL,
        decided_at TEXT,
        decision TEXT,
        option_id TEXT,
        message TEXT,
        decided_by TEXT
      )`,
      `CREATE INDEX approvals_pending ON approvals(workspace_id, created_at) WHERE decided_at IS NULL`,
      `CREATE INDEX approvals_by_session ON approvals(session_id, created_at)`,
    ],
  },
  {
    version: 20,
    name: 'what a person reads before deciding a request',
    // Null for requests written before: the dashboard shows their tool input instead.
    sql: [`ALTER TABLE approvals ADD COLUMN detail TEXT`],
  },
  {
    version: 21,
    name: 'history sources of any kind the app knows',
    sql: [
      // SQLite cannot change a CHECK: the table is rebuilt without one on its kind, which the
      // API checks against its own list, so a CLI added later needs no rebuild. history_files,
      // which refers to it, is rebuilt first referring to the new table (a rename carries the
      // reference along), so that no row ever refers to a table being dropped.
      `CREATE TABLE history_sources_new (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        kind TEXT NOT NULL,
        root_dir TEXT NOT NULL,
        author_id TEXT NOT NULL REFERENCES users(id),
        paused INTEGER NOT NULL DEFAULT 0,
        session_count INTEGER NOT NULL DEFAULT 0,
        message_count INTEGER NOT NULL DEFAULT 0,
        last_import_at TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (workspace_id, kind, root_dir)
      )`,
      `INSERT INTO history_sources_new SELECT id, workspace_id, kind, root_dir, author_id, paused,
        session_count, message_count, last_import_at, created_at FROM history_sources`,
      `CREATE TABLE history_files_new (
        source_id TEXT NOT NULL REFERENCES history_sources_new(id),
        path TEXT NOT NULL,
        session_id TEXT REFERENCES sessions(id),
        byte_offset INTEGER NOT NULL,
        fingerprint TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ms INTEGER NOT NULL,
        parser_state TEXT,
        PRIMARY KEY (source_id, path)
      )`,
      `INSERT INTO history_files_new SELECT source_id, path, session_id, byte_offset, fingerprint, size,
        mtime_ms, parser_state FROM history_files`,
      `DROP TABLE history_files`,
      `DROP TABLE history_sources`,
      `ALTER TABLE history_sources_new RENAME TO history_sources`,
      `ALTER TABLE history_files_new RENAME TO history_files`,
      `CREATE INDEX history_files_by_session ON history_files(session_id)`,
    ],
  },
  {
    version: 22,
    name: 'sessions pushed from desktops, and keys that may only push',
    sql: [
      // A key made for a desktop's `sessiondesk push`: it may send sessions and read nothing.
      `ALTER TABLE api_keys ADD COLUMN push_only INTEGER NOT NULL DEFAULT 0`,
      // Where a pushed session came from. A session without a row was run here (or imported by
      // the administrator), and a push never writes into it.
      `CREATE TABLE session_origins (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        machine TEXT NOT NULL,
        author_name TEXT NOT NULL,
        author_email TEXT NOT NULL,
        first_pushed_at TEXT NOT NULL,
        pushed_at TEXT NOT NULL
      )`,
    ],
  },
  {
    version: 23,
    name: 'failed sign-ins and API keys counted for every server process',
    // Only a team server's processes share their counts (on PostgreSQL, failure_windows); the
    // desktop is one process and counts in memory. The step is here to keep the two lists alike.
    sql: [],
  },
  {
    version: 24,
    name: 'full-text search of transcripts on PostgreSQL',
    // Nothing here: the desktop's search index is SQLite FTS5 in search.db beside the store. The
    // step exists because the two lists of steps are one (store-postgres/migrations.ts).
    sql: [],
  },
  {
    version: 25,
    name: 'rows keep the order they were made in',
    // Nothing to do here: SQLite's rowid already keeps it. PostgreSQL gains a counter.
    sql: [],
  },
  {
    version: 26,
    name: 'sign-in through an identity provider, and invitations',
    sql: [
      // A sign-in on its way through the identity provider (identity/sign-in-flows.ts): kept in
      // the database so that the provider's answer may reach any server process. The browser
      // holds the handle in a cookie; only hashes of it and of the state are kept. Used once.
      // redirect_uri is the one the provider was sent, which the code's exchange must repeat.
      `CREATE TABLE sign_in_flows (
        handle_hash TEXT PRIMARY KEY,
        state_hash TEXT NOT NULL,
        nonce TEXT NOT NULL,
        code_verifier TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        return_to TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      )`,
      `CREATE INDEX sign_in_flows_by_expiry ON sign_in_flows(expires_at)`,
      // Who a person is at an identity provider (its issuer and their subject there), once
      // their verified email matched an account: the link is preferred to the email afterwards.
      // An account has at most one identity per provider.
      `CREATE TABLE user_identities (
        issuer TEXT NOT NULL,
        subject TEXT NOT NULL,
        user_id TEXT NOT NULL REFERENCES users(id),
        created_at TEXT NOT NULL,
        PRIMARY KEY (issuer, subject),
        UNIQUE (user_id, issuer)
      )`,
      // An owner's invitation of an email that has no account yet: it becomes a membership
      // when an account with that email comes to be.
      `CREATE TABLE invitations (
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        email TEXT NOT NULL,
        invited_by TEXT REFERENCES users(id),
        created_at TEXT NOT NULL,
        PRIMARY KEY (workspace_id, email)
      )`,
      `CREATE INDEX invitations_by_email ON invitations(email)`,
    ],
  },
  {
    version: 27,
    name: 'setup codes any server process accepts',
    // Only a team server's processes share them (on PostgreSQL, setup_codes); the desktop is
    // one process and keeps its code in memory. The step is here to keep the two lists alike.
    sql: [],
  },
  {
    version: 28,
    name: 'who first pushed a session',
    sql: [
      // Only the key that first pushed a session, or the person who made that key, may extend
      // it. A session pushed before this step was pushed by its author, as far as is known.
      `ALTER TABLE session_origins ADD COLUMN pushed_by_key TEXT`,
      `ALTER TABLE session_origins ADD COLUMN pushed_by_user TEXT`,
      `UPDATE session_origins SET pushed_by_user =
        (SELECT author_id FROM sessions WHERE sessions.id = session_origins.session_id)`,
    ],
  },
  {
    version: 29,
    name: 'the folder a pushed session ran in on its desktop',
    // Where its changes are: the team server has the transcript, not the files.
    sql: ['ALTER TABLE session_origins ADD COLUMN folder TEXT'],
  },
  {
    version: 30,
    name: "a workspace's approval rules",
    sql: [
      // A JSON array of { kind?, pattern?, decision }, checked in order before anyone is asked;
      // null when there are none (the approvals column decides every request, as before).
      `ALTER TABLE workspace_settings ADD COLUMN approval_rules TEXT`,
      // The preview of draft rules reads a workspace's latest requests, decided or not.
      `CREATE INDEX approvals_by_workspace ON approvals(workspace_id, created_at)`,
    ],
  },
  {
    version: 31,
    name: 'search finds phrases by the pairs of words next to each other',
    // Nothing here: the desktop's FTS5 index keeps every word's positions. The step changes
    // the team server's index in its database (store-postgres/migrations.ts).
    sql: [],
  },
  {
    version: 32,
    name: 'transcripts compressed with lz4',
    // Nothing here: the desktop's transcripts are files. The step sets how the team server's
    // database compresses its transcript rows (store-postgres/migrations.ts).
    sql: [],
  },
];

export { DatabaseTooNewError };

export function currentVersion(db: Db): number {
  const table = db.first(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
  );
  if (!table) return 0;
  const row = db.first('SELECT max(version) FROM schema_migrations');
  return typeof row?.[0] === 'number' ? row[0] : 0;
}

/** The migrations still to run; throws when the database is newer than the app. */
export function pendingMigrations(db: Db, migrations: Migration[] = MIGRATIONS): Migration[] {
  const found = currentVersion(db);
  const known = migrations.at(-1)?.version ?? 0;
  if (found > known) throw new DatabaseTooNewError(found, known);
  return migrations.filter((m) => m.version > found);
}

/** Runs inside a Store write, so the migration is journaled like any other change. */
export function applyMigration(db: Db, migration: Migration, appliedAt: string): void {
  db.run(
    `CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`,
  );
  for (const statement of migration.sql) db.run(statement);
  db.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
    migration.version,
    migration.name,
    appliedAt,
  ]);
}
