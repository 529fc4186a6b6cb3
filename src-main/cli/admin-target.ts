import { existsSync } from 'node:fs';
import { z } from 'zod';
import {
  AgentSettingsResponseSchema,
  ApiKeySummarySchema,
  CreatedApiKeySchema,
  InvitationResponseSchema,
  UserSchema,
  WorkspaceSchema,
  type AgentSettings,
  type ApiKeySummary,
  type CreatedApiKey,
  type User,
  type Workspace,
} from '../../src-shared/accounts.js';
import { ErrorResponseSchema } from '../../src-shared/errors.js';
import { createAccounts } from '../accounts/accounts.js';
import {
  createDirectory,
  UserListingSchema,
  WorkspaceListingSchema,
  type UserListing,
  type WorkspaceListing,
} from '../accounts/directory.js';
import { checkAgentChoice, localAgentFinder } from '../agents/run/agent-choice.js';
import { agentConfigFromEnv, type AgentConfig } from '../agents/run/config.js';
import { agentInForce, type AgentInForce } from '../agents/run/workspace-agents.js';
import { defaultSandboxRoot } from '../agents/sandbox/sandbox-root.js';
import { systemClock, type Logger } from '../clock.js';
import { DataDirLockedError, lockHolder } from '../store/lock.js';
import { storageOf } from '../store/sqljs-storage.js';
import type { Storage } from '../store/storage.js';
import { Store } from '../store/store.js';
import { ADMIN_PROOF_PATH, isValidProof, newChallenge } from '../admin-proof.js';
import { readServerInfo } from '../server-file.js';
import { secureDataDir } from '../data-dir-permissions.js';
import { ADMIN_TOKEN_HEADER } from '../server/routes/admin.js';

/** The account operations the CLI runs, on the data directory or through its running server. */
export interface AdminTarget {
  createUser(input: {
    email: string;
    name: string;
    password: string;
    imageUrl?: string | undefined;
  }): Promise<User>;
  /** A workspace, with the agent it runs (checked first, as the server checks a choice). */
  createWorkspace(input: {
    name: string;
    ownerEmail: string;
    agent?: AgentSettings['agent'] | undefined;
    acpAgent?: string | undefined;
  }): Promise<{ workspace: Workspace; agent: AgentInForce }>;
  /** The account with that email joins; an email without one is invited (`invited: true`). */
  addMember(input: { organizationId: string; email: string }): Promise<{ email: string; invited: boolean }>;
  createKey(input: {
    organizationId: string;
    label?: string | undefined;
    canApprove?: boolean | undefined;
    pushOnly?: boolean | undefined;
  }): Promise<CreatedApiKey>;
  listKeys(organizationId: string): Promise<ApiKeySummary[]>;
  revokeKey(input: { organizationId: string; keyId: string }): Promise<void>;
  /** Removes the member, or withdraws the email's invitation: says which. */
  removeMember(input: { organizationId: string; email: string }): Promise<'member' | 'invitation'>;
  setPassword(input: { email: string; password: string }): Promise<void>;
  listUsers(): Promise<UserListing[]>;
  listWorkspaces(): Promise<WorkspaceListing[]>;
  close(): Promise<void>;
}

export class CliError extends Error {}

/**
 * The data directory a command works on that has nothing to do in a new one: refused when it is
 * not there, so that a mistyped --data-dir, or a command that fails, never leaves an empty data
 * directory behind.
 */
export function existingDataDir(dataDir: string): string {
  if (!existsSync(dataDir)) {
    throw new CliError(
      `There is no data directory at ${dataDir}. Check --data-dir and SESSIONDESK_DATA_DIR.`,
    );
  }
  return dataDir;
}

/** How long a command waits for another short command holding the data directory. */
const LOCK_WAIT_MS = 15_000;

/** Either the running server that holds the data directory, or the directory itself, opened. */
export type DataDirAccess =
  { kind: 'server'; url: string; adminToken: string } | { kind: 'store'; store: Store };

/**
 * When a server holds the data directory, talks to it over loopback (so it sees the
 * change at once and nothing writes the files behind its back); otherwise opens the
 * directory itself, taking its lock for the duration of the command.
 */
export async function reachDataDir(dataDir: string, logger: Logger): Promise<DataDirAccess> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const holder = lockHolder(dataDir);
    if (holder !== null) {
      const server = readServerInfo(dataDir);
      if (server && server.info.pid === holder) {
        await requireServerProof(dataDir, server.info.url, server.adminToken);
        return { kind: 'server', url: server.info.url, adminToken: server.adminToken };
      }
      // Another command (or a server still starting) has it: they finish quickly, so wait.
      if (Date.now() > deadline) {
        throw new CliError(
          `The data directory ${dataDir} has been held by process ${holder} for ${LOCK_WAIT_MS / 1000} s ` +
            'and it is not a Session Desk server this command can reach. If that process is stuck, stop it.',
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    try {
      secureDataDir(dataDir, logger);
      return { kind: 'store', store: await Store.open({ dataDir, clock: systemClock, logger }) };
    } catch (err) {
      // Someone took the lock between our look and our open: look again.
      if (err instanceof DataDirLockedError && Date.now() <= deadline) continue;
      throw err;
    }
  }
}

const PROOF_TIMEOUT_MS = 10_000;

/**
 * Checks that what listens at `url` is the server holding the data directory: it must
 * answer a fresh challenge with an HMAC keyed by the admin token. Only the challenge is
 * sent; on any failure nothing secret ever is.
 */
export async function requireServerProof(dataDir: string, url: string, adminToken: string): Promise<void> {
  const challenge = newChallenge();
  let port: number;
  let proof: unknown;
  try {
    const target = new URL(`${ADMIN_PROOF_PATH}?challenge=${challenge}`, url);
    port = Number(target.port);
    const response = await fetch(target, {
      signal: AbortSignal.timeout(PROOF_TIMEOUT_MS),
      redirect: 'error',
    });
    proof = response.ok ? ((await response.json()) as { proof?: unknown }).proof : undefined;
  } catch {
    proof = undefined;
    port = 0;
  }
  if (!isValidProof(adminToken, challenge, port, proof)) {
    throw new CliError(
      `The program listening at ${url} (from ${dataDir}/server.json) did not prove it is the Session Desk ` +
        'server holding this data directory, so nothing was sent to it. If the server is gone, stop the ' +
        'process that holds the data directory lock; then try again.',
    );
  }
}

export async function openAdminTarget(dataDir: string, logger: Logger): Promise<AdminTarget> {
  const access = await reachDataDir(dataDir, logger);
  if (access.kind === 'server') return remoteTarget(access.url, access.adminToken);
  const { store } = access;
  return storageTarget(storageOf(store), dataDir, () => store.close({ snapshot: false }));
}

function invitedOrMember(added: { member: { email: string } } | { invitation: { email: string } }): {
  email: string;
  invited: boolean;
} {
  return 'invitation' in added
    ? { email: added.invitation.email, invited: true }
    : { email: added.member.email, invited: false };
}

/**
 * The account operations on a Storage: the data directory's store (no server holds it), or a
 * team server's database, whose servers `credentialsEnded` tells of a revoked key or a removed
 * member. An agent chosen is looked for as a server on `dataDir` would look for it, in this
 * environment.
 */
export function storageTarget(
  storage: Storage,
  dataDir: string,
  close: () => Promise<void>,
  credentialsEnded: () => Promise<void> = async () => {},
): AdminTarget {
  const accounts = createAccounts(storage, systemClock);
  const directory = createDirectory(storage.repos);
  return {
    createUser: (input) => accounts.createUser(input),
    async createWorkspace(input) {
      const config = localAgentConfig();
      checkAgentChoice(localAgentFinder(dataDir, localSandboxRoot(dataDir)), process.env, input);
      const workspace = await accounts.createWorkspace(input);
      const own = await storage.repos.workspaces.settings(workspace.organizationId);
      return { workspace, agent: agentInForce(own, config.defaultCommand) };
    },
    addMember: async (input) => invitedOrMember(await accounts.addMemberOrInvite(input)),
    createKey: (input) => accounts.createKey(input),
    listKeys: async (organizationId) => accounts.listKeys(organizationId),
    revokeKey: async (input) => {
      await accounts.revokeKey(input);
      await credentialsEnded();
    },
    removeMember: async (input) => {
      const removed = await accounts.removeMemberByEmail(input);
      await credentialsEnded();
      return removed;
    },
    setPassword: async (input) => {
      await accounts.setPassword(input);
      await credentialsEnded();
    },
    listUsers: () => directory.users(),
    listWorkspaces: () => directory.workspaces(),
    close,
  };
}

/** The agents' settings a server started from this environment would have (a bad one is a sentence). */
function localAgentConfig(): AgentConfig {
  try {
    return agentConfigFromEnv(process.env);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

/** Where a server on `dataDir` started from this environment keeps sessions' sandboxes. */
export function localSandboxRoot(dataDir: string): string {
  return localAgentConfig().sandboxRoot ?? defaultSandboxRoot(dataDir);
}

/** A failed admin request in a line: the server's message and details, or its status. */
export function describeAdminError(status: number, text: string): string {
  const parsed = ErrorResponseSchema.safeParse(safeJson(text));
  return parsed.success
    ? [
        parsed.data.error.message,
        ...(parsed.data.error.details ?? []).map((d) => `${d.path} ${d.message}`),
      ].join('; ')
    : `HTTP ${status}`;
}

export function unreachable(baseUrl: string, err: unknown): CliError {
  return new CliError(
    `The server at ${baseUrl} holds the data directory but did not answer ` +
      `(${err instanceof Error ? err.message : String(err)}). Stop it and try again.`,
  );
}

function remoteTarget(baseUrl: string, adminToken: string): AdminTarget {
  async function call<S extends z.ZodType>(
    method: string,
    path: string,
    schema: S,
    body?: unknown,
  ): Promise<z.infer<S>> {
    let response: Response;
    try {
      response = await fetch(new URL(path, baseUrl), {
        method,
        headers: {
          [ADMIN_TOKEN_HEADER]: adminToken,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw unreachable(baseUrl, err);
    }
    const text = await response.text();
    if (!response.ok) throw new CliError(describeAdminError(response.status, text));
    return schema.parse(response.status === 204 ? null : safeJson(text));
  }
  return {
    createUser: async (input) =>
      (await call('POST', '/api/admin/users', z.object({ user: UserSchema }), input)).user,
    createWorkspace: (input) =>
      call(
        'POST',
        '/api/admin/workspaces',
        z.object({
          workspace: WorkspaceSchema,
          agent: AgentSettingsResponseSchema.pick({ settings: true, source: true }),
        }),
        input,
      ),
    addMember: async (input) =>
      invitedOrMember(
        await call(
          'POST',
          '/api/admin/members',
          z.union([z.object({ member: z.object({ email: z.string() }) }), InvitationResponseSchema]),
          input,
        ),
      ),
    createKey: async (input) =>
      (await call('POST', '/api/admin/keys', z.object({ key: CreatedApiKeySchema }), input)).key,
    listKeys: async (organizationId) =>
      (
        await call(
          'GET',
          `/api/admin/keys?organizationId=${encodeURIComponent(organizationId)}`,
          z.object({ keys: z.array(ApiKeySummarySchema) }),
        )
      ).keys,
    revokeKey: async (input) => {
      await call('POST', '/api/admin/keys/revoke', z.null(), input);
    },
    removeMember: async (input) =>
      (
        await call(
          'POST',
          '/api/admin/members/remove',
          z.object({ removed: z.enum(['member', 'invitation']) }),
          input,
        )
      ).removed,
    setPassword: async (input) => {
      await call('POST', '/api/admin/users/password', z.null(), input);
    },
    listUsers: async () =>
      (await call('GET', '/api/admin/users', z.object({ users: z.array(UserListingSchema) }))).users,
    listWorkspaces: async () =>
      (await call('GET', '/api/admin/workspaces', z.object({ workspaces: z.array(WorkspaceListingSchema) })))
        .workspaces,
    close: async () => undefined,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
