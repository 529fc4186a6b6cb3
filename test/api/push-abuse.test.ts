import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src-shared/sessions.js';
import {
  asUser,
  seedWorkspace,
  startTestServer,
  steppableClock,
  withKey,
  type TestServer,
} from '../helpers/server.js';

/**
 * Pushes (`POST /api/push/sessions`) from keys that must not reach past their own: an author
 * outside the key's workspace, a colleague's pushed session, times in the future, and messages
 * nested deeper than any agent writes.
 */

const NOW = '2026-03-01T12:00:00.000Z';
const AT = '2026-03-01T09:00:00.000Z';
let counter = 0;
const newId = () => `ses_pushabuse${String((counter += 1)).padStart(13, '0')}`;

const prompt = (text: string): Message => ({ type: 'user', message: { content: text } });
const answer = (text: string): Message => ({
  type: 'assistant',
  message: { content: [{ type: 'text', text }] },
});

interface PartOptions {
  from?: number;
  messageCount?: number;
  author?: { name: string; email: string };
  machine?: string;
  status?: string;
  at?: string;
}

/** A part as `sessiondesk push` sends it. */
function part(sessionId: string, messages: Message[], options: PartOptions = {}) {
  const author = options.author ?? { name: 'Someone', email: 'someone@desk.test' };
  return {
    machine: options.machine ?? 'laptop-7',
    session: {
      type: 'session',
      id: sessionId,
      title: 'Pushed work',
      status: options.status ?? 'completed',
      createdAt: AT,
      updatedAt: options.at ?? AT,
      model: 'claude-opus-4-6',
      author: { id: 'usr_elsewhere', ...author },
      metadata: {},
      baseBranch: 'main',
      tasks: [],
      messageCount: options.messageCount ?? (options.from ?? 0) + messages.length,
    },
    from: options.from ?? 0,
    messages: messages.map((message) => ({
      type: 'message',
      createdAt: options.at ?? AT,
      ...(message.type === 'user' ? { authorEmail: author.email } : {}),
      message,
    })),
  };
}

interface Held {
  author: { id: string; name: string };
  status: string;
  updatedAt: string;
  messages: Message[];
  pushedFrom?: { machine: string; author: { name: string; email: string } };
}

describe('pushes that reach past their key', () => {
  let server: TestServer;
  let team: Awaited<ReturnType<typeof seedWorkspace>>;
  const clock = steppableClock(NOW);
  beforeAll(async () => {
    server = await startTestServer({ clock });
    team = await seedWorkspace(server, 'team');
  });
  afterAll(async () => server.dispose());

  const push = (key: string, body: unknown) => withKey(server, key, 'POST', '/api/push/sessions', body);
  const held = async (sessionId: string): Promise<Held> => {
    const response = await withKey(server, team.apiKey, 'GET', `/api/sessions/${sessionId}`);
    expect(response.status, await response.clone().text()).toBe(200);
    return ((await response.json()) as { session: Held }).session;
  };
  const refusal = async (response: Response) => ({ status: response.status, message: await response.text() });

  /** A member of the team, signed in, with a push-only key of their own made in the dashboard. */
  async function member(name: string) {
    const person = await seedWorkspace(server, name);
    const added = await asUser(
      server,
      team.user.cookie,
      'POST',
      `/api/workspaces/${team.organizationId}/members`,
      {
        email: person.user.email,
      },
    );
    expect(added.status).toBe(201);
    const pushKey = async () => {
      const made = await asUser(
        server,
        person.user.cookie,
        'POST',
        `/api/workspaces/${team.organizationId}/keys`,
        {
          label: `${name}'s laptop`,
          pushOnly: true,
        },
      );
      expect(made.status).toBe(201);
      return ((await made.json()) as { key: { key: string } }).key.key;
    };
    return { ...person, pushKey };
  }

  it("never makes an account of another workspace a session's author, and says whom it chose", async () => {
    // Someone of another workspace, whose id and name must not show here.
    const stranger = await seedWorkspace(server, 'stranger');
    const adminKey = (
      await server.accounts.createKey({ organizationId: team.organizationId, pushOnly: true })
    ).key;
    const sessionId = newId();
    const pushed = await push(
      adminKey,
      part(sessionId, [prompt('Hi'), answer('Hello')], {
        author: { name: 'Stranger', email: stranger.user.email },
      }),
    );
    expect(pushed.status, await pushed.clone().text()).toBe(200);
    const session = await held(sessionId);
    expect(session.author.id).toBe(team.user.userId);
    expect(JSON.stringify(session)).not.toContain(stranger.user.userId);
    expect(JSON.stringify(session)).not.toContain('User stranger');
    const said = (await pushed.json()) as { author?: { name: string; email: string }; authorNote?: string };
    expect(said.author?.email).toBe(team.user.email);
    expect(said.authorNote).toContain(`${stranger.user.email} is not a member of this workspace`);

    // A member of the workspace named by the desktop is its author, as before.
    const colleague = await member('colleague');
    const theirs = newId();
    const named = await push(
      adminKey,
      part(theirs, [prompt('Mine')], { author: { name: 'Colleague', email: colleague.user.email } }),
    );
    expect(named.status).toBe(200);
    expect(((await named.json()) as { authorNote?: string }).authorNote).toBeUndefined();
    expect((await held(theirs)).author.id).toBe(colleague.user.userId);
  });

  it('lets only the key, or the person, that first pushed a session extend it; where it came from stays', async () => {
    const alice = await member('alice');
    const bob = await member('bob');
    const aliceKey = await alice.pushKey();
    const bobKey = await bob.pushKey();
    const adminKey = (await server.accounts.createKey({ organizationId: team.organizationId })).key;
    const sessionId = newId();
    const aliceAuthor = { name: 'Alice', email: alice.user.email };
    expect(
      (
        await push(
          aliceKey,
          part(sessionId, [prompt('Fix it'), answer('Fixed')], {
            author: aliceAuthor,
            machine: 'alice-laptop',
          }),
        )
      ).status,
    ).toBe(200);

    // A colleague's push-only key, and a key of the workspace the administrator made: refused.
    const forged = part(sessionId, [answer('I am Alice, trust me'), answer('rm -rf')], {
      from: 2,
      author: { name: 'Mallory', email: bob.user.email },
      machine: 'mallory-box',
      status: 'failed',
    });
    for (const key of [bobKey, adminKey]) {
      const refused = await refusal(await push(key, forged));
      expect(refused.status).toBe(409);
      expect(refused.message).toContain('was pushed with another key');
    }
    // Nor may they read how far it is held.
    expect((await withKey(server, bobKey, 'GET', `/api/push/sessions/${sessionId}`)).status).toBe(409);
    let session = await held(sessionId);
    expect(session.messages).toHaveLength(2);
    expect(session.status).toBe('completed');
    expect(session.pushedFrom).toMatchObject({ machine: 'alice-laptop', author: aliceAuthor });

    // Alice's own key goes on, and so does a new key of hers; where it came from is set once.
    const grown = part(sessionId, [prompt('More'), answer('Done')], {
      from: 2,
      author: { name: 'Alice Renamed', email: alice.user.email },
      machine: 'alice-desktop',
    });
    expect((await push(aliceKey, grown)).status).toBe(200);
    const again = part(sessionId, [answer('Later')], {
      from: 4,
      author: aliceAuthor,
      machine: 'alice-desktop',
    });
    expect((await push(await alice.pushKey(), again)).status).toBe(200);
    session = await held(sessionId);
    expect(session.messages).toHaveLength(5);
    expect(session.pushedFrom).toMatchObject({ machine: 'alice-laptop', author: aliceAuthor });
  });

  it('refuses times more than 5 minutes in the future with a 400, and takes a clock a little ahead', async () => {
    const key = (await server.accounts.createKey({ organizationId: team.organizationId, pushOnly: true }))
      .key;
    const future = '2099-01-01T00:00:00.000Z';
    const inSixMinutes = new Date(Date.parse(NOW) + 6 * 60_000).toISOString();
    const base = part(newId(), [prompt('x')]);
    const cases: [string, unknown][] = [
      ['updatedAt', { ...base, session: { ...base.session, updatedAt: future } }],
      [
        'createdAt',
        { ...base, session: { ...base.session, createdAt: inSixMinutes, updatedAt: inSixMinutes } },
      ],
      ['a message', { ...base, messages: [{ ...base.messages[0], createdAt: future }] }],
      ['prMergedAt', { ...base, session: { ...base.session, prMergedAt: future } }],
    ];
    for (const [what, body] of cases) {
      const refused = await push(key, body);
      expect(refused.status, what).toBe(400);
      expect(await refused.text(), what).toContain('in the future');
    }
    const fourMinutes = new Date(Date.parse(NOW) + 4 * 60_000).toISOString();
    const ahead = part(newId(), [prompt('x')], { at: fourMinutes });
    expect((await push(key, ahead)).status).toBe(200);
  });

  it('refuses a message nested deeper than 64 levels with a 400, never a 500, and stores nothing of it', async () => {
    const key = (await server.accounts.createKey({ organizationId: team.organizationId, pushOnly: true }))
      .key;
    for (const depth of [6000, 3000, 70]) {
      // Written as text: JSON.stringify itself gives up on a value this deep.
      const input = `${'{"deeper":'.repeat(depth)}"bottom"${'}'.repeat(depth)}`;
      const sessionId = newId();
      const deep: Message = {
        type: 'assistant',
        message: { content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: 'INPUT' }] },
      };
      const body = JSON.stringify(part(sessionId, [prompt('x'), deep])).replace('"INPUT"', input);
      const refused = await fetch(`${server.url}/api/push/sessions`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body,
      });
      expect(refused.status, `${depth} levels`).toBe(400);
      expect(await refused.text()).toContain('nested more than 64 levels');
      expect((await withKey(server, key, 'GET', `/api/push/sessions/${sessionId}`)).status).toBe(404);
    }
    // Deep enough for any agent's real output.
    let input: unknown = 'bottom';
    for (let i = 0; i < 50; i += 1) input = [input];
    const fine: Message = {
      type: 'assistant',
      message: { content: [{ type: 'tool_use', id: 'toolu_2', name: 'Bash', input }] },
    };
    expect((await push(key, part(newId(), [prompt('x'), fine]))).status).toBe(200);
  });
});
