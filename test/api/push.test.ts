import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src-shared/sessions.js';
import { openEventStream } from '../helpers/events.js';
import { until } from '../helpers/until.js';
import { asUser, seedWorkspace, startTestServer, withKey, type TestServer } from '../helpers/server.js';

const AT = '2026-02-01T09:00:00.000Z';
let counter = 0;
const newId = () => `ses_apipush${String((counter += 1)).padStart(15, '0')}`;

const prompt = (text: string): Message => ({ type: 'user', message: { content: text } });
const answer = (text: string): Message => ({
  type: 'assistant',
  message: { content: [{ type: 'text', text }] },
});

/** A part as `sessiondesk push` sends it: the export's records of a session. */
function part(
  sessionId: string,
  messages: Message[],
  options: { from?: number; messageCount?: number; author?: string; machine?: string } = {},
) {
  return {
    machine: options.machine ?? 'laptop-7',
    session: {
      type: 'session',
      id: sessionId,
      title: 'Pushed work',
      status: 'completed',
      createdAt: AT,
      updatedAt: AT,
      model: 'claude-opus-4-6',
      author: { id: 'usr_elsewhere', name: 'Someone', email: options.author ?? 'someone@desk.test' },
      metadata: {},
      baseBranch: 'main',
      tasks: [],
      messageCount: options.messageCount ?? (options.from ?? 0) + messages.length,
    },
    from: options.from ?? 0,
    messages: messages.map((message) => ({
      type: 'message',
      createdAt: AT,
      ...(message.type === 'user' ? { authorEmail: options.author ?? 'someone@desk.test' } : {}),
      message,
    })),
  };
}

describe('the push routes', () => {
  let server: TestServer;
  let team: Awaited<ReturnType<typeof seedWorkspace>>;
  let pushKey: string;
  beforeAll(async () => {
    server = await startTestServer();
    team = await seedWorkspace(server, 'team');
    pushKey = (await server.accounts.createKey({ organizationId: team.organizationId, pushOnly: true })).key;
  });
  afterAll(async () => server.dispose());

  const send = (body: unknown, key = pushKey) => withKey(server, key, 'POST', '/api/push/sessions', body);

  it("attributes what a member's key pushes to that member, whatever author the desktop names", async () => {
    const member = await seedWorkspace(server, 'member');
    const add = await asUser(
      server,
      team.user.cookie,
      'POST',
      `/api/workspaces/${team.organizationId}/members`,
      {
        email: member.user.email,
      },
    );
    expect(add.status).toBe(201);
    const made = await asUser(
      server,
      member.user.cookie,
      'POST',
      `/api/workspaces/${team.organizationId}/keys`,
      {
        label: 'my laptop',
        pushOnly: true,
      },
    );
    expect(made.status).toBe(201);
    const key = ((await made.json()) as { key: { key: string; pushOnly?: true } }).key;
    expect(key.pushOnly).toBe(true);

    const sessionId = newId();
    // The desktop claims the workspace owner wrote it.
    const pushed = await send(
      part(sessionId, [prompt('Hi'), answer('Hello')], { author: team.user.email }),
      key.key,
    );
    expect(pushed.status).toBe(200);
    expect(await pushed.json()).toEqual({
      messageCount: 2,
      updatedAt: AT,
      status: 'completed',
      author: { name: 'User member', email: member.user.email },
      authorNote: `Attributed to User member <${member.user.email}>, who made the key it was pushed with; ${team.user.email} shows as its author on the desktop it came from.`,
    });
    const held = await withKey(server, team.apiKey, 'GET', `/api/sessions/${sessionId}`);
    const session = ((await held.json()) as { session: { author: { id: string }; pushedFrom: unknown } })
      .session;
    expect(session.author.id).toBe(member.user.userId);
    expect(session.pushedFrom).toMatchObject({ machine: 'laptop-7', author: { email: team.user.email } });
  });

  it('says where the changes of a pushed session are: on the desktop it came from', async () => {
    const sessionId = newId();
    const base = part(sessionId, [prompt('Fix it'), answer('Fixed')], { machine: 'studio-mac' });
    const withRepository = {
      ...base,
      session: {
        ...base.session,
        repoUrl: 'https://github.com/acme/widgets',
        metadata: { repository: 'acme/widgets' },
      },
    };
    expect((await send(withRepository)).status).toBe(200);
    const changes = await withKey(server, team.apiKey, 'GET', `/api/sessions/${sessionId}/changes`);
    expect(changes.status).toBe(200);
    expect(await changes.json()).toEqual({
      available: false,
      reason: 'pushed',
      message:
        'This session was pushed here from studio-mac: its changes are on that desktop, not on this server.',
    });
  });

  it('a pushed session without a repository, from a CLI run in a folder: that folder, not "no repository"', async () => {
    const sessionId = newId();
    const base = part(sessionId, [prompt('Fix it'), answer('Fixed')], { machine: 'studio-mac' });
    const fromFolder = { ...base, session: { ...base.session, folder: '/home/bo/src/widgets' } };
    expect((await send(fromFolder)).status).toBe(200);
    const changes = await withKey(server, team.apiKey, 'GET', `/api/sessions/${sessionId}/changes`);
    expect(await changes.json()).toEqual({
      available: false,
      reason: 'pushed',
      folder: '/home/bo/src/widgets',
      message:
        'This session was pushed here from studio-mac, where it ran in /home/bo/src/widgets: its changes are there, not on this server.',
    });
    const session = await withKey(server, team.apiKey, 'GET', `/api/sessions/${sessionId}`);
    expect(((await session.json()) as { session: { pushedFrom: unknown } }).session.pushedFrom).toMatchObject(
      {
        machine: 'studio-mac',
        folder: '/home/bo/src/widgets',
      },
    );
  });

  it('applies a part only after exactly the messages it follows, and tells open dashboards', async () => {
    const sessionId = newId();
    const stream = await openEventStream(`${server.url}/api/events?organizationId=${team.organizationId}`, {
      cookie: team.user.cookie,
    });
    expect(stream.response.status).toBe(200);
    const all = [prompt('a'), answer('b'), prompt('c'), answer('d')];
    expect((await send(part(sessionId, all.slice(0, 2), { messageCount: 4 }))).status).toBe(200);
    // Sent again (a retry after a crash): the server holds 2, not 0.
    const again = await send(part(sessionId, all.slice(0, 2), { messageCount: 4 }));
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { message: string } }).error.message).toContain(
      'holds 2 messages',
    );
    const gap = await send(part(sessionId, all.slice(3), { from: 3, messageCount: 4 }));
    expect(gap.status).toBe(409);
    expect((await send(part(sessionId, all.slice(2), { from: 2 }))).status).toBe(200);
    const state = await withKey(server, pushKey, 'GET', `/api/push/sessions/${sessionId}`);
    expect(await state.json()).toEqual({ messageCount: 4, updatedAt: AT, status: 'completed' });
    const held = await withKey(server, team.apiKey, 'GET', `/api/sessions/${sessionId}`);
    expect(((await held.json()) as { session: { messages: Message[] } }).session.messages).toEqual(all);
    const seen = await until(
      () => stream.events.map((e) => [e.event, (e.data as { sessionId?: string }).sessionId]),
      (events) => events.filter(([, id]) => id === sessionId).length >= 2,
    );
    expect(seen.filter(([, id]) => id === sessionId).map(([event]) => event)).toEqual([
      'session.created',
      'session.updated',
    ]);
    await stream.close();
  });

  it('refuses what is not a valid part, changing nothing', async () => {
    const sessionId = newId();
    const valid = part(sessionId, [prompt('x')]);
    const refusals: [string, unknown, number][] = [
      ['messages past messageCount', part(sessionId, [prompt('x'), answer('y')], { messageCount: 1 }), 400],
      ['an unknown member', { ...valid, extra: true }, 400],
      ['a machine name with an escape sequence', { ...valid, machine: 'laptop\u001b[31m' }, 400],
      ['a bad session id', { ...valid, session: { ...valid.session, id: 'ses_../../etc' } }, 400],
      [
        'a message outside the schema',
        { ...valid, messages: [{ type: 'message', createdAt: AT, message: { type: 'system', text: 'x' } }] },
        400,
      ],
      ['a negative from', { ...valid, from: -1 }, 400],
    ];
    for (const [what, body, status] of refusals) {
      expect((await send(body)).status, what).toBe(status);
    }
    const tooBig = await fetch(`${server.url}/api/push/sessions`, {
      method: 'POST',
      headers: { 'x-api-key': pushKey, 'content-type': 'application/json' },
      body: JSON.stringify({ ...valid, padding: 'x'.repeat(18 * 2 ** 20) }),
    });
    expect(tooBig.status).toBe(413);
    expect((await withKey(server, pushKey, 'GET', `/api/push/sessions/${sessionId}`)).status).toBe(404);
    expect((await withKey(server, pushKey, 'GET', '/api/push/sessions/not-an-id')).status).toBe(400);
  });

  it('refuses a revoked key, and a key of another workspace reading this one', async () => {
    const made = await server.accounts.createKey({ organizationId: team.organizationId, pushOnly: true });
    await server.accounts.revokeKey({ organizationId: team.organizationId, keyId: made.id });
    expect((await send(part(newId(), [prompt('x')]), made.key)).status).toBe(401);

    const sessionId = newId();
    expect((await send(part(sessionId, [prompt('mine')]))).status).toBe(200);
    const other = await seedWorkspace(server, 'other');
    const probe = await withKey(server, other.apiKey, 'GET', `/api/push/sessions/${sessionId}`);
    expect(probe.status).toBe(409);
  });
});
