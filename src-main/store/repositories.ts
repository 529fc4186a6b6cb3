import { createApprovalsRepository } from './approvals.js';
import { createApiKeysRepository, createAuthSessionsRepository } from './credentials.js';
import { createDirectoryRepository } from './directory.js';
import { createHistoryRepository } from './history.js';
import {
  createIdentitiesRepository,
  createInvitationsRepository,
  createSignInFlowsRepository,
} from './identities.js';
import { createRunsRepository } from './runs.js';
import { createSessionOriginsRepository } from './session-origins.js';
import { createSessionsRepository } from './sessions.js';
import type { Db } from './sqljs.js';
import { createUsersRepository } from './users.js';
import { createWorkspacesRepository } from './workspaces.js';

export function createRepositories(db: Db) {
  return {
    users: createUsersRepository(db),
    workspaces: createWorkspacesRepository(db),
    authSessions: createAuthSessionsRepository(db),
    apiKeys: createApiKeysRepository(db),
    sessions: createSessionsRepository(db),
    runs: createRunsRepository(db),
    history: createHistoryRepository(db),
    approvals: createApprovalsRepository(db),
    sessionOrigins: createSessionOriginsRepository(db),
    directory: createDirectoryRepository(db),
    signInFlows: createSignInFlowsRepository(db),
    identities: createIdentitiesRepository(db),
    invitations: createInvitationsRepository(db),
  };
}
export type Repositories = ReturnType<typeof createRepositories>;
