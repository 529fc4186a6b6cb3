import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListSessionsResponseSchema, type Stats } from '../../src-shared/index.js';
import {
  createSession,
  PASSWORD,
  signIn,
  startTestServer,
  steppableClock,
  uniqueEmail,
  withKey,
  type TestServer,
} from '../helpers/server.js';

const WEEK = 7 * 24 * 60 * 60 * 1000;
const T0 = '2026-05-01T00:00:00.000Z';

describe('stats at the 7-day boundaries', () => {
  const clock = steppableClock(T0);
  let server: TestServer;
  let organizationId: string;
  let apiKey: string;
  const cookies: Record<'ann' | 'bob' | 'cat', string> = { ann: '', bob: '', cat: '' };
  let emails: Record<'ann' | 'bob' | 'cat', string>;

  /** The clock jumps weeks here, past the sign-in lifetime: sign in again after a jump. */
  async function signInAgain(...names: ('ann' | 'bob' | 'cat')[]) {
    for (const name of names) cookies[name] = await signIn(server, emails[name]);
  }

  beforeAll(async () => {
    server = await startTestServer({ clock });
    emails = { ann: uniqueEmail('ann'), bob: uniqueEmail('bob'), cat: uniqueEmail('cat') };
    for (const [name, email] of Object.entries(emails)) {
      await server.accounts.createUser({ email, name, password: PASSWORD });
    }
    const workspace = await server.accounts.createWorkspace({ name: 'Stats', ownerEmail: emails.ann });
    organizationId = workspace.organizationId;
    await server.accounts.addMember({ organizationId, email: emails.bob });
    await server.accounts.addMember({ organizationId, email: emails.cat });
    apiKey = (await server.accounts.createKey({ organizationId })).key;
    for (const name of ['ann', 'bob', 'cat'] as const) cookies[name] = await signIn(server, emails[name]);
  });
  afterAll(async () => server.dispose());

  async function stats(): Promise<Stats> {
    const response = await withKey(server, apiKey, 'GET', '/api/sessions');
    return ListSessionsResponseSchema.parse(await response.json()).stats;
  }

  async function merge(sessionId: string) {
    await server.storage.write((tx) =>
      tx.sessions.updatePullRequest(
        sessionId,
        {
          number: 7,
          url: 'https://example.com/acme/web/pull/7',
          status: 'merged',
          mergedAt: clock.now().toISOString(),
        },
        clock.now().toISOString(),
      ),
    );
  }

  it('counts what happened exactly 7 days ago, and not a millisecond before', async () => {
    clock.set(T0);
    const annSession = await createSession(server, cookies.ann, {
      organizationId,
      initialMessage: 'ann at T0',
    });
    await merge(annSession.id);
    clock.advance(1);
    // Bob creates a session without a prompt: an author, and so a human, too.
    const bobSession = await createSession(server, cookies.bob, { organizationId });
    await withKey(server, apiKey, 'PATCH', `/api/sessions/${bobSession.id}`, { status: 'completed' });

    clock.set(new Date(Date.parse(T0) + WEEK).toISOString());
    expect(await stats()).toEqual({
      mergesPastWeek: 1,
      authorsPastWeek: 2,
      humansPastWeek: 2,
      humansPromptingNow: 1,
      costPastWeek: 0,
    });

    clock.advance(1);
    expect(await stats()).toEqual({
      mergesPastWeek: 0,
      authorsPastWeek: 1,
      humansPastWeek: 1,
      humansPromptingNow: 1,
      costPastWeek: 0,
    });

    clock.advance(1);
    expect(await stats()).toEqual({
      mergesPastWeek: 0,
      authorsPastWeek: 0,
      humansPastWeek: 0,
      humansPromptingNow: 1,
      costPastWeek: 0,
    });
  });

  it('a follow-up prompt makes its sender a human of the week, not an author', async () => {
    const start = Date.parse(T0) + 10 * WEEK;
    clock.set(new Date(start).toISOString());
    await signInAgain('ann');
    const session = await createSession(server, cookies.ann, { organizationId, initialMessage: 'old work' });
    clock.set(new Date(start + 2 * WEEK).toISOString());
    const catUserId = (await server.storage.repos.users.findByEmail(emails.cat))!.id;
    await server.storage.write((tx) =>
      tx.sessions.appendMessage(
        session.id,
        organizationId,
        { type: 'user', message: { content: 'cat follows up' } },
        catUserId,
        clock.now().toISOString(),
      ),
    );
    const now = await stats();
    expect(now.authorsPastWeek).toBe(0);
    expect(now.humansPastWeek).toBe(1);
  });

  it('humansPromptingNow counts distinct authors of active sessions', async () => {
    await signInAgain('cat');
    const before = (await stats()).humansPromptingNow;
    const one = await createSession(server, cookies.cat, { organizationId, initialMessage: 'a' });
    const two = await createSession(server, cookies.cat, { organizationId, initialMessage: 'b' });
    expect((await stats()).humansPromptingNow).toBe(before + 1);
    await withKey(server, apiKey, 'PATCH', `/api/sessions/${one.id}`, { status: 'failed' });
    expect((await stats()).humansPromptingNow).toBe(before + 1);
    await withKey(server, apiKey, 'PATCH', `/api/sessions/${two.id}`, { status: 'completed' });
    expect((await stats()).humansPromptingNow).toBe(before);
  });

  it('a merge leaves the week when its pull request is reopened', async () => {
    const start = Date.parse(T0) + 20 * WEEK;
    clock.set(new Date(start).toISOString());
    await signInAgain('bob');
    const session = await createSession(server, cookies.bob, { organizationId, initialMessage: 'merge me' });
    await merge(session.id);
    expect((await stats()).mergesPastWeek).toBe(1);
    await server.storage.write((tx) =>
      tx.sessions.updatePullRequest(
        session.id,
        { number: 7, url: 'https://example.com/acme/web/pull/7', status: 'open' },
        clock.now().toISOString(),
      ),
    );
    expect((await stats()).mergesPastWeek).toBe(0);
  });
});
