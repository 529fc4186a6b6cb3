import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AgentSettingsResponseSchema,
  FullSessionResponseSchema,
  ListSessionsResponseSchema,
  SetupResponseSchema,
  SetupStatusSchema,
} from '../../src-shared/index.js';
import { DEMO } from '../../src-main/demo/people.js';
import { runCli, startServe } from '../helpers/cli.js';
import {
  asUser,
  launchCookie,
  PASSWORD,
  seedWorkspace,
  signIn,
  startTestServer,
  tempDir,
  type TestServer,
} from '../helpers/server.js';
import { rm } from 'node:fs/promises';
import { writeNamedCommands } from '../../src-main/agents/kinds/command/named-commands.js';

describe('the demo workspace', () => {
  it(
    'serve --demo creates it once, prints its sign-in, and every stat has something to show',
    { timeout: 90_000 },
    async () => {
      const dataDir = tempDir('sessiondesk-demo-');
      try {
        const server = await startServe(dataDir, ['--demo', '--log-level', 'warn']);
        await expect.poll(() => server.stdout()).toContain(`organizationId ${DEMO.organizationId}`);
        // Printed on the next line, which may arrive in a later chunk.
        await expect.poll(() => server.stdout()).toContain('Demo sign-in:');
        const password = /Demo sign-in: demo@sessiondesk\.local \/ (\S+)/u.exec(server.stdout())?.[1];
        // Random, made with the demo: never the password earlier versions published.
        expect(password).toMatch(/^[\w-]{16,}$/u);
        expect(password).not.toBe('sessiondesk-demo');
        // Never served over HTTP: the URL serve printed signs in to the demo instead.
        expect(await (await fetch(`${server.url}/api/demo/sign-in`)).text()).not.toContain(password);
        const byToken = await fetch(`${server.url}/api/demo/sign-in`, {
          method: 'POST',
          headers: { origin: server.url, cookie: await launchCookie(server) },
        });
        expect(byToken.status).toBe(200);
        expect(((await byToken.json()) as { user: { email: string } }).user.email).toBe(DEMO.email);
        const published = await fetch(`${server.url}/api/auth/sign-in`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: DEMO.email, password: 'sessiondesk-demo' }),
        });
        expect(published.status).toBe(401);
        const signed = await fetch(`${server.url}/api/auth/sign-in`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: DEMO.email, password }),
        });
        const cookie = (signed.headers.get('set-cookie') ?? '').split(';')[0]!;
        const list = ListSessionsResponseSchema.parse(
          await (
            await fetch(`${server.url}/api/sessions?organizationId=${DEMO.organizationId}`, {
              headers: { cookie },
            })
          ).json(),
        );
        expect(list.sessions.length).toBeGreaterThanOrEqual(35);
        expect(new Set(list.sessions.map((s) => s.status))).toEqual(
          new Set(['active', 'completed', 'failed']),
        );
        expect(
          new Set(list.sessions.flatMap((s) => (s.metadata.prStatus ? [s.metadata.prStatus] : []))),
        ).toEqual(new Set(['draft', 'open', 'merged', 'closed']));
        const { mergesPastWeek, authorsPastWeek, humansPastWeek, humansPromptingNow } = list.stats;
        for (const value of [mergesPastWeek, authorsPastWeek, humansPastWeek, humansPromptingNow]) {
          expect(value).toBeGreaterThan(0);
        }
        // The simulated runs have a believable cost, kept apart from what real agents reported.
        expect(list.stats.costPastWeek).toBe(0);
        expect(list.stats.simulatedCostPastWeek).toBeGreaterThan(0);
        for (const summary of list.sessions.filter((s) => s.status !== 'active')) {
          expect(summary.usage?.outputTokens).toBeGreaterThan(0);
          expect(summary.usage?.costUsd).toBeGreaterThan(0);
        }
        expect(list.sessions.every((s) => s.messageCount > 3)).toBe(true);
        // The simulated agent wrote them all, and they say so.
        expect(new Set(list.sessions.map((s) => s.agent))).toEqual(new Set(['demo']));
        const one = (await (
          await fetch(`${server.url}/api/sessions/${list.sessions[0]!.id}`, { headers: { cookie } })
        ).json()) as {
          session: { tasks: unknown[] };
        };
        expect(one.session.tasks.length).toBeGreaterThan(0);

        // Every session tells one story: failed ones never end on passing tests with every task
        // done, and active ones were started minutes ago.
        for (const summary of list.sessions) {
          const full = FullSessionResponseSchema.parse(
            await (await fetch(`${server.url}/api/sessions/${summary.id}`, { headers: { cookie } })).json(),
          ).session;
          const texts = full.messages.flatMap((m) =>
            m.type === 'assistant'
              ? m.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))
              : m.type === 'result'
                ? [m.result]
                : [],
          );
          if (full.status === 'failed') {
            expect(texts.join(' ')).not.toContain('The tests pass');
            expect(full.tasks.every((t) => t.status === 'completed')).toBe(false);
            expect(full.messages.at(-1)).toMatchObject({ type: 'result', is_error: true });
          }
          // The agent names the request in whole sentences: never a prompt cut off mid-way.
          expect(texts.join(' ')).not.toMatch(/step by step|\*\*[^*]*\.\*\*/u);
          if (full.status === 'completed') {
            expect(full.messages.at(-1)).toMatchObject({ type: 'result', result: `Finished: ${full.title}` });
          }
          if (full.status === 'active') {
            expect(Date.now() - Date.parse(full.createdAt)).toBeLessThan(60 * 60_000);
            expect(full.messages.at(-1)?.type).not.toBe('result');
            // Nothing runs it: it waits for its person, who is asked a question.
            expect(full.agentState).toBeUndefined();
            expect(texts.at(-1)).toContain('Answer with a follow-up');
            // The task list in the transcript and the session's tasks agree.
            const lastTodo = full.messages
              .flatMap((m) => (m.type === 'assistant' ? m.message.content : []))
              .filter((b) => b.type === 'tool_use' && b.name === 'TodoWrite')
              .at(-1) as { input: { todos: { status: string }[] } } | undefined;
            const done = (statuses: string[]) => statuses.filter((st) => st === 'completed').length;
            expect(lastTodo).toBeDefined();
            expect(done(full.tasks.map((t) => t.status))).toBe(
              done(lastTodo!.input.todos.map((t) => t.status)),
            );
            expect(full.tasks.map((t) => t.status)).toEqual(lastTodo!.input.todos.map((t) => t.status));
          }
        }
        expect(list.stats.humansPromptingNow).toBeLessThan(4);
        await server.stop();

        // Idempotent: a second start adds nothing.
        const again = await startServe(dataDir, ['--demo', '--log-level', 'warn']);
        const relist = ListSessionsResponseSchema.parse(
          await (
            await fetch(`${again.url}/api/sessions?organizationId=${DEMO.organizationId}`, {
              headers: { cookie },
            })
          ).json(),
        );
        expect(relist.sessions.map((s) => s.id)).toEqual(list.sessions.map((s) => s.id));
        await again.stop();
        const help = await runCli(['serve', '--help']);
        expect(help.stdout).toContain('--demo');
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  );

  it('the first-run demo button seeds it and signs in, and setup stays open until an own account exists', async () => {
    const server = await startTestServer();
    try {
      const launch = await launchCookie(server);
      const demo = () =>
        fetch(`${server.url}/api/setup/demo`, {
          method: 'POST',
          headers: { origin: server.origin, cookie: launch },
        });
      const status = async () =>
        SetupStatusSchema.parse(await (await fetch(`${server.url}/api/setup`)).json());
      const response = await demo();
      expect(response.status).toBe(201);
      const body = SetupResponseSchema.parse(await response.json());
      expect(body.workspace.organizationId).toBe(DEMO.organizationId);
      const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
      expect((await asUser(server, cookie, 'GET', '/api/sessions')).status).toBe(200);
      // Only the demo's accounts exist: the demo can be opened again, and setup is still open.
      expect(await status()).toMatchObject({ needed: true, demo: true });
      expect((await demo()).status).toBe(201);
      const setup = await fetch(`${server.url}/api/setup`, {
        method: 'POST',
        headers: { origin: server.origin, 'content-type': 'application/json', cookie: launch },
        body: JSON.stringify({
          email: 'own@example.test',
          name: 'Own',
          password: PASSWORD,
          workspaceName: 'Mine',
        }),
      });
      expect(setup.status).toBe(201);
      expect(await status()).toEqual({
        needed: false,
        demo: true,
        demoAvailable: true,
        launchToken: false,
        setupCode: false,
      });
      expect((await demo()).status).toBe(409);
    } finally {
      await server.dispose();
    }
  });
});

describe('agent settings', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer();
    owner = await seedWorkspace(server);
  });
  afterAll(async () => server.dispose());

  it('defaults to the demo agent; owners choose a command; members only read', async () => {
    const path = `/api/workspaces/${owner.organizationId}/agent`;
    const initial = AgentSettingsResponseSchema.parse(
      await (await asUser(server, owner.user.cookie, 'GET', path)).json(),
    );
    expect(initial).toEqual(
      expect.objectContaining({ settings: { agent: 'demo' }, source: 'default', commands: [] }),
    );
    expect((await asUser(server, owner.user.cookie, 'PUT', path, { agent: 'command' })).status).toBe(400);
    await writeNamedCommands(server.dataDir, { 'my-agent': ['my-agent', '-p'] });
    expect(
      (
        await asUser(server, owner.user.cookie, 'PUT', path, {
          agent: 'command',
          commandName: 'my-agent',
          timeoutMs: 10,
        })
      ).status,
    ).toBe(400);
    const set = await asUser(server, owner.user.cookie, 'PUT', path, {
      agent: 'command',
      commandName: 'my-agent',
      timeoutMs: 60_000,
    });
    expect(AgentSettingsResponseSchema.parse(await set.json())).toEqual(
      expect.objectContaining({
        settings: { agent: 'command', commandName: 'my-agent', timeoutMs: 60_000 },
        source: 'workspace',
        commands: [{ name: 'my-agent', command: ['my-agent', '-p'] }],
      }),
    );
    const member = await seedWorkspace(server, 'member');
    await server.accounts.addMember({ organizationId: owner.organizationId, email: member.user.email });
    expect((await asUser(server, member.user.cookie, 'GET', path)).status).toBe(200);
    expect((await asUser(server, member.user.cookie, 'PUT', path, { agent: 'demo' })).status).toBe(403);
    expect((await fetch(`${server.url}${path}`, { headers: { 'x-api-key': owner.apiKey } })).status).toBe(
      400,
    );
    const cookie = await signIn(server, owner.user.email);
    expect((await asUser(server, cookie, 'PUT', path, { agent: 'demo' })).status).toBe(200);
  });
});
