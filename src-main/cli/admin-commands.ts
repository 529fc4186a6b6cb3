import {
  AddMemberBodySchema,
  CreateKeyBodySchema,
  CreateUserBodySchema,
  CreateWorkspaceBodySchema,
  SetPasswordBodySchema,
} from '../../src-shared/accounts.js';
import { resolveDataDir } from '../paths.js';
import { existingDataDir, openAdminTarget, storageTarget, type AdminTarget } from './admin-target.js';
import { parse, print, required, stderrLogger, validate } from './command-line.js';
import { databaseUrlOf, openTeamStorage } from './team-database.js';
import { agentSentence } from './agent-sentence.js';
import type { CommandName } from './usage.js';

/**
 * The account commands (`user`, `workspace`, `member`, `key`): each checks its options with the
 * server's own schemas, then does its one operation on the data directory or through the
 * server that holds it (admin-target.ts decides which), and prints the result or a table.
 */

/**
 * Runs `run` on the team database when one is given (`--database`, SESSIONDESK_DATABASE_URL),
 * else on the data directory. Only `user create` (`makes` true) starts a new data directory:
 * every other command needs what one already holds, and refuses a directory that is not there.
 */
async function withTarget(
  command: CommandName,
  values: { 'data-dir'?: unknown; database?: unknown },
  run: (target: AdminTarget) => Promise<void>,
  makes = false,
): Promise<void> {
  const databaseUrl = databaseUrlOf(values.database, command);
  const dataDir = resolveDataDir(values['data-dir'] as string | undefined);
  let target: AdminTarget;
  if (databaseUrl !== undefined) {
    const team = await openTeamStorage(databaseUrl);
    target = storageTarget(team.storage, dataDir, team.close, team.credentialsEnded);
  } else {
    target = await openAdminTarget(makes ? dataDir : existingDataDir(dataDir), stderrLogger);
  }
  try {
    await run(target);
  } finally {
    await target.close();
  }
}

export async function userCreate(args: string[]): Promise<void> {
  const v = parse('user create', args);
  required('user create', v, 'email', 'name', 'password');
  const input = validate('user create', CreateUserBodySchema, {
    email: v.email,
    name: v.name,
    password: v.password,
    ...(v['image-url'] === undefined ? {} : { imageUrl: v['image-url'] }),
  });
  await withTarget('user create', v, async (target) => print((await target.createUser(input)).id), true);
}

export async function userSetPassword(args: string[]): Promise<void> {
  const v = parse('user set-password', args);
  required('user set-password', v, 'email', 'password');
  const input = validate('user set-password', SetPasswordBodySchema, {
    email: v.email,
    password: v.password,
  });
  await withTarget('user set-password', v, async (target) => {
    await target.setPassword(input);
    print(`Set the password of ${input.email}; its sign-ins were ended`);
  });
}

export async function workspaceCreate(args: string[]): Promise<void> {
  const v = parse('workspace create', args);
  required('workspace create', v, 'name', 'owner');
  const input = validate('workspace create', CreateWorkspaceBodySchema, {
    name: v.name,
    ownerEmail: v.owner,
    ...(v.agent === undefined ? {} : { agent: v.agent }),
    ...(v['acp-agent'] === undefined ? {} : { acpAgent: v['acp-agent'] }),
  });
  await withTarget('workspace create', v, async (target) => {
    const { workspace, agent } = await target.createWorkspace(input);
    // stdout holds the organizationId alone (scripts read it): which agent it runs goes to stderr.
    stderrLogger.info(agentSentence(workspace.name, agent));
    print(workspace.organizationId);
  });
}

export async function memberAdd(args: string[]): Promise<void> {
  const v = parse('member add', args);
  required('member add', v, 'workspace', 'email');
  const input = validate('member add', AddMemberBodySchema, { organizationId: v.workspace, email: v.email });
  await withTarget('member add', v, async (target) => {
    const added = await target.addMember(input);
    print(
      added.invited
        ? `${added.email} has no account yet: invited to ${input.organizationId}. They join it when they first ` +
            'sign in (through the identity provider, or once an account with this email is made).'
        : `${added.email} is now a member of ${input.organizationId}`,
    );
  });
}

export async function memberRemove(args: string[]): Promise<void> {
  const v = parse('member remove', args);
  required('member remove', v, 'workspace', 'email');
  const input = validate('member remove', AddMemberBodySchema, {
    organizationId: v.workspace,
    email: v.email,
  });
  await withTarget('member remove', v, async (target) => {
    const removed = await target.removeMember(input);
    print(
      removed === 'invitation'
        ? `Withdrew the invitation of ${input.email} to ${input.organizationId}`
        : `${input.email} is no longer a member of ${input.organizationId}`,
    );
  });
}

/**
 * A cell as it can be printed: control characters (names stored before they were refused, or
 * anything else a cell holds) are shown as `\u{1b}` and the like, never sent to the terminal.
 */
const printable = (cell: string) =>
  cell.replace(/[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);

/** Rows as aligned columns, the header first. */
function printTable(table: string[][]): void {
  const rows = table.map((row) => row.map(printable));
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const row of rows)
    print(
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
}

export async function userList(args: string[]): Promise<void> {
  const v = parse('user list', args);
  await withTarget('user list', v, async (target) => {
    const users = await target.listUsers();
    if (v.json) return print(JSON.stringify(users, null, 2));
    if (users.length === 0) return print('No users yet.');
    printTable([
      ['ID', 'EMAIL', 'NAME', 'WORKSPACES', 'CREATED'],
      ...users.map((u) => [u.id, u.email, u.name, String(u.workspaces), u.createdAt]),
    ]);
  });
}

export async function workspaceList(args: string[]): Promise<void> {
  const v = parse('workspace list', args);
  await withTarget('workspace list', v, async (target) => {
    const workspaces = await target.listWorkspaces();
    if (v.json) return print(JSON.stringify(workspaces, null, 2));
    if (workspaces.length === 0) return print('No workspaces yet.');
    printTable([
      ['ORGANIZATIONID', 'NAME', 'OWNERS', 'MEMBERS', 'SESSIONS', 'CREATED'],
      ...workspaces.map((w) => [
        w.organizationId,
        w.name,
        w.owners.join(', ') || '-',
        String(w.members),
        String(w.sessions),
        w.createdAt,
      ]),
    ]);
  });
}

export async function keyCreate(args: string[]): Promise<void> {
  const v = parse('key create', args);
  required('key create', v, 'workspace');
  const input = validate('key create', CreateKeyBodySchema, {
    organizationId: v.workspace,
    ...(v.name === undefined ? {} : { label: v.name }),
    ...(v['can-approve'] === true ? { canApprove: true } : {}),
    ...(v['push-only'] === true ? { pushOnly: true } : {}),
  });
  await withTarget('key create', v, async (target) => print((await target.createKey(input)).key));
}

export async function keyList(args: string[]): Promise<void> {
  const v = parse('key list', args);
  required('key list', v, 'workspace');
  await withTarget('key list', v, async (target) => {
    const keys = await target.listKeys(String(v.workspace));
    if (v.json) return print(JSON.stringify(keys, null, 2));
    if (keys.length === 0) return print('No active API keys.');
    printTable([
      ['ID', 'PREFIX', 'LABEL', 'CREATED', 'LAST USED', 'CREATED BY'],
      ...keys.map((k) => [
        k.id,
        `${k.prefix}…`,
        k.label || '-',
        k.createdAt,
        k.lastUsedAt ?? 'never',
        k.createdBy?.name ?? '(command line)',
      ]),
    ]);
  });
}

export async function keyRevoke(args: string[]): Promise<void> {
  const v = parse('key revoke', args);
  required('key revoke', v, 'workspace', 'id');
  await withTarget('key revoke', v, async (target) => {
    await target.revokeKey({ organizationId: String(v.workspace), keyId: String(v.id) });
    print(`Revoked ${String(v.id)}`);
  });
}
