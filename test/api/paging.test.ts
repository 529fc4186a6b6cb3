import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListSessionsResponseSchema } from '../../src-shared/index.js';
import {
  createSession,
  seedWorkspace,
  startTestServer,
  steppableClock,
  withKey,
  type TestServer,
} from '../helpers/server.js';

describe('paging with limit and cursor', () => {
  // Many sessions share a millisecond, so the id tie-break is exercised too.
  const clock = steppableClock('2026-06-01T00:00:00.000Z');
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  const created: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ clock });
    owner = await seedWorkspace(server);
    for (let i = 0; i < 45; i += 1) {
      if (i % 3 === 0) clock.advance(1);
      created.push(
        (
          await createSession(server, owner.user.cookie, {
            organizationId: owner.organizationId,
            initialMessage: `s${i}`,
          })
        ).id,
      );
    }
  });
  afterAll(async () => server.dispose());

  async function page(query: string) {
    const response = await withKey(server, owner.apiKey, 'GET', `/api/sessions?${query}`);
    expect(response.status).toBe(200);
    return ListSessionsResponseSchema.parse(await response.json());
  }

  it('walks every session once, in the order of the full list', async () => {
    const full = (await page('')).sessions.map((s) => s.id);
    expect(new Set(full)).toEqual(new Set(created));
    const walked: string[] = [];
    let cursor: string | undefined;
    do {
      const body = await page(`limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      expect(body.sessions.length).toBeLessThanOrEqual(7);
      walked.push(...body.sessions.map((s) => s.id));
      cursor = body.nextCursor;
    } while (cursor);
    expect(walked).toEqual(full);
  });

  it('neither skips nor repeats while sessions are created and updated between pages', async () => {
    const before = new Set((await page('')).sessions.map((s) => s.id));
    const walked: string[] = [];
    let cursor: string | undefined;
    let round = 0;
    do {
      const body = await page(`limit=10${cursor ? `&cursor=${cursor}` : ''}`);
      walked.push(...body.sessions.map((s) => s.id));
      cursor = body.nextCursor;
      // Meanwhile: a new session, and an update to one already seen and one not yet seen.
      clock.advance(1);
      await createSession(server, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: `new ${round}`,
      });
      await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${walked[0]}`, { title: `seen ${round}` });
      await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${created[round]}`, {
        status: 'completed',
      });
      round += 1;
    } while (cursor);
    expect(new Set(walked).size).toBe(walked.length);
    for (const id of before) expect(walked).toContain(id);
  });

  it('the last page has no nextCursor; a limit beyond the total returns everything', async () => {
    const all = await page('limit=1000');
    expect(all.nextCursor).toBeUndefined();
    const exact = await page(`limit=${all.sessions.length}`);
    expect(exact.nextCursor).toBeUndefined();
    const short = await page(`limit=${all.sessions.length - 1}`);
    expect(short.nextCursor).toBeDefined();
  });

  it('filters apply across pages', async () => {
    const statusPages: string[] = [];
    let cursor: string | undefined;
    do {
      const body = await page(`limit=2&status=completed${cursor ? `&cursor=${cursor}` : ''}`);
      expect(body.sessions.every((s) => s.status === 'completed')).toBe(true);
      statusPages.push(...body.sessions.map((s) => s.id));
      cursor = body.nextCursor;
    } while (cursor);
    expect(statusPages).toEqual((await page('status=completed')).sessions.map((s) => s.id));
  });

  it('says how many sessions match on every page, with the filters, and only with a limit', async () => {
    const all = (await page('')).sessions.length;
    expect(all).toBeGreaterThanOrEqual(45);
    const first = await page('limit=10');
    expect(first.total).toBe(all);
    const second = await page(`limit=10&cursor=${encodeURIComponent(first.nextCursor!)}`);
    expect(second.total).toBe(all);
    const matching = (await page('q=s1')).sessions.length;
    expect(matching).toBeGreaterThanOrEqual(11); // s1, s10 … s19
    expect((await page('limit=10&q=s1')).total).toBe(matching);
    expect((await page('limit=10&status=failed')).total).toBe(0);
    expect((await page('')).total).toBeUndefined();
    // A new session counts at once (the cached page is dropped with the change).
    await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'late',
    });
    expect((await page('limit=10')).total).toBe(all + 1);
  });

  it('a limit that is not a number says so in words, not as a type error', async () => {
    for (const [query, message] of [
      ['limit=abc', 'must be a whole number from 1 to 1000'],
      ['limit=2.5', 'must be a whole number from 1 to 1000'],
      ['limit=0', 'must be a whole number from 1 to 1000'],
      ['limit=1001', 'must be a whole number from 1 to 1000'],
    ] as const) {
      const response = await withKey(server, owner.apiKey, 'GET', `/api/sessions?${query}`);
      expect(response.status).toBe(400);
      const body = (await response.json()) as {
        error: { details: Array<{ path: string; message: string }> };
      };
      expect(body.error.details).toEqual([{ path: 'query.limit', message }]);
    }
  });
});
