import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ErrorResponseSchema,
  FullSessionResponseSchema,
  SessionResponseSchema,
  type SessionFull,
} from '../../src-shared/index.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  startTestServer,
  withKey,
  type TestServer,
} from '../helpers/server.js';

async function full(server: TestServer, apiKey: string, id: string): Promise<SessionFull> {
  const response = await withKey(server, apiKey, 'GET', `/api/sessions/${id}`);
  return FullSessionResponseSchema.parse(await response.json()).session;
}

describe('the demo agent, at zero pace', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer({ agentPaceMs: 0 });
    owner = await seedWorkspace(server);
  });
  afterAll(async () => server.dispose());

  const settled = async (id: string) => {
    await expect
      .poll(async () => (await full(server, owner.apiKey, id)).messages.at(-1)?.type, { timeout: 15_000 })
      .toBe('result');
    return full(server, owner.apiKey, id);
  };

  it('works a prompt through to a result: thinking, text, tools, tasks done, a branch', async () => {
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Add retries to the upload client',
      repoUrl: 'https://github.com/acme/uploads',
    });
    const session = await settled(created.id);
    expect(session.status).toBe('completed');
    expect(session.metadata.branch).toMatch(/^agent\/add-retries-to-the-upload-client-/);
    const blocks = session.messages.flatMap((m) =>
      m.type === 'assistant' ? m.message.content.map((b) => b.type) : [],
    );
    expect(new Set(blocks)).toEqual(new Set(['thinking', 'text', 'tool_use', 'tool_result']));
    const uses = session.messages
      .flatMap((m) => (m.type === 'assistant' ? m.message.content : []))
      .filter((b) => b.type === 'tool_use');
    const results = session.messages
      .flatMap((m) => (m.type === 'assistant' ? m.message.content : []))
      .filter((b) => b.type === 'tool_result');
    expect(results.map((r) => r.tool_use_id).sort()).toEqual(uses.map((u) => u.id).sort());
    expect(session.tasks.length).toBeGreaterThanOrEqual(3);
    expect(session.tasks.every((t) => t.status === 'completed')).toBe(true);
    expect(session.messages[0]).toEqual({
      type: 'user',
      message: { content: 'Add retries to the upload client' },
    });
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', is_error: false });
  });

  it('is deterministic: the same prompt plays out the same way', async () => {
    const body = { organizationId: owner.organizationId, initialMessage: 'Tidy up the config loader' };
    const [a, b] = [
      await createSession(server, owner.user.cookie, body),
      await createSession(server, owner.user.cookie, body),
    ];
    // Each session works on a branch of its own, where its commit is made.
    const strip = (s: SessionFull) =>
      JSON.stringify(s.messages.map((m) => (m.type === 'result' ? { ...m, duration_ms: 0 } : m)))
        .replaceAll(s.metadata.branch ?? '-', 'BRANCH')
        .replace(/\[BRANCH [0-9a-f]{7,}\]/gu, '[BRANCH commit]');
    expect(strip(await settled(a.id))).toEqual(strip(await settled(b.id)));
  });

  it('fails when the prompt asks it to, with an error result', async () => {
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Please fail this one',
    });
    const session = await settled(created.id);
    expect(session.status).toBe('failed');
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', subtype: 'error', is_error: true });
  });

  it('answers a follow-up: the session is active again, then completed', async () => {
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Write the changelog',
    });
    const first = await settled(created.id);
    const response = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${created.id}/messages`, {
      content: 'Also mention the new flag',
    });
    expect(response.status).toBe(201);
    const { session: summary } = SessionResponseSchema.parse(await response.json());
    expect(summary.status).toBe('active');
    expect(summary.lastMessagePreview).toBe('Also mention the new flag');
    await expect
      .poll(async () => (await full(server, owner.apiKey, created.id)).messages.length, { timeout: 15_000 })
      .toBeGreaterThan(first.messages.length + 2);
    const after = await settled(created.id);
    expect(after.status).toBe('completed');
    expect(after.messages[first.messages.length]).toEqual({
      type: 'user',
      message: { content: 'Also mention the new flag' },
    });
  });

  it('refuses follow-ups by API key (400), blank ones (400), and in other workspaces (403)', async () => {
    const created = await createSession(server, owner.user.cookie, { organizationId: owner.organizationId });
    const byKey = await withKey(server, owner.apiKey, 'POST', `/api/sessions/${created.id}/messages`, {
      content: 'hi',
    });
    expect(byKey.status).toBe(400);
    expect(ErrorResponseSchema.parse(await byKey.json()).error.code).toBe('api_key_not_allowed');
    const blank = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${created.id}/messages`, {
      content: '  ',
    });
    expect(blank.status).toBe(400);
    const stranger = await seedWorkspace(server, 'stranger');
    const elsewhere = await asUser(
      server,
      stranger.user.cookie,
      'POST',
      `/api/sessions/${created.id}/messages`,
      { content: 'hi' },
    );
    expect(elsewhere.status).toBe(403);
  });
});

describe('stopping an agent', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer({ agentPaceMs: 100 });
    owner = await seedWorkspace(server);
  });
  afterAll(async () => server.dispose());

  it.each(['completed', 'failed'] as const)('a PATCH to %s stops the run and says so', async (status) => {
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'A long job',
    });
    await expect
      .poll(async () => (await full(server, owner.apiKey, created.id)).messages.length)
      .toBeGreaterThan(2);
    const patch = await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${created.id}`, { status });
    expect(patch.status).toBe(200);
    const stopped = await full(server, owner.apiKey, created.id);
    expect(stopped.status).toBe(status);
    expect(stopped.messages.at(-1)).toMatchObject({
      type: 'result',
      result: `Stopped: the session was marked ${status}.`,
    });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await full(server, owner.apiKey, created.id)).messages).toHaveLength(stopped.messages.length);
  });
});
