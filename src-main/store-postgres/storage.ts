import type { Sql } from 'postgres';
import type { Repos, Storage } from '../store/storage.js';
import type { TranscriptSource } from '../store/transcript-source.js';
import { postgresApiKeys, postgresAuthSessions, postgresUsers, postgresWorkspaces } from './accounts.js';
import { postgresApprovals } from './approvals.js';
import { postgresDirectory } from './directory.js';
import { postgresHistory } from './history.js';
import type { Queryable } from './rows.js';
import { postgresRuns } from './runs.js';
import { postgresSessionOrigins } from './session-origins.js';
import { postgresSessions } from './sessions.js';
import { postgresTranscripts } from './transcripts.js';

/** Every repository on one pool, or on the one transaction a write runs in. */
export function postgresRepos(sql: Queryable): Repos {
  return {
    users: postgresUsers(sql),
    workspaces: postgresWorkspaces(sql),
    authSessions: postgresAuthSessions(sql),
    apiKeys: postgresApiKeys(sql),
    sessions: postgresSessions(sql),
    runs: postgresRuns(sql),
    history: postgresHistory(sql),
    approvals: postgresApprovals(sql),
    sessionOrigins: postgresSessionOrigins(sql),
    directory: postgresDirectory(sql),
  };
}

/**
 * A team server's storage on PostgreSQL: reads on the pool, each write one transaction
 * (READ COMMITTED, PostgreSQL's default: an append locks its session's row, so two server
 * processes writing one session take turns), and the transcripts in `transcript_chunks`.
 */
export function createPostgresStorage(sql: Sql): Storage & { transcripts: TranscriptSource } {
  return {
    repos: postgresRepos(sql),
    write: (fn) => sql.begin((tx) => fn(postgresRepos(tx))) as ReturnType<typeof fn>,
    transcripts: postgresTranscripts(sql, postgresRepos),
  };
}
