import type { Sql } from 'postgres';
import { DatabaseTooNewError } from '../store/errors.js';

/**
 * The schema on PostgreSQL: the same numbered steps as store/migrations.ts (sql.js), with the
 * same versions and names, their SQL said in PostgreSQL's words. A step of the one is a step of
 * the other: a new migration is added to both, with the same number (a test compares them).
 * Append-only, like the sql.js list: never edit a step that has shipped.
 *
 * Types: TEXT where sql.js has TEXT (timestamps too: the repositories write `toISOString()`
 * strings and compare them as text, in keyset cursors and week windows, on both databases);
 * INTEGER for counts and positions; BIGINT for bytes, offsets, token sums and epoch
 * milliseconds, which outgrow 32 bits; BOOLEAN for the flags sql.js keeps as 0 and 1; DOUBLE
 * PRECISION for REAL, and for history_files.mtime_ms: a file's mtime (fs.Stats.mtimeMs) has a
 * fraction of a millisecond, which SQLite keeps as REAL in its INTEGER column and BIGINT refuses.
 * Steps that only rebuilt a table because SQLite cannot alter it say so.
 */
export interface PostgresMigration {
  version: number;
  name: string;
  sql: string[];
}

/** The step from which transcript rows are compressed with lz4 where PostgreSQL has it. */
export const LZ4_TRANSCRIPTS_VERSION = 32;

export const POSTGRES_MIGRATIONS: PostgresMigration[] = [
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
      `CREATE TABLE workspaces (id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at TEXT NOT NULL)`,
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
      `CREATE INDEX sessions_by_workspace_created ON sessions(workspace_id, created_at DESC, id DESC)`,
      `CREATE INDEX sessions_by_workspace_status ON sessions(workspace_id, status, author_id)`,
      `CREATE INDEX sessions_by_workspace_merged ON sessions(workspace_id, pr_merged_at)
        WHERE pr_merged_at IS NOT NULL`,
      // Dropped again by step 5, as in sql.js: no PostgreSQL database ever holds a row of it.
      `CREATE TABLE messages (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        workspace_id TEXT NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('user', 'assistant', 'result')),
        author_id TEXT,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
      )`,
      `CREATE TABLE tasks (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        id TEXT NOT NULL,
        position INTEGER NOT NULL,
        title TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'in_progress', 'completed')),
        PRIMARY KEY (session_id, id)
      )`,
      `CREATE TABLE workspace_people (
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        user_id TEXT NOT NULL REFERENCES users(id),
        last_session_at TEXT,
        last_prompt_at TEXT,
        active_sessions INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (workspace_id, user_id)
      )`,
    ],
  },
  {
    version: 2,
    name: 'agent runs and settings',
    sql: [
      `ALTER TABLE sessions ADD COLUMN agent_state TEXT`,
      `CREATE INDEX sessions_running ON sessions(agent_state) WHERE agent_state IS NOT NULL`,
      // Named, so that step 6 can replace the check in place.
      `CREATE TABLE workspace_settings (
        workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id),
        agent TEXT NOT NULL CONSTRAINT workspace_settings_agent_check CHECK (agent IN ('demo', 'command')),
        command TEXT,
        timeout_ms INTEGER
      )`,
    ],
  },
  {
    version: 3,
    name: 'messages in a rowid table; merges index with status',
    sql: [
      // sql.js rebuilt messages here for SQLite's page layout; PostgreSQL has no such concern.
      `DROP INDEX sessions_by_workspace_merged`,
      `CREATE INDEX sessions_merges ON sessions(workspace_id, pr_status, pr_merged_at)`,
    ],
  },
  {
    version: 4,
    name: 'transcripts in files: committed lengths, marks and prompt authors',
    sql: [
      `ALTER TABLE sessions ADD COLUMN transcript_bytes BIGINT NOT NULL DEFAULT 0`,
      `CREATE TABLE transcript_marks (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        byte_offset BIGINT NOT NULL,
        PRIMARY KEY (session_id, seq)
      )`,
      `CREATE TABLE prompts (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        author_id TEXT NOT NULL REFERENCES users(id),
        PRIMARY KEY (session_id, seq)
      )`,
    ],
  },
  {
    version: 5,
    name: 'message bodies moved out to transcript files',
    sql: [
      `DROP TABLE messages`,
      // A transcript's bytes, exactly those sql.js appends to its file (store/transcript-format.ts),
      // one row per write that appended to it, starting at start_offset; rows are cut at 1 MiB so
      // a read from a mark never fetches more than that before it. The append commits in the
      // same transaction as sessions.transcript_bytes: no file to reconcile. See the README.
      `CREATE TABLE transcript_chunks (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        start_offset BIGINT NOT NULL,
        bytes BYTEA NOT NULL,
        PRIMARY KEY (session_id, start_offset)
      )`,
    ],
  },
  {
    version: 6,
    name: 'agent CLI kinds, conversations to resume, and usage per run',
    sql: [
      `ALTER TABLE workspace_settings DROP CONSTRAINT workspace_settings_agent_check,
        ADD CONSTRAINT workspace_settings_agent_check
          CHECK (agent IN ('demo', 'command', 'claude-code', 'codex', 'gemini'))`,
      `ALTER TABLE sessions ADD COLUMN agent_kind TEXT, ADD COLUMN conversation_id TEXT,
        ADD COLUMN conversation_kind TEXT, ADD COLUMN usage_input BIGINT, ADD COLUMN usage_output BIGINT,
        ADD COLUMN usage_cache_read BIGINT, ADD COLUMN usage_cache_write BIGINT,
        ADD COLUMN usage_cost_usd DOUBLE PRECISION`,
      `CREATE TABLE agent_runs (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        kind TEXT NOT NULL,
        conversation_id TEXT,
        ended_at TEXT NOT NULL,
        input_tokens BIGINT NOT NULL,
        output_tokens BIGINT NOT NULL,
        cache_read_tokens BIGINT NOT NULL,
        cache_write_tokens BIGINT NOT NULL,
        cost_usd DOUBLE PRECISION
      )`,
      `CREATE INDEX agent_runs_by_session ON agent_runs(session_id)`,
      `CREATE INDEX agent_runs_cost ON agent_runs(workspace_id, ended_at, cost_usd)`,
    ],
  },
  {
    version: 7,
    name: 'run queue and agent process groups',
    sql: [
      `CREATE TABLE run_queue (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        position INTEGER NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('start', 'follow-up')),
        prompt TEXT
      )`,
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
      `CREATE TABLE history_sources (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        kind TEXT NOT NULL CHECK (kind IN ('claude-code', 'codex', 'gemini')),
        root_dir TEXT NOT NULL,
        author_id TEXT NOT NULL REFERENCES users(id),
        paused BOOLEAN NOT NULL DEFAULT false,
        session_count INTEGER NOT NULL DEFAULT 0,
        message_count INTEGER NOT NULL DEFAULT 0,
        last_import_at TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (workspace_id, kind, root_dir)
      )`,
      `CREATE TABLE history_files (
        source_id TEXT NOT NULL REFERENCES history_sources(id),
        path TEXT NOT NULL,
        session_id TEXT REFERENCES sessions(id),
        byte_offset BIGINT NOT NULL,
        fingerprint TEXT NOT NULL,
        size BIGINT NOT NULL,
        mtime_ms DOUBLE PRECISION NOT NULL,
        parser_state TEXT,
        PRIMARY KEY (source_id, path)
      )`,
      `CREATE INDEX history_files_by_session ON history_files(session_id)`,
      `ALTER TABLE sessions ADD COLUMN source_kind TEXT, ADD COLUMN source_path TEXT,
        ADD COLUMN source_cwd TEXT, ADD COLUMN source_conversation_id TEXT`,
      `CREATE INDEX sessions_by_conversation ON sessions(conversation_id)`,
    ],
  },
  {
    version: 13,
    name: 'a stopped run marked on its session',
    sql: [`ALTER TABLE sessions ADD COLUMN stopped BOOLEAN`],
  },
  {
    version: 14,
    name: 'the isolation of agent runs',
    sql: [`ALTER TABLE sessions ADD COLUMN isolation TEXT`],
  },
  {
    version: 15,
    name: "the hosts a workspace's agents may reach",
    sql: [`ALTER TABLE workspace_settings ADD COLUMN allowed_hosts TEXT`],
  },
  {
    version: 16,
    name: 'runs whose cost is unknown',
    sql: [
      `ALTER TABLE agent_runs ADD COLUMN unpriced_model TEXT`,
      `ALTER TABLE sessions ADD COLUMN usage_unpriced_runs INTEGER, ADD COLUMN usage_unpriced_models TEXT`,
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
      `ALTER TABLE workspace_settings DROP CONSTRAINT workspace_settings_agent_check,
        ADD CONSTRAINT workspace_settings_agent_check
          CHECK (agent IN ('demo', 'command', 'claude-code', 'codex', 'gemini', 'acp')),
        ADD COLUMN acp_agent TEXT`,
      `ALTER TABLE sessions ADD COLUMN acp_agent TEXT`,
    ],
  },
  {
    version: 18,
    name: "an imported session's status before a queued continuation",
    sql: [`ALTER TABLE run_queue ADD COLUMN status_before TEXT`],
  },
  {
    version: 19,
    name: 'what agents ask before they act, and who answered',
    sql: [
      `ALTER TABLE workspace_settings ADD COLUMN approvals TEXT CHECK (approvals IN ('auto', 'ask')),
        ADD COLUMN approval_timeout_s INTEGER`,
      `ALTER TABLE api_keys ADD COLUMN can_approve BOOLEAN NOT NULL DEFAULT false`,
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
    sql: [`ALTER TABLE approvals ADD COLUMN detail TEXT`],
  },
  {
    version: 21,
    name: 'history sources of any kind the app knows',
    sql: [`ALTER TABLE history_sources DROP CONSTRAINT history_sources_kind_check`],
  },
  {
    version: 22,
    name: 'sessions pushed from desktops, and keys that may only push',
    sql: [
      `ALTER TABLE api_keys ADD COLUMN push_only BOOLEAN NOT NULL DEFAULT false`,
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
    sql: [
      // One row per key in a running window (server/auth/rate-limit.ts): the processes of a
      // team server count each other's failures. reset_at is epoch milliseconds; the index
      // serves the deletion of ended windows.
      `CREATE TABLE failure_windows (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        failures INTEGER NOT NULL,
        reset_at BIGINT NOT NULL,
        PRIMARY KEY (scope, key)
      )`,
      `CREATE INDEX failure_windows_by_end ON failure_windows(reset_at)`,
    ],
  },
  {
    version: 24,
    name: 'full-text search of transcripts on PostgreSQL',
    sql: [
      // How many of a session's messages are in search_pieces (no row: none). A session's
      // messages go in in order, each in the transaction that appends it, or by the catch-up
      // indexer for the messages written before this step.
      `CREATE TABLE search_sessions (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        indexed INTEGER NOT NULL
      )`,
      // A piece of a message's searchable text (src-main/search/message-text.ts) as lexemes;
      // the text itself is read from the transcript for a hit's snippet. frame_offset is where
      // the message's frame starts, piece_start where a large message's piece starts in it.
      `CREATE TABLE search_pieces (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        message_index INTEGER NOT NULL,
        chunk INTEGER NOT NULL,
        frame_offset BIGINT NOT NULL,
        piece_start JSONB,
        written BIGSERIAL NOT NULL,
        body TSVECTOR NOT NULL,
        PRIMARY KEY (session_id, message_index, chunk)
      )`,
      // Written straight into the index, not through GIN's pending list: a search reads the
      // whole pending list, up to 4 MB of it, which made a one-hit search some ten times slower.
      `CREATE INDEX search_pieces_body ON search_pieces USING GIN (body) WITH (fastupdate = off)`,
      // Newest first, for a search matching more pieces than are ranked.
      `CREATE INDEX search_pieces_written ON search_pieces (written)`,
    ],
  },
  {
    version: 25,
    name: 'rows keep the order they were made in',
    // Rows made within one millisecond (processes writing at once, a clock that stood still)
    // share created_at; sql.js lists them by rowid, in the order they were made. Random ids
    // cannot break that tie: a counter can. Existing rows are numbered in their stored order.
    sql: ['users', 'workspaces', 'memberships', 'api_keys', 'approvals'].map(
      (table) => `ALTER TABLE ${table} ADD COLUMN made_order BIGINT GENERATED ALWAYS AS IDENTITY`,
    ),
  },
  {
    version: 26,
    name: 'sign-in through an identity provider, and invitations',
    // As on sql.js (store/migrations.ts says what each table is for).
    sql: [
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
      `CREATE TABLE user_identities (
        issuer TEXT NOT NULL,
        subject TEXT NOT NULL,
        user_id TEXT NOT NULL REFERENCES users(id),
        created_at TEXT NOT NULL,
        PRIMARY KEY (issuer, subject),
        UNIQUE (user_id, issuer)
      )`,
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
    sql: [
      // A server with a public URL prints a setup code instead of a URL with a token
      // (server/auth/setup-code.ts); a person types it in, and the proxy may hand the request
      // to any process. Only the hash is kept; expires_at is epoch milliseconds.
      `CREATE TABLE setup_codes (
        code_hash TEXT PRIMARY KEY,
        expires_at BIGINT NOT NULL
      )`,
    ],
  },
  {
    version: 28,
    name: 'who first pushed a session',
    sql: [
      // As store/migrations.ts: the key that first pushed a session and the person who made it.
      `ALTER TABLE session_origins ADD COLUMN pushed_by_key TEXT`,
      `ALTER TABLE session_origins ADD COLUMN pushed_by_user TEXT`,
      `UPDATE session_origins SET pushed_by_user =
        (SELECT author_id FROM sessions WHERE sessions.id = session_origins.session_id)`,
    ],
  },
  {
    version: 29,
    name: 'the folder a pushed session ran in on its desktop',
    sql: ['ALTER TABLE session_origins ADD COLUMN folder TEXT'],
  },
  {
    version: 30,
    name: "a workspace's approval rules",
    // As store/migrations.ts: the rules as a JSON array, null when there are none, and the
    // index the preview of draft rules reads a workspace's latest requests by.
    sql: [
      `ALTER TABLE workspace_settings ADD COLUMN approval_rules TEXT`,
      `CREATE INDEX approvals_by_workspace ON approvals(workspace_id, created_at)`,
    ],
  },
  {
    version: 31,
    name: 'search finds phrases by the pairs of words next to each other',
    sql: [
      // Each piece gains the pairs of words next to each other (search/postgres-text.ts): a
      // phrase of two words is one lexeme in an index instead of every piece holding both words
      // read and checked for their order. The pieces made before are dropped and made again,
      // with their pairs, by the catch-up indexer (search/postgres-search-index.ts).
      `DROP TABLE search_sessions`,
      `TRUNCATE search_pieces`,
      `ALTER TABLE search_pieces ADD COLUMN pairs TSVECTOR NOT NULL`,
      `CREATE INDEX search_pieces_pairs ON search_pieces USING GIN (pairs) WITH (fastupdate = off)`,
      // How many of a session's messages are in search_pieces, beside the count it is measured
      // against: the sessions behind are found through a partial index, so that every search's
      // "is the index complete" costs nothing while none is.
      `ALTER TABLE sessions ADD COLUMN search_indexed INTEGER NOT NULL DEFAULT 0`,
      `CREATE INDEX sessions_search_behind ON sessions (workspace_id) WHERE search_indexed < message_count`,
    ],
  },
  {
    version: LZ4_TRANSCRIPTS_VERSION,
    name: 'transcripts compressed with lz4',
    sql: [
      // A search hit reads its piece from the middle of a transcript row, which PostgreSQL
      // decompresses from the row's start: lz4 does it some 4x faster than the default pglz
      // (0.4 against 2 ms to the end of a 1 MiB row), at 8% more space. Rows written from now
      // on; the ones before keep pglz. A PostgreSQL built without lz4 refuses the method, and
      // keeps pglz: everything works as before, more slowly (`doctor --database` says which).
      `DO $$ BEGIN
        EXECUTE 'ALTER TABLE transcript_chunks ALTER COLUMN bytes SET COMPRESSION lz4';
      EXCEPTION WHEN feature_not_supported THEN NULL;
      END $$`,
    ],
  },
];

/**
 * The key of the advisory lock every process takes before it migrates ("SDSCHMA" in ASCII):
 * team servers started together on one database apply each step once, one after the other.
 */
const MIGRATION_LOCK = '23437547468770625';

const SCHEMA_MIGRATIONS = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`;

/** The newest step recorded, 0 for an empty database. */
export async function currentPostgresVersion(sql: Sql): Promise<number> {
  const [table] = await sql<
    { found: boolean }[]
  >`SELECT to_regclass('schema_migrations') IS NOT NULL AS found`;
  if (!table?.found) return 0;
  const [row] = await sql<
    { version: number }[]
  >`SELECT coalesce(max(version), 0) AS version FROM schema_migrations`;
  return row?.version ?? 0;
}

export interface MigrateOptions {
  /** When each step is recorded as applied. */
  now: () => Date;
  migrations?: PostgresMigration[];
}

/**
 * Brings the database to the newest step: each pending step in a transaction of its own, which
 * takes the advisory lock first and reads the version under it, so that of several processes
 * migrating at once each step is applied by exactly one. Returns the versions this call applied;
 * throws DatabaseTooNewError for a database a newer Session Desk has migrated.
 */
export async function migratePostgres(sql: Sql, options: MigrateOptions): Promise<number[]> {
  const migrations = options.migrations ?? POSTGRES_MIGRATIONS;
  const known = migrations.at(-1)?.version ?? 0;
  const applied: number[] = [];
  for (;;) {
    const step = await sql.begin(async (tx) => {
      await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      await tx.unsafe(SCHEMA_MIGRATIONS);
      const [row] = await tx<{ version: number }[]>`
        SELECT coalesce(max(version), 0) AS version FROM schema_migrations`;
      const found = row?.version ?? 0;
      if (found > known) throw new DatabaseTooNewError(found, known);
      const next = migrations.find((m) => m.version > found);
      if (!next) return null;
      for (const statement of next.sql) await tx.unsafe(statement);
      await tx`INSERT INTO schema_migrations (version, name, applied_at)
        VALUES (${next.version}, ${next.name}, ${options.now().toISOString()})`;
      return next.version;
    });
    if (step === null) return applied;
    applied.push(step);
  }
}
