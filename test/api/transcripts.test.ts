import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FullSessionResponseSchema,
  MessagesPageResponseSchema,
  type Message,
} from '../../src-shared/sessions.js';
import {
  createSession,
  seedWorkspace,
  startTestServer,
  withKey,
  type TestServer,
} from '../helpers/server.js';
import { until } from '../helpers/until.js';

const at = (n: number) => new Date(Date.UTC(2026, 10, 1, 9, 0, 0, n)).toISOString();

function reply(text: string): Message {
  return { type: 'assistant', message: { content: [{ type: 'text', text }] } };
}

/** A file read by a tool: most of a real transcript's bytes are these. */
function fileRead(n: number, bytes: number): Message {
  return {
    type: 'assistant',
    message: {
      content: [
        { type: 'tool_use', id: `toolu_${n}`, name: 'Read', input: { file_path: `src/module-${n}.ts` } },
        {
          type: 'tool_result',
          tool_use_id: `toolu_${n}`,
          content: `// module ${n}\n${'export const value = 1;\n'.repeat(Math.ceil(bytes / 24))}`,
          is_error: false,
        },
      ],
    },
  };
}

describe('transcripts over HTTP', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  let other: Awaited<ReturnType<typeof seedWorkspace>>;
  /** A session of about 9 MB (streamed) and one of a few KB (buffered and cached). */
  const big = { id: '', messages: [] as Message[] };
  const small = { id: '', messages: [] as Message[] };

  async function fill(target: { id: string; messages: Message[] }, messages: Message[]): Promise<void> {
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Read the code',
    });
    target.id = created.id;
    // The demo agent clones its sample project and names its branch just after the session is
    // made, then waits (its pace is an hour here): the session changes no more once it has.
    const branch = await until(
      async () => {
        const response = await withKey(server, owner.apiKey, 'GET', `/api/sessions/${created.id}`);
        return FullSessionResponseSchema.parse(await response.json()).session.metadata.branch;
      },
      (named) => typeof named === 'string',
      20_000,
    );
    expect(branch).toEqual(expect.any(String));
    target.messages = [{ type: 'user', message: { content: 'Read the code' } }];
    for (const [i, message] of messages.entries()) {
      await server.storage.write((tx) =>
        tx.sessions.appendMessage(target.id, owner.organizationId, message, null, at(i)),
      );
      target.messages.push(message);
    }
  }

  beforeAll(async () => {
    server = await startTestServer();
    owner = await seedWorkspace(server, 'owner');
    other = await seedWorkspace(server, 'other');
    await fill(
      big,
      Array.from({ length: 300 }, (_, i) => (i % 10 === 3 ? fileRead(i, 300_000) : reply(`Step ${i}.`))),
    );
    await fill(small, [reply('Looking.'), fileRead(1, 2_000), reply('Done.')]);
  });
  afterAll(() => server.dispose());

  it('answers the full form of a big session, streamed from its transcript, exactly as stored', async () => {
    const response = await withKey(server, owner.apiKey, 'GET', `/api/sessions/${big.id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    const text = await response.text();
    expect(text.length).toBeGreaterThan(9_000_000);
    const { session } = FullSessionResponseSchema.parse(JSON.parse(text));
    expect(session.messages).toEqual(big.messages);
  });

  it('answers a small session from one buffer, the same bytes again from the cache', async () => {
    const first = await (await withKey(server, owner.apiKey, 'GET', `/api/sessions/${small.id}`)).text();
    const again = await (await withKey(server, owner.apiKey, 'GET', `/api/sessions/${small.id}`)).text();
    expect(again).toBe(first);
    expect(FullSessionResponseSchema.parse(JSON.parse(first)).session.messages).toEqual(small.messages);
  });

  it('pages through the messages with after and limit, in conversation order', async () => {
    const seen: Message[] = [];
    let after = 0;
    for (let pages = 0; pages < 100; pages += 1) {
      const response = await withKey(
        server,
        owner.apiKey,
        'GET',
        `/api/sessions/${big.id}/messages?after=${after}&limit=37`,
      );
      expect(response.status).toBe(200);
      const page = MessagesPageResponseSchema.parse(await response.json());
      expect(page.total).toBe(big.messages.length);
      expect(page.messages.length).toBeLessThanOrEqual(37);
      seen.push(...page.messages);
      if (page.nextAfter === undefined) break;
      expect(page.nextAfter).toBe(after + page.messages.length);
      after = page.nextAfter;
    }
    expect(seen).toEqual(big.messages);
  });

  it('stops a page at about 4 MiB, but always answers with at least one message', async () => {
    const response = await withKey(
      server,
      owner.apiKey,
      'GET',
      `/api/sessions/${big.id}/messages?limit=1000`,
    );
    const page = MessagesPageResponseSchema.parse(await response.json());
    const bytes = page.messages.reduce((n, m) => n + JSON.stringify(m).length, 0);
    expect(bytes).toBeGreaterThanOrEqual(4 * 1024 * 1024);
    expect(bytes).toBeLessThan(4 * 1024 * 1024 + 400_000);
    expect(page.nextAfter).toBe(page.messages.length);
    expect(page.messages).toEqual(big.messages.slice(0, page.messages.length));
  });

  it('answers pages that start anywhere: between marks, at the last message, past the end', async () => {
    for (const after of [1, 63, 64, 65, 127, 128, 200, 300]) {
      const page = MessagesPageResponseSchema.parse(
        await (
          await withKey(
            server,
            owner.apiKey,
            'GET',
            `/api/sessions/${big.id}/messages?after=${after}&limit=3`,
          )
        ).json(),
      );
      expect(page.messages, `after=${after}`).toEqual(big.messages.slice(after, after + 3));
    }
    const past = MessagesPageResponseSchema.parse(
      await (
        await withKey(server, owner.apiKey, 'GET', `/api/sessions/${big.id}/messages?after=5000`)
      ).json(),
    );
    expect(past).toEqual({ messages: [], total: big.messages.length });
  });

  it('refuses bad paging values with 400, and keeps the access rules (403, 404, 401)', async () => {
    for (const query of ['after=-1', 'limit=0', 'limit=1001', 'after=abc']) {
      const response = await withKey(
        server,
        owner.apiKey,
        'GET',
        `/api/sessions/${big.id}/messages?${query}`,
      );
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('validation_failed');
    }
    expect((await withKey(server, other.apiKey, 'GET', `/api/sessions/${big.id}/messages`)).status).toBe(403);
    expect(
      (await withKey(server, owner.apiKey, 'GET', '/api/sessions/ses_AAAAAAAAAAAAAAAAAAAAAA/messages'))
        .status,
    ).toBe(404);
    expect((await fetch(`${server.url}/api/sessions/${big.id}/messages`)).status).toBe(401);
  });

  it('never answers with a message whose bytes are not yet in the file, while an agent appends', async () => {
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Keep writing',
    });
    // Each message at the place its write was given (sql.js writes one at a time in the order
    // they are called, PostgreSQL in the order the writes commit).
    const appended: Message[] = [{ type: 'user', message: { content: 'Keep writing' } }];
    let writing = true;
    // Bursts of writes, so that most of the time some are in flight (in memory, not yet on disk).
    const writer = (async () => {
      for (let burst = 0; burst < 12; burst += 1) {
        const writes: Promise<void>[] = [];
        for (let i = burst * 10; i < burst * 10 + 10; i += 1) {
          const message = i % 4 === 0 ? fileRead(i, 20_000) : reply(`Line ${i}`);
          writes.push(
            server.storage
              .write((tx) =>
                tx.sessions.appendMessage(created.id, owner.organizationId, message, null, at(i)),
              )
              .then((seq) => void (appended[seq - 1] = message)),
          );
        }
        await Promise.all(writes);
      }
      writing = false;
    })();
    // What each read answered, checked against the whole transcript once every write is done.
    const answered: Message[][] = [];
    while (writing || answered.length < 10) {
      const [full, page] = await Promise.all([
        withKey(server, owner.apiKey, 'GET', `/api/sessions/${created.id}`).then((r) => r.json()),
        withKey(server, owner.apiKey, 'GET', `/api/sessions/${created.id}/messages?limit=1000`).then((r) =>
          r.json(),
        ),
      ]);
      answered.push(FullSessionResponseSchema.parse(full).session.messages);
      const paged = MessagesPageResponseSchema.parse(page);
      expect(paged.total).toBeGreaterThanOrEqual(paged.messages.length);
      answered.push(paged.messages);
    }
    await writer;
    const whole = await withKey(server, owner.apiKey, 'GET', `/api/sessions/${created.id}`);
    expect(FullSessionResponseSchema.parse(await whole.json()).session.messages).toEqual(appended);
    expect(appended).toHaveLength(121);
    for (const messages of answered) expect(messages).toEqual(appended.slice(0, messages.length));
  });

  it('lists the messages route in the OpenAPI document', async () => {
    const document = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as {
      paths: Record<string, { get?: { parameters?: Array<{ name: string }> } }>;
    };
    const route = document.paths['/api/sessions/{sessionId}/messages'];
    expect(route?.get?.parameters?.map((p) => p.name)).toEqual(
      expect.arrayContaining(['sessionId', 'after', 'limit']),
    );
  });
});
