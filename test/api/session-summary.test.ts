import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SessionSummaryResponseSchema } from '../../src-shared/session-summary.js';
import { ListSessionsResponseSchema, type Message, type Task } from '../../src-shared/sessions.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  startTestServer,
  withKey,
  type TestServer,
} from '../helpers/server.js';

const TASKS: Task[] = [
  { id: 'task-1', title: 'Read the parser', status: 'completed' },
  { id: 'task-2', title: 'Fix the off-by-one', status: 'in_progress' },
];

function reply(text: string): Message {
  return { type: 'assistant', message: { content: [{ type: 'text', text }] } };
}

describe('GET /api/sessions/{id}/summary', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  let other: Awaited<ReturnType<typeof seedWorkspace>>;
  let sessionId = '';

  beforeAll(async () => {
    server = await startTestServer();
    owner = await seedWorkspace(server, 'owner');
    other = await seedWorkspace(server, 'other');
    sessionId = (
      await createSession(server, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Fix the parser. It drops the last token.',
        repoUrl: 'https://github.com/acme/parser',
      })
    ).id;
    // The demo agent names its branch as it starts, after the session is answered: the
    // summary and the list below are compared once it has, not while it is starting.
    await vi.waitFor(
      async () => {
        const response = await withKey(server, owner.apiKey, 'GET', `/api/sessions/${sessionId}/summary`);
        const { session } = SessionSummaryResponseSchema.parse(await response.json());
        if (session.metadata.branch === undefined) throw new Error('the demo agent has not started yet');
      },
      { timeout: 20_000, interval: 50 },
    );
    await server.storage.write(async (tx) => {
      for (let i = 0; i < 3; i += 1) {
        await tx.sessions.appendMessage(
          sessionId,
          owner.organizationId,
          reply(`Step ${i} of the fix.`),
          null,
          new Date().toISOString(),
        );
      }
      await tx.sessions.replaceTasks(sessionId, TASKS);
    });
  });
  afterAll(async () => server.dispose());

  it('answers the summary form with both previews and the tasks, without messages', async () => {
    const response = await withKey(server, owner.apiKey, 'GET', `/api/sessions/${sessionId}/summary`);
    expect(response.status).toBe(200);
    const raw = (await response.json()) as { session: Record<string, unknown> };
    expect(raw.session).not.toHaveProperty('messages');
    const { session } = SessionSummaryResponseSchema.parse(raw);
    expect(session.tasks).toEqual(TASKS);
    expect(session.messageCount).toBe(4);
    expect(session.firstMessagePreview).toBe('Fix the parser. It drops the last token.');
    expect(session.lastMessagePreview).toBe('Step 2 of the fix.');

    // The same fields as the session's entry in the list.
    const list = ListSessionsResponseSchema.parse(
      await (await withKey(server, owner.apiKey, 'GET', '/api/sessions')).json(),
    );
    const { tasks, ...summary } = session;
    expect(tasks).toHaveLength(2);
    expect(summary).toEqual(list.sessions.find((s) => s.id === sessionId));
  });

  it('follows the access rules of get: cookie or key, 401, 403 and 404', async () => {
    const path = `/api/sessions/${sessionId}/summary`;
    const byCookie = await asUser(
      server,
      owner.user.cookie,
      'GET',
      `${path}?organizationId=${owner.organizationId}`,
    );
    expect(byCookie.status).toBe(200);
    expect(SessionSummaryResponseSchema.parse(await byCookie.json()).session.id).toBe(sessionId);

    expect((await fetch(`${server.url}${path}`)).status).toBe(401);
    expect((await withKey(server, 'sd_not_a_real_key', 'GET', path)).status).toBe(401);

    const elsewhere = await withKey(server, other.apiKey, 'GET', path);
    expect(elsewhere.status).toBe(403);
    expect(((await elsewhere.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    expect((await asUser(server, other.user.cookie, 'GET', path)).status).toBe(403);
    const otherOrg = await withKey(
      server,
      owner.apiKey,
      'GET',
      `${path}?organizationId=${other.organizationId}`,
    );
    expect(otherOrg.status).toBe(403);

    const missing = await withKey(
      server,
      owner.apiKey,
      'GET',
      '/api/sessions/ses_doesnotexist0000000000/summary',
    );
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as {
      paths: Record<string, { get?: { responses: Record<string, unknown> } }>;
    };
    const route = doc.paths['/api/sessions/{sessionId}/summary'];
    expect(route?.get?.responses).toHaveProperty('200');
    expect(route?.get?.responses).toHaveProperty('404');
  });
});
