import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ErrorResponseSchema,
  FullSessionResponseSchema,
  ListSessionsResponseSchema,
  SessionResponseSchema,
} from '../../src-shared/index.js';
import {
  asUser,
  createSession,
  PASSWORD,
  seedWorkspace,
  signIn,
  startTestServer,
  uniqueEmail,
  withKey,
  type TestServer,
} from '../helpers/server.js';

let server: TestServer;
let owner: Awaited<ReturnType<typeof seedWorkspace>>;
let other: Awaited<ReturnType<typeof seedWorkspace>>;

beforeAll(async () => {
  server = await startTestServer();
  [owner, other] = await Promise.all([seedWorkspace(server, 'owner'), seedWorkspace(server, 'other')]);
});
afterAll(async () => server.dispose());

/** A workspace of its own for one test, owned by `owner`, with a key. */
async function freshWorkspace() {
  const workspace = await server.accounts.createWorkspace({ name: 'scratch', ownerEmail: owner.user.email });
  const key = await server.accounts.createKey({ organizationId: workspace.organizationId });
  return { organizationId: workspace.organizationId, apiKey: key.key };
}

async function expectError(response: Response, status: number, code?: string) {
  expect(response.status).toBe(status);
  const body = ErrorResponseSchema.parse(await response.json());
  if (code) expect(body.error.code).toBe(code);
  return body;
}

describe('POST /api/sessions', () => {
  it('creates an active session in summary form with the first preview only', async () => {
    const { organizationId } = await freshWorkspace();
    const response = await asUser(server, owner.user.cookie, 'POST', '/api/sessions', {
      organizationId,
      initialMessage: 'Fix the flaky login test. It fails on CI about once a day.',
      repoUrl: 'https://github.com/acme/web.git',
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const { session } = SessionResponseSchema.parse(await response.json());
    expect(session).toMatchObject({
      title: 'Fix the flaky login test',
      status: 'active',
      model: 'claude-opus-4-6',
      messageCount: 1,
      metadata: { repository: 'acme/web' },
      author: { id: owner.user.userId, name: 'User owner' },
      firstMessagePreview: 'Fix the flaky login test. It fails on CI about once a day.',
    });
    expect(session.metadata).toEqual({ repository: 'acme/web' });
    expect(session).not.toHaveProperty('lastMessagePreview');
    expect(session.id).toMatch(/^ses_[A-Za-z0-9_-]{22}$/);
    expect(session.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(session.updatedAt).toBe(session.createdAt);
  });

  it('without an initial message: "Untitled session", no messages, no previews, no metadata', async () => {
    const { organizationId } = await freshWorkspace();
    const session = await createSession(server, owner.user.cookie, { organizationId, model: 'other-model' });
    expect(session).toMatchObject({
      title: 'Untitled session',
      messageCount: 0,
      model: 'other-model',
      metadata: {},
    });
    expect(session).not.toHaveProperty('firstMessagePreview');
  });

  it('includes the author image when the user has one', async () => {
    const email = uniqueEmail('pictured');
    await server.accounts.createUser({
      email,
      name: 'Pic',
      password: PASSWORD,
      imageUrl: 'https://example.com/a.png',
    });
    const workspace = await server.accounts.createWorkspace({ name: 'pic', ownerEmail: email });
    const cookie = await signIn(server, email);
    const session = await createSession(server, cookie, {
      organizationId: workspace.organizationId,
      initialMessage: 'hi',
    });
    expect(session.author).toEqual(expect.objectContaining({ imageUrl: 'https://example.com/a.png' }));
  });

  it.each([
    ['no organizationId', { initialMessage: 'x' }, 'body.organizationId'],
    ['an unknown field', { organizationId: 'org_x', extra: 1 }, 'body'],
    ['a number as initialMessage', { organizationId: 'org_x', initialMessage: 5 }, 'body.initialMessage'],
    ['a blank initialMessage', { organizationId: 'org_x', initialMessage: '  \n ' }, 'body.initialMessage'],
    ['an ssh repoUrl', { organizationId: 'org_x', repoUrl: 'git@github.com:a/b.git' }, 'body.repoUrl'],
    [
      'a repoUrl with a deeper path',
      { organizationId: 'org_x', repoUrl: 'https://h.com/a/b/c' },
      'body.repoUrl',
    ],
    ['a bad branch', { organizationId: 'org_x', baseBranch: 'a..b' }, 'body.baseBranch'],
    ['an empty model', { organizationId: 'org_x', model: '' }, 'body.model'],
  ])('400 for %s, with details', async (_name, body, path) => {
    const response = await asUser(server, owner.user.cookie, 'POST', '/api/sessions', body);
    const error = await expectError(response, 400, 'validation_failed');
    expect(error.error.details?.some((d) => d.path === path || d.path.startsWith(path))).toBe(true);
  });

  it('400 for a body that is not a JSON object', async () => {
    for (const body of ['[]', '"text"', '42', 'null']) {
      const response = await fetch(`${server.url}/api/sessions`, {
        method: 'POST',
        headers: { cookie: owner.user.cookie, origin: server.origin, 'content-type': 'application/json' },
        body,
      });
      await expectError(response, 400);
    }
  });

  it('400 for invalid or empty JSON', async () => {
    for (const body of ['{"organizationId":', '']) {
      const response = await fetch(`${server.url}/api/sessions`, {
        method: 'POST',
        headers: { cookie: owner.user.cookie, origin: server.origin, 'content-type': 'application/json' },
        body,
      });
      await expectError(response, 400, 'bad_request');
    }
  });

  it('400 when an API key is used, even a valid one alongside a valid cookie', async () => {
    const body = JSON.stringify({ organizationId: owner.organizationId, initialMessage: 'hi' });
    const headers = { 'content-type': 'application/json', origin: server.origin };
    for (const extra of [
      { 'x-api-key': owner.apiKey },
      { authorization: `Bearer ${owner.apiKey}` },
      { 'x-api-key': owner.apiKey, cookie: owner.user.cookie },
      { 'x-api-key': 'sdk_not-a-real-key' },
    ]) {
      const response = await fetch(`${server.url}/api/sessions`, {
        method: 'POST',
        headers: { ...headers, ...extra },
        body,
      });
      const error = await expectError(response, 400, 'api_key_not_allowed');
      expect(error.error.message).toMatch(/signed-in user/);
    }
    const viaQuery = await fetch(`${server.url}/api/sessions?apiKey=${owner.apiKey}`, {
      method: 'POST',
      headers,
      body,
    });
    await expectError(viaQuery, 400, 'api_key_not_allowed');
  });

  it('401 without a cookie, and with an unknown one', async () => {
    const body = { organizationId: owner.organizationId };
    const none = await fetch(`${server.url}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.origin },
      body: JSON.stringify(body),
    });
    await expectError(none, 401, 'unauthorized');
    const unknown = await asUser(server, '__session=not-a-token', 'POST', '/api/sessions', body);
    await expectError(unknown, 401, 'unauthorized');
  });

  it('403 in a workspace the user is not a member of', async () => {
    const response = await asUser(server, owner.user.cookie, 'POST', '/api/sessions', {
      organizationId: other.organizationId,
      initialMessage: 'sneak in',
    });
    await expectError(response, 403, 'forbidden');
  });
});

describe('GET /api/sessions/:id', () => {
  it('returns the full form with messages and tasks, and no summary-only fields', async () => {
    const { organizationId, apiKey } = await freshWorkspace();
    const created = await createSession(server, owner.user.cookie, {
      organizationId,
      initialMessage: 'Write the docs',
      repoUrl: 'https://example.com/acme/docs',
    });
    const response = await withKey(server, apiKey, 'GET', `/api/sessions/${created.id}`);
    expect(response.status).toBe(200);
    const { session } = FullSessionResponseSchema.parse(await response.json());
    expect(session.messages).toEqual([{ type: 'user', message: { content: 'Write the docs' } }]);
    expect(session.tasks).toEqual([]);
    expect(session.createdAt).toBe(created.createdAt);
    expect(session).not.toHaveProperty('messageCount');
    expect(session).not.toHaveProperty('firstMessagePreview');
  });

  it('keeps agent messages as stored, in order, with tasks in their order', async () => {
    const { organizationId, apiKey } = await freshWorkspace();
    const created = await createSession(server, owner.user.cookie, { organizationId, initialMessage: 'Go' });
    const assistant = {
      type: 'assistant' as const,
      message: {
        content: [
          { type: 'thinking' as const, thinking: 'Plan first.' },
          { type: 'text' as const, text: 'Working on it: "quotes" \\ and 🚀' },
          { type: 'tool_use' as const, id: 'tu_1', name: 'Bash', input: { command: 'ls' } },
          { type: 'tool_result' as const, tool_use_id: 'tu_1', content: 'a\nb', is_error: false },
        ],
      },
    };
    const result = {
      type: 'result' as const,
      subtype: 'success' as const,
      is_error: false,
      result: 'Done.',
      duration_ms: 5,
      num_turns: 2,
    };
    await server.storage.write(async (tx) => {
      const at = new Date().toISOString();
      await tx.sessions.appendMessage(created.id, organizationId, assistant, null, at);
      await tx.sessions.appendMessage(created.id, organizationId, result, null, at);
      await tx.sessions.replaceTasks(created.id, [
        { id: 't2', title: 'Second', status: 'in_progress' },
        { id: 't1', title: 'First', status: 'completed' },
      ]);
    });
    const { session } = FullSessionResponseSchema.parse(
      await (await withKey(server, apiKey, 'GET', `/api/sessions/${created.id}`)).json(),
    );
    expect(session.messages).toEqual([{ type: 'user', message: { content: 'Go' } }, assistant, result]);
    expect(session.tasks.map((t) => t.id)).toEqual(['t2', 't1']);
    const list = ListSessionsResponseSchema.parse(
      await (await withKey(server, apiKey, 'GET', '/api/sessions')).json(),
    );
    expect(list.sessions[0]).toMatchObject({
      messageCount: 3,
      firstMessagePreview: 'Go',
      lastMessagePreview: 'Done.',
    });
  });

  it('404 for an unknown id and for a malformed one', async () => {
    await expectError(
      await withKey(server, owner.apiKey, 'GET', '/api/sessions/ses_AAAAAAAAAAAAAAAAAAAAAA'),
      404,
      'not_found',
    );
    await expectError(
      await withKey(server, owner.apiKey, 'GET', '/api/sessions/%27%20OR%201=1'),
      404,
      'not_found',
    );
  });

  it('403 for a session in another workspace, by key and by cookie', async () => {
    const theirs = await createSession(server, other.user.cookie, {
      organizationId: other.organizationId,
      initialMessage: 'x',
    });
    await expectError(
      await withKey(server, owner.apiKey, 'GET', `/api/sessions/${theirs.id}`),
      403,
      'forbidden',
    );
    await expectError(
      await asUser(server, owner.user.cookie, 'GET', `/api/sessions/${theirs.id}`),
      403,
      'forbidden',
    );
  });

  it('401 without credentials or with a bad key', async () => {
    const mine = await createSession(server, owner.user.cookie, { organizationId: owner.organizationId });
    await expectError(await fetch(`${server.url}/api/sessions/${mine.id}`), 401);
    await expectError(await withKey(server, 'sdk_wrong', 'GET', `/api/sessions/${mine.id}`), 401);
  });

  it('403 when organizationId names another workspace than the key', async () => {
    const mine = await createSession(server, owner.user.cookie, { organizationId: owner.organizationId });
    const response = await withKey(
      server,
      owner.apiKey,
      'GET',
      `/api/sessions/${mine.id}?organizationId=${other.organizationId}`,
    );
    await expectError(response, 403);
  });
});

describe('PATCH /api/sessions/:id', () => {
  it('changes the title and status, moves updatedAt, and answers without previews', async () => {
    const { organizationId, apiKey } = await freshWorkspace();
    const created = await createSession(server, owner.user.cookie, {
      organizationId,
      initialMessage: 'Old title',
    });
    await new Promise((r) => setTimeout(r, 5));
    const response = await withKey(server, apiKey, 'PATCH', `/api/sessions/${created.id}`, {
      title: '  New title ',
      status: 'completed',
    });
    expect(response.status).toBe(200);
    const { session } = SessionResponseSchema.parse(await response.json());
    expect(session).toMatchObject({ title: 'New title', status: 'completed', messageCount: 1 });
    expect(session).not.toHaveProperty('firstMessagePreview');
    expect(session).not.toHaveProperty('lastMessagePreview');
    expect(session.updatedAt > (created.updatedAt as string)).toBe(true);
    const again = await withKey(server, apiKey, 'PATCH', `/api/sessions/${created.id}`, { status: 'active' });
    expect(SessionResponseSchema.parse(await again.json()).session).toMatchObject({
      title: 'New title',
      status: 'active',
    });
  });

  it('lets any status follow any other', async () => {
    const { organizationId, apiKey } = await freshWorkspace();
    const created = await createSession(server, owner.user.cookie, { organizationId });
    for (const status of ['failed', 'completed', 'active', 'failed', 'active'] as const) {
      const response = await withKey(server, apiKey, 'PATCH', `/api/sessions/${created.id}`, { status });
      expect(SessionResponseSchema.parse(await response.json()).session.status).toBe(status);
    }
  });

  it('an empty object changes nothing', async () => {
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Same',
    });
    const response = await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${created.id}`, {});
    const { session } = SessionResponseSchema.parse(await response.json());
    expect(session.updatedAt).toBe(created.updatedAt);
    expect(session.title).toBe('Same');
  });

  it('works with the dashboard cookie too', async () => {
    const created = await createSession(server, owner.user.cookie, { organizationId: owner.organizationId });
    const response = await asUser(server, owner.user.cookie, 'PATCH', `/api/sessions/${created.id}`, {
      title: 'By cookie',
    });
    expect(response.status).toBe(200);
  });

  it.each([
    ['a blank title', { title: '   ' }],
    ['a title over 200 characters', { title: 'x'.repeat(201) }],
    ['an unknown status', { status: 'paused' }],
    ['an unknown field', { title: 'ok', pinned: true }],
    ['a wrong type', { title: 42 }],
  ])('400 for %s', async (_name, body) => {
    const created = await createSession(server, owner.user.cookie, { organizationId: owner.organizationId });
    await expectError(
      await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${created.id}`, body),
      400,
      'validation_failed',
    );
  });

  it('400 without a body', async () => {
    const created = await createSession(server, owner.user.cookie, { organizationId: owner.organizationId });
    await expectError(await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${created.id}`), 400);
  });

  it('401, 403 and 404 like get', async () => {
    const theirs = await createSession(server, other.user.cookie, { organizationId: other.organizationId });
    await expectError(
      await fetch(`${server.url}/api/sessions/${theirs.id}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      }),
      401,
    );
    await expectError(
      await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${theirs.id}`, { title: 'x' }),
      403,
    );
    await expectError(
      await withKey(server, owner.apiKey, 'PATCH', '/api/sessions/ses_BBBBBBBBBBBBBBBBBBBBBB', {
        title: 'x',
      }),
      404,
    );
  });
});

describe('GET /api/sessions', () => {
  it('lists newest first with both previews and the stats', async () => {
    const { organizationId, apiKey } = await freshWorkspace();
    const first = await createSession(server, owner.user.cookie, {
      organizationId,
      initialMessage: 'First one',
    });
    const second = await createSession(server, owner.user.cookie, {
      organizationId,
      initialMessage: 'Second one',
    });
    const response = await withKey(server, apiKey, 'GET', '/api/sessions');
    expect(response.status).toBe(200);
    const body = ListSessionsResponseSchema.parse(await response.json());
    expect(body.sessions.map((s) => s.id)).toEqual([second.id, first.id]);
    expect(body.sessions[0]).toMatchObject({
      firstMessagePreview: 'Second one',
      lastMessagePreview: 'Second one',
    });
    expect(body.stats).toEqual({
      mergesPastWeek: 0,
      authorsPastWeek: 1,
      humansPastWeek: 1,
      humansPromptingNow: 1,
      costPastWeek: 0,
    });
    expect(body).not.toHaveProperty('nextCursor');
  });

  it('by cookie: organizationId may be left out only with exactly one workspace', async () => {
    const email = uniqueEmail('solo');
    await server.accounts.createUser({ email, name: 'Solo', password: PASSWORD });
    const cookie = await signIn(server, email);
    await expectError(await asUser(server, cookie, 'GET', '/api/sessions'), 400, 'organization_required');
    const only = await server.accounts.createWorkspace({ name: 'only', ownerEmail: email });
    const one = ListSessionsResponseSchema.parse(
      await (await asUser(server, cookie, 'GET', '/api/sessions')).json(),
    );
    expect(one.sessions).toEqual([]);
    await server.accounts.createWorkspace({ name: 'second', ownerEmail: email });
    const several = await expectError(
      await asUser(server, cookie, 'GET', '/api/sessions'),
      400,
      'organization_required',
    );
    expect(several.error.message).toMatch(/organizationId/);
    const named = await asUser(server, cookie, 'GET', `/api/sessions?organizationId=${only.organizationId}`);
    expect(named.status).toBe(200);
  });

  it("403 for a workspace that is not the key's or the user's", async () => {
    await expectError(
      await withKey(server, owner.apiKey, 'GET', `/api/sessions?organizationId=${other.organizationId}`),
      403,
    );
    await expectError(
      await asUser(server, owner.user.cookie, 'GET', `/api/sessions?organizationId=${other.organizationId}`),
      403,
    );
    await expectError(
      await asUser(server, owner.user.cookie, 'GET', '/api/sessions?organizationId=org_nope'),
      403,
    );
  });

  it('401 without credentials', async () => {
    await expectError(await fetch(`${server.url}/api/sessions`), 401, 'unauthorized');
  });

  it('filters by status, repository, author and text', async () => {
    const { organizationId, apiKey } = await freshWorkspace();
    await server.accounts.addMember({ organizationId, email: other.user.email });
    const a = await createSession(server, owner.user.cookie, {
      organizationId,
      initialMessage: 'Alpha task about caching',
      repoUrl: 'https://h.com/acme/api',
    });
    const b = await createSession(server, owner.user.cookie, {
      organizationId,
      initialMessage: 'Beta',
      repoUrl: 'https://h.com/acme/web',
    });
    const c = await createSession(server, other.user.cookie, {
      organizationId,
      initialMessage: 'Gamma mentions CACHING too',
    });
    await withKey(server, apiKey, 'PATCH', `/api/sessions/${b.id}`, { status: 'completed' });
    const ids = async (query: string) =>
      ListSessionsResponseSchema.parse(
        await (await withKey(server, apiKey, 'GET', `/api/sessions?${query}`)).json(),
      ).sessions.map((s) => s.id);
    expect(await ids('status=completed')).toEqual([b.id]);
    expect(await ids('repository=acme/api')).toEqual([a.id]);
    expect(await ids(`authorId=${other.user.userId}`)).toEqual([c.id]);
    expect(await ids('q=caching')).toEqual([c.id, a.id]);
    expect(await ids('q=caching&status=active&repository=acme/api')).toEqual([a.id]);
    await expectError(
      await withKey(server, apiKey, 'GET', '/api/sessions?status=paused'),
      400,
      'validation_failed',
    );
    await expectError(await withKey(server, apiKey, 'GET', '/api/sessions?limit=0'), 400);
    await expectError(await withKey(server, apiKey, 'GET', '/api/sessions?limit=1001'), 400);
    await expectError(await withKey(server, apiKey, 'GET', '/api/sessions?cursor=garbage'), 400);
  });
});

describe('unknown routes', () => {
  it('404 in the error shape, without echoing the URL', async () => {
    const response = await fetch(`${server.url}/api/nope?apiKey=sdk_secret_value`);
    const body = await expectError(response, 404, 'not_found');
    expect(JSON.stringify(body)).not.toContain('sdk_secret_value');
  });
});
