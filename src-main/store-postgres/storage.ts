import type { Sql } from 'postgres';
import type { Repos, Storage } from '../store/storage.js';
import type { TranscriptSource } from '../store/transcript-source.js';
import { postgresApiKeys, postgresAuthSessions, postgresUsers, postgresWorkspaces } from './accounts.js';
import { postgresApprovals } from './approvals.js';
import { postgresDirectory } from './directory.js';
import { postgresHistory } from './history.js';
import { postgresIdentities, postgresInvitations, postgresSignInFlows } from './identities.js';
import { pipelined, type Queryable } from './rows.js';
import { postgresRuns } from './runs.js';
import type { MessageIndexer } from './search.js';
import { postgresSessionOrigins } from './session-origins.js';
import { postgresSessions } from './sessions.js';
import { postgresTranscripts } from './transcripts.js';

/** Every repository on one pool, or on the one transaction a write runs in. */
export function postgresRepos(sql: Queryable, indexer?: MessageIndexer): Repos {
  return {
    users: postgresUsers(sql),
    workspaces: postgresWorkspaces(sql),
    authSessions: postgresAuthSessions(sql),
    apiKeys: postgresApiKeys(sql),
    sessions: postgresSessions(sql, indexer),
    runs: postgresRuns(sql),
    history: postgresHistory(sql),
    approvals: postgresApprovals(sql),
    sessionOrigins: postgresSessionOrigins(sql),
    directory: postgresDirectory(sql),
    signInFlows: postgresSignInFlows(sql),
    identities: postgresIdentities(sql),
    invitations: postgresInvitations(sql),
  };
}

/**
 * A team server's storage on PostgreSQL: reads on the pool, each write one transaction
 * (READ COMMITTED, PostgreSQL's default: an append locks its session's row, so two server
 * processes writing one session take turns) whose statements that answer nothing the write
 * needs are pipelined (`send`: a follow-up's three writes took some 40 round trips, each a
 * write to the socket and a wake-up of the database's process, the most of the server's CPU
 * per follow-up), and the transcripts in `transcript_chunks`. With
 * `indexer`, each message appended goes into the search index in its append's transaction;
 * without, sessions fall behind and the search index's catch-up brings them up to date.
 */
export function createPostgresStorage(
  sql: Sql,
  options: { indexer?: MessageIndexer } = {},
): Storage & { transcripts: TranscriptSource } {
  return {
    repos: postgresRepos(sql, options.indexer),
    write: (fn) =>
      sql.begin((tx) => pipelined(tx, () => fn(postgresRepos(tx, options.indexer)))) as ReturnType<typeof fn>,
    transcripts: postgresTranscripts(sql, postgresRepos),
  };
}
