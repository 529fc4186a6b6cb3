import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FullSessionResponseSchema,
  ListSessionsResponseSchema,
  RepositoriesResponseSchema,
  SessionResponseSchema,
} from '../../src-shared/index.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  startTestServer,
  withKey,
  type TestServer,
} from '../helpers/server.js';

describe('POST /api/sessions/{id}/stop', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer();
    owner = await seedWorkspace(server);
  });
  afterAll(async () => server.dispose());

  const full = async (id: string) =>
    FullSessionResponseSchema.parse(
      await (await asUser(server, owner.user.cookie, 'GET', `/api/sessions/${id}`)).json(),
    ).session;

  it('stops the running agent: completed, with a result marked stopped that says who', async () => {
    const { id } = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Refactor the upload client',
    });
    const response = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${id}/stop`);
    expect(response.status).toBe(200);
    const { session } = SessionResponseSchema.parse(await response.json());
    expect(session.status).toBe('completed');
    expect(session.lastMessagePreview).toBe('Stopped by User owner.');
    const after = await full(id);
    expect(after.messages.at(-1)).toMatchObject({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'Stopped by User owner.',
      stopped: true,
    });

    // Nothing runs any more: a second stop is refused and changes nothing.
    const again = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${id}/stop`);
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('conflict');
    expect((await full(id)).messages).toHaveLength(after.messages.length);
  });

  it('takes an API key too, and keeps other workspaces out', async () => {
    const { id } = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Write the changelog',
    });
    const other = await seedWorkspace(server, 'other');
    expect((await withKey(server, other.apiKey, 'POST', `/api/sessions/${id}/stop`)).status).toBe(403);
    expect((await withKey(server, owner.apiKey, 'POST', '/api/sessions/ses_nothing/stop')).status).toBe(404);
    const stopped = await withKey(server, owner.apiKey, 'POST', `/api/sessions/${id}/stop`);
    expect(stopped.status).toBe(200);
    expect((await full(id)).messages.at(-1)).toMatchObject({
      stopped: true,
      result: 'Stopped by a script (API key).',
    });
  });

  it('the summary says a session was stopped, in the list too, until another run or status', async () => {
    const listed = async (id: string) => {
      const response = await asUser(server, owner.user.cookie, 'GET', '/api/sessions');
      return ListSessionsResponseSchema.parse(await response.json()).sessions.find((s) => s.id === id);
    };
    const { id } = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Tidy the logging',
    });
    expect(await listed(id)).not.toHaveProperty('stopped');
    const response = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${id}/stop`);
    expect(SessionResponseSchema.parse(await response.json()).session).toMatchObject({
      status: 'completed',
      stopped: true,
    });
    expect(await listed(id)).toMatchObject({ status: 'completed', stopped: true });
    expect((await full(id)).stopped).toBe(true);

    // Marked failed afterwards, it is no longer a stop's completion.
    await asUser(server, owner.user.cookie, 'PATCH', `/api/sessions/${id}`, { status: 'failed' });
    expect(await listed(id)).not.toHaveProperty('stopped');

    // Marked completed by someone after a stop: a completion of theirs, not the stop's.
    const third = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Tidy the traces',
    });
    await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${third.id}/stop`);
    expect(await listed(third.id)).toMatchObject({ status: 'completed', stopped: true });
    const marked = await asUser(server, owner.user.cookie, 'PATCH', `/api/sessions/${third.id}`, {
      status: 'completed',
    });
    expect(SessionResponseSchema.parse(await marked.json()).session).not.toHaveProperty('stopped');
    expect(await listed(third.id)).toMatchObject({ status: 'completed' });
    expect(await listed(third.id)).not.toHaveProperty('stopped');
    // A title alone changes nothing of a stop.
    const fourth = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Tidy the spans',
    });
    await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${fourth.id}/stop`);
    await asUser(server, owner.user.cookie, 'PATCH', `/api/sessions/${fourth.id}`, { title: 'Spans' });
    expect(await listed(fourth.id)).toMatchObject({ stopped: true });

    // A follow-up starts another run: the stop is history.
    const second = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Tidy the metrics',
    });
    await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${second.id}/stop`);
    expect(await listed(second.id)).toMatchObject({ stopped: true });
    const sent = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${second.id}/messages`, {
      content: 'Go on after all',
    });
    expect(sent.status).toBe(201);
    expect(await listed(second.id)).toMatchObject({ status: 'active' });
    expect(await listed(second.id)).not.toHaveProperty('stopped');
  });

  it('a finished run that is not stopped carries no stopped mark', async () => {
    const { id } = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Rename a variable',
    });
    await asUser(server, owner.user.cookie, 'PATCH', `/api/sessions/${id}`, { status: 'failed' });
    const last = (await full(id)).messages.at(-1);
    expect(last).toMatchObject({ type: 'result' });
    expect(last).not.toHaveProperty('stopped');
  });
});

describe('repositories of a workspace and the repository filter', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer();
    owner = await seedWorkspace(server);
    for (const repoUrl of [
      'https://github.com/Acme/Web',
      'https://github.com/acme/api.git',
      'https://gitlab.example.com/other/tool',
      'https://github.com/acme-labs/web',
    ]) {
      await createSession(server, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: `Work on ${repoUrl}`,
        repoUrl,
      });
    }
    await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'No repository here',
    });
  });
  afterAll(async () => server.dispose());

  it('lists the distinct repositories, with either credential, only of one workspace', async () => {
    const path = `/api/workspaces/${owner.organizationId}/repositories`;
    const expected = ['acme-labs/web', 'acme/api', 'Acme/Web', 'other/tool'];
    const byCookie = await asUser(server, owner.user.cookie, 'GET', path);
    expect(RepositoriesResponseSchema.parse(await byCookie.json()).repositories).toEqual(expected);
    const byKey = await withKey(server, owner.apiKey, 'GET', path);
    expect(RepositoriesResponseSchema.parse(await byKey.json()).repositories).toEqual(expected);
    const other = await seedWorkspace(server, 'other');
    expect((await withKey(server, other.apiKey, 'GET', path)).status).toBe(403);
    expect((await asUser(server, other.user.cookie, 'GET', path)).status).toBe(403);
    expect((await fetch(`${server.url}${path}`)).status).toBe(401);
  });

  it.each([
    ['acme/web', ['Acme/Web']],
    ['ACME/WEB', ['Acme/Web']],
    ['acme', ['acme/api', 'Acme/Web']],
    ['https://github.com/ACME/web.git', ['Acme/Web']],
    ['https://github.com/acme/web/', ['Acme/Web']],
    ['acme-labs', ['acme-labs/web']],
    ['nobody', []],
  ])('repository=%s finds %j, case-insensitively', async (filter, expected) => {
    const response = await withKey(
      server,
      owner.apiKey,
      'GET',
      `/api/sessions?repository=${encodeURIComponent(filter)}`,
    );
    const { sessions } = ListSessionsResponseSchema.parse(await response.json());
    expect(sessions.map((s) => s.metadata.repository).sort()).toEqual([...expected].sort());
  });
});
