import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreatedKeyResponseSchema,
  ErrorResponseSchema,
  KeysResponseSchema,
  InvitationResponseSchema,
  MemberResponseSchema,
  MembersResponseSchema,
  SetupResponseSchema,
  WorkspaceResponseSchema,
} from '../../src-shared/index.js';
import { installRecordedClis } from '../helpers/recorded-clis.js';
import {
  asUser,
  launchCookie,
  PASSWORD,
  seedWorkspace,
  signIn,
  startTestServer,
  steppableClock,
  uniqueEmail,
  withKey,
  type TestServer,
} from '../helpers/server.js';

async function expectError(response: Response, status: number, code?: string) {
  expect(response.status).toBe(status);
  const body = ErrorResponseSchema.parse(await response.json());
  if (code) expect(body.error.code).toBe(code);
}

describe('first-run setup', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server.dispose());

  it('is offered while no user exists, creates the owner and a workspace, signs in, then closes', async () => {
    expect(await (await fetch(`${server.url}/api/setup`)).json()).toMatchObject({
      needed: true,
      demo: false,
    });
    const launch = await launchCookie(server);
    const bad = await fetch(`${server.url}/api/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.origin, cookie: launch },
      body: JSON.stringify({ email: 'not-an-email', name: 'Ada', password: 'short', workspaceName: '' }),
    });
    expect(bad.status).toBe(400);
    const details = ((await bad.json()) as { error: { details: { path: string }[] } }).error.details.map(
      (d) => d.path,
    );
    expect(details).toEqual(expect.arrayContaining(['body.email', 'body.password', 'body.workspaceName']));

    const response = await fetch(`${server.url}/api/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.origin, cookie: launch },
      body: JSON.stringify({
        email: 'Ada@Example.test',
        name: 'Ada',
        password: PASSWORD,
        workspaceName: 'Acme',
      }),
    });
    expect(response.status).toBe(201);
    const body = SetupResponseSchema.parse(await response.json());
    expect(body.user.email).toBe('ada@example.test');
    expect(body.workspace).toMatchObject({ name: 'Acme', role: 'owner' });
    const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
    const me = await asUser(server, cookie, 'GET', '/api/auth/me');
    expect(me.status).toBe(200);

    expect(await (await fetch(`${server.url}/api/setup`)).json()).toEqual({
      needed: false,
      demo: false,
      // The demo is made in a data directory: a team server has none.
      demoAvailable: server.backend === 'sqljs',
      launchToken: false,
      setupCode: false,
    });
    const again = await fetch(`${server.url}/api/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.origin, cookie: launch },
      body: JSON.stringify({
        email: 'eve@example.test',
        name: 'Eve',
        password: PASSWORD,
        workspaceName: 'Evil',
      }),
    });
    await expectError(again, 409, 'conflict');
    expect(await server.storage.repos.users.findByEmail('eve@example.test')).toBeNull();
  });
});

describe('first-run setup with agent CLIs installed', () => {
  let server: TestServer | undefined;
  let bin = '';
  afterAll(async () => {
    await server?.dispose();
    rmSync(bin, { recursive: true, force: true });
  });

  it('offers the agents it finds, checks the choice, and gives the first workspace the chosen one', async () => {
    bin = installRecordedClis(mkdtempSync(join(tmpdir(), 'setup-clis-')));
    // An ACP agent installed too: OpenCode (a stand-in that says its version).
    writeFileSync(join(bin, 'opencode'), '#!/bin/sh\necho 1.2.3\n', { mode: 0o755 });
    const s = await startTestServer({
      agentEnv: {
        PATH: '/nonexistent',
        SESSIONDESK_CODEX_BIN: join(bin, 'codex'),
        SESSIONDESK_OPENCODE_BIN: join(bin, 'opencode'),
      },
    });
    server = s;
    expect(await (await fetch(`${s.url}/api/setup`)).json()).toEqual({
      needed: true,
      demo: false,
      demoAvailable: s.backend === 'sqljs',
      launchToken: false,
      setupCode: false,
      agents: [
        {
          kind: 'claude-code',
          name: 'Claude Code',
          simulated: false,
          found: false,
          install: 'npm install -g @anthropic-ai/claude-code',
        },
        { kind: 'codex', name: 'Codex', simulated: false, found: true, version: '0.169.0' },
        {
          kind: 'gemini',
          name: 'Gemini CLI',
          simulated: false,
          found: false,
          install: 'npm install -g @google/gemini-cli',
        },
        {
          kind: 'acp',
          acpAgent: 'opencode',
          name: 'OpenCode',
          simulated: false,
          found: true,
          version: '1.2.3',
        },
        { kind: 'demo', name: 'Demo agent (simulated)', simulated: true, found: true },
      ],
    });
    const launch = await launchCookie(s);
    const setUp = (agent: string, more: object = {}) =>
      fetch(`${s.url}/api/setup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: s.origin, cookie: launch },
        body: JSON.stringify({
          email: 'ada@example.test',
          name: 'Ada',
          password: PASSWORD,
          workspaceName: 'Acme',
          agent,
          ...more,
        }),
      });
    // One not installed, and one setup does not offer (a command is the administrator's).
    const missing = await setUp('gemini');
    await expectError(missing, 400, 'validation_failed');
    expect(await s.storage.repos.users.findByEmail('ada@example.test')).toBeNull();
    await expectError(await setUp('command'), 400);
    expect(await s.storage.repos.users.findByEmail('ada@example.test')).toBeNull();
    // An ACP agent not installed, one without its id, and an id without `acp`.
    await expectError(await setUp('acp', { acpAgent: 'qwen-code' }), 400, 'validation_failed');
    await expectError(await setUp('acp'), 400, 'validation_failed');
    await expectError(await setUp('codex', { acpAgent: 'opencode' }), 400, 'validation_failed');
    expect(await s.storage.repos.users.findByEmail('ada@example.test')).toBeNull();

    const response = await setUp('acp', { acpAgent: 'opencode' });
    expect(response.status).toBe(201);
    const { workspace } = SetupResponseSchema.parse(await response.json());
    const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
    const agent = await asUser(s, cookie, 'GET', `/api/workspaces/${workspace.organizationId}/agent`);
    expect(await agent.json()).toEqual(
      expect.objectContaining({
        settings: { agent: 'acp', acpAgent: 'opencode' },
        source: 'workspace',
        commands: [],
      }),
    );
    // Setup is over: nothing more is said to callers who have not signed in.
    expect(await (await fetch(`${s.url}/api/setup`)).json()).toEqual({
      needed: false,
      demo: false,
      demoAvailable: s.backend === 'sqljs',
      launchToken: false,
      setupCode: false,
    });
  });
});

describe('workspaces, members and keys (cookie only)', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  let outsider: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer();
    [owner, outsider] = await Promise.all([
      seedWorkspace(server, 'owner'),
      seedWorkspace(server, 'outsider'),
    ]);
  });
  afterAll(async () => server.dispose());

  it('creates a workspace owned by the signed-in user and lists it', async () => {
    const created = await asUser(server, owner.user.cookie, 'POST', '/api/workspaces', {
      name: '  Side project ',
    });
    expect(created.status).toBe(201);
    const { workspace } = WorkspaceResponseSchema.parse(await created.json());
    expect(workspace).toMatchObject({ name: 'Side project', role: 'owner' });
    const list = (await (await asUser(server, owner.user.cookie, 'GET', '/api/workspaces')).json()) as {
      workspaces: { organizationId: string }[];
    };
    expect(list.workspaces.map((w) => w.organizationId)).toContain(workspace.organizationId);
    await expectError(
      await asUser(server, owner.user.cookie, 'POST', '/api/workspaces', { name: ' ' }),
      400,
      'validation_failed',
    );
  });

  it('owners add an existing user, create a new one, and remove members; the last owner stays', async () => {
    const base = `/api/workspaces/${owner.organizationId}/members`;
    const added = await asUser(server, owner.user.cookie, 'POST', base, { email: outsider.user.email });
    expect(added.status).toBe(201);
    expect(MemberResponseSchema.parse(await added.json()).member).toMatchObject({
      email: outsider.user.email,
      role: 'member',
    });
    await expectError(
      await asUser(server, owner.user.cookie, 'POST', base, { email: outsider.user.email }),
      409,
    );
    await expectError(
      await asUser(server, owner.user.cookie, 'POST', base, { email: uniqueEmail(), name: 'Half' }),
      400,
    );

    const newEmail = uniqueEmail('newbie');
    const createdUser = await asUser(server, owner.user.cookie, 'POST', base, {
      email: newEmail,
      name: 'Newbie',
      password: PASSWORD,
    });
    expect(createdUser.status).toBe(201);
    const newbieCookie = await signIn(server, newEmail);
    expect(
      (await asUser(server, newbieCookie, 'GET', `/api/sessions?organizationId=${owner.organizationId}`))
        .status,
    ).toBe(200);

    const members = MembersResponseSchema.parse(
      await (await asUser(server, owner.user.cookie, 'GET', base)).json(),
    ).members;
    expect(members.map((m) => m.email)).toEqual([owner.user.email, outsider.user.email, newEmail]);

    // A plain member can look but not change.
    await expectError(await asUser(server, outsider.user.cookie, 'POST', base, { email: newEmail }), 403);
    await expectError(
      await asUser(server, outsider.user.cookie, 'DELETE', `${base}/${owner.user.userId}`),
      403,
    );
    expect((await asUser(server, outsider.user.cookie, 'GET', base)).status).toBe(200);

    const newbie = members.find((m) => m.email === newEmail)!;
    expect((await asUser(server, owner.user.cookie, 'DELETE', `${base}/${newbie.userId}`)).status).toBe(204);
    expect(
      (await asUser(server, newbieCookie, 'GET', `/api/sessions?organizationId=${owner.organizationId}`))
        .status,
    ).toBe(403);
    await expectError(await asUser(server, owner.user.cookie, 'DELETE', `${base}/${newbie.userId}`), 404);
    await expectError(await asUser(server, owner.user.cookie, 'DELETE', `${base}/${owner.user.userId}`), 409);
  });

  it('owners invite an email without an account, see it pending and withdraw it; a new account takes it up', async () => {
    const base = `/api/workspaces/${owner.organizationId}/members`;
    const email = uniqueEmail('invitee');
    const invited = await asUser(server, owner.user.cookie, 'POST', base, { email: email.toUpperCase() });
    expect(invited.status).toBe(202);
    const { invitation } = InvitationResponseSchema.parse(await invited.json());
    expect(invitation).toMatchObject({ email, invitedBy: { userId: owner.user.userId } });
    await expectError(await asUser(server, owner.user.cookie, 'POST', base, { email }), 409);
    const listed = MembersResponseSchema.parse(
      await (await asUser(server, owner.user.cookie, 'GET', base)).json(),
    );
    expect(listed.invitations.map((i) => i.email)).toEqual([email]);
    expect(listed.members.map((m) => m.email)).not.toContain(email);

    // Only an owner withdraws it.
    const invitationPath = `/api/workspaces/${owner.organizationId}/invitations/${encodeURIComponent(email)}`;
    await expectError(await asUser(server, outsider.user.cookie, 'DELETE', invitationPath), 403);
    expect((await asUser(server, owner.user.cookie, 'DELETE', invitationPath)).status).toBe(204);
    await expectError(await asUser(server, owner.user.cookie, 'DELETE', invitationPath), 404);
    const after = MembersResponseSchema.parse(
      await (await asUser(server, owner.user.cookie, 'GET', base)).json(),
    );
    expect(after.invitations).toEqual([]);

    // Invited again, then given a local account: the account joins, and the invitation is gone.
    expect((await asUser(server, owner.user.cookie, 'POST', base, { email })).status).toBe(202);
    const made = await asUser(server, owner.user.cookie, 'POST', base, {
      email,
      name: 'Invitee',
      password: PASSWORD,
    });
    expect(made.status).toBe(201);
    expect(MemberResponseSchema.parse(await made.json()).member).toMatchObject({ email, role: 'member' });
    const joined = MembersResponseSchema.parse(
      await (await asUser(server, owner.user.cookie, 'GET', base)).json(),
    );
    expect(joined.invitations).toEqual([]);
    expect(joined.members.map((m) => m.email)).toContain(email);
  });

  it('members create keys (shown once), list them without the secret, and revoke them', async () => {
    const base = `/api/workspaces/${outsider.organizationId}/keys`;
    const created = await asUser(server, outsider.user.cookie, 'POST', base, { label: 'deploy bot' });
    expect(created.status).toBe(201);
    const { key } = CreatedKeyResponseSchema.parse(await created.json());
    expect(key.key).toMatch(/^sdk_[A-Za-z0-9_-]{43}$/);
    expect(key.key.startsWith(key.prefix)).toBe(true);
    expect((await withKey(server, key.key, 'GET', '/api/sessions')).status).toBe(200);

    const listed = await (await asUser(server, outsider.user.cookie, 'GET', base)).text();
    expect(listed).not.toContain(key.key);
    const keys = KeysResponseSchema.parse(JSON.parse(listed)).keys;
    expect(keys.find((k) => k.id === key.id)).toMatchObject({ label: 'deploy bot', prefix: key.prefix });

    expect((await asUser(server, outsider.user.cookie, 'DELETE', `${base}/${key.id}`)).status).toBe(204);
    await expectError(await withKey(server, key.key, 'GET', '/api/sessions'), 401);
    await expectError(await asUser(server, outsider.user.cookie, 'DELETE', `${base}/${key.id}`), 404);
  });

  it('an API key can never create, list or revoke keys or change members', async () => {
    const keys = `/api/workspaces/${owner.organizationId}/keys`;
    const members = `/api/workspaces/${owner.organizationId}/members`;
    for (const [method, path, body] of [
      ['GET', keys, undefined],
      ['POST', keys, { label: 'minted' }],
      ['DELETE', `${keys}/${owner.keyId}`, undefined],
      ['GET', members, undefined],
      ['POST', members, { email: outsider.user.email }],
      ['DELETE', `${members}/${owner.user.userId}`, undefined],
      ['POST', '/api/workspaces', { name: 'x' }],
    ] as const) {
      await expectError(await withKey(server, owner.apiKey, method, path, body), 400, 'api_key_not_allowed');
    }
    expect(await server.accounts.listKeys(owner.organizationId)).toHaveLength(1);
  });

  it('outsiders get 403, strangers 401, and cross-origin writes 403', async () => {
    const keys = `/api/workspaces/${owner.organizationId}/keys`;
    await expectError(
      await asUser(server, outsider.user.cookie, 'GET', `/api/workspaces/org_nope/keys`),
      403,
    );
    await expectError(await fetch(`${server.url}${keys}`), 401);
    const crossOrigin = await fetch(`${server.url}${keys}`, {
      method: 'POST',
      headers: {
        cookie: owner.user.cookie,
        origin: 'http://127.0.0.1:1',
        'content-type': 'application/json',
      },
      body: '{}',
    });
    await expectError(crossOrigin, 403, 'forbidden_origin');
  });
});

describe('lists made within one millisecond', () => {
  // A frozen clock gives every row the same created_at: the order must still be the order of creation.
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ clock: steppableClock('2026-01-01T00:00:00.000Z') });
  });
  afterAll(async () => server.dispose());

  it('keep workspaces and members in the order they were made, and keys newest first', async () => {
    const owner = await seedWorkspace(server, 'frozen');
    const names = ['Bravo', 'Alpha', 'Delta', 'Charlie', 'Echo', 'Foxtrot'];
    const made: string[] = [owner.organizationId];
    for (const name of names) {
      const created = await asUser(server, owner.user.cookie, 'POST', '/api/workspaces', { name });
      made.push(WorkspaceResponseSchema.parse(await created.json()).workspace.organizationId);
    }
    const listed = (await (await asUser(server, owner.user.cookie, 'GET', '/api/workspaces')).json()) as {
      workspaces: { organizationId: string }[];
    };
    expect(listed.workspaces.map((w) => w.organizationId)).toEqual(made);

    const members = `/api/workspaces/${owner.organizationId}/members`;
    const joined = [owner.user.email];
    for (const name of names) {
      const email = uniqueEmail(name.toLowerCase());
      await asUser(server, owner.user.cookie, 'POST', members, { email, name, password: PASSWORD });
      joined.push(email);
    }
    const memberList = MembersResponseSchema.parse(
      await (await asUser(server, owner.user.cookie, 'GET', members)).json(),
    ).members;
    expect(memberList.map((m) => m.email)).toEqual(joined);

    const keysPath = `/api/workspaces/${owner.organizationId}/keys`;
    const keyIds = [owner.keyId];
    for (const label of names) {
      const created = await asUser(server, owner.user.cookie, 'POST', keysPath, { label });
      keyIds.push(CreatedKeyResponseSchema.parse(await created.json()).key.id);
    }
    const keys = KeysResponseSchema.parse(
      await (await asUser(server, owner.user.cookie, 'GET', keysPath)).json(),
    ).keys;
    expect(keys.map((k) => k.id)).toEqual(keyIds.reverse());
  });
});
