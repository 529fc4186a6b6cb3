import { createServer } from 'node:net';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentCheckSchema, type AgentCheck } from '../../src-shared/agent-check.js';
import { ErrorResponseSchema } from '../../src-shared/errors.js';
import { getSession, waitForResults } from '../helpers/agent-runs.js';
import { realCli, type RealCli } from '../helpers/real-cli-setup.js';
import { requireTools } from '../helpers/require-tools.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  startTestServer,
  tempDir,
  withKey,
  type TestServer,
} from '../helpers/server.js';
import { agentCliTool, bubblewrapTool } from '../helpers/tools.js';

/**
 * The agent check (POST /api/workspaces/{org}/agent/check) through the real server, with the
 * real Claude Code against its scripted model server: a check that passes, one against a closed
 * port (answered in under 30 s, naming that endpoint), a program missing (its install command),
 * a sign-in missing; and a session's run failing for the same reasons says so in its result.
 */

const claude = agentCliTool('claude');
/** What the scripted model answers the check's prompt. */
const SCRIPT = [{ match: 'Reply with OK', turns: [{ blocks: [{ type: 'text', text: 'OK' }] }] }];

/** A port nothing listens on: one the system gave, closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const step = (check: AgentCheck, name: string) => check.steps.find((s) => s.name === name);

describe('the agent check', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function serverWith(env: NodeJS.ProcessEnv, names: string[] = []) {
    const server = await startTestServer({ agentEnv: env, agentEnvNames: names });
    cleanups.push(() => server.dispose());
    const owner = await seedWorkspace(server);
    return { server, owner };
  }

  async function check(server: TestServer, cookie: string, org: string) {
    const started = Date.now();
    const response = await asUser(server, cookie, 'POST', `/api/workspaces/${org}/agent/check`);
    expect(response.status, await response.clone().text()).toBe(200);
    return { check: AgentCheckSchema.parse(await response.json()), ms: Date.now() - started };
  }

  it('passes for the demo agent, saying it is simulated; only owners may ask, never a key', async () => {
    const { server, owner } = await serverWith({ PATH: process.env.PATH });
    const path = `/api/workspaces/${owner.organizationId}/agent/check`;
    const { check: demo } = await check(server, owner.user.cookie, owner.organizationId);
    expect(demo).toEqual({
      ok: true,
      agent: 'Demo agent (simulated)',
      steps: [{ name: 'simulated', ok: true, detail: expect.stringContaining('simulated') }],
    });

    const member = await seedWorkspace(server, 'member');
    await server.accounts.addMember({ organizationId: owner.organizationId, email: member.user.email });
    const asMember = await asUser(server, member.user.cookie, 'POST', path);
    expect(asMember.status).toBe(403);
    const asKey = await withKey(server, owner.apiKey, 'POST', path);
    expect(asKey.status).toBe(403);
    expect(ErrorResponseSchema.parse(await asKey.json()).error).toMatchObject({
      code: 'api_key_not_allowed',
      message: expect.stringContaining('an API key may never use it'),
    });
    // Another workspace's owner is a stranger here.
    const stranger = await seedWorkspace(server, 'stranger');
    expect((await asUser(server, stranger.user.cookie, 'POST', path)).status).toBe(403);
  });

  it('says an OpenCode that is not installed is missing, with its install command, and a run says so too', async () => {
    const { server, owner } = await serverWith({ PATH: '/usr/bin:/bin', HOME: tempDir('agent-check-home-') });
    // Chosen while installed elsewhere; this server's PATH has no `opencode`.
    await server.storage.write((tx) =>
      tx.workspaces.putSettings(owner.organizationId, { agent: 'acp', acpAgent: 'opencode' }),
    );
    const { check: missing } = await check(server, owner.user.cookie, owner.organizationId);
    expect(missing.ok).toBe(false);
    expect(missing.agent).toBe('OpenCode');
    expect(step(missing, 'program')).toMatchObject({
      ok: false,
      detail: expect.stringContaining("OpenCode (opencode) was not found on the server's PATH"),
      fix: 'Install it with `npm install -g opencode-ai`, or set SESSIONDESK_OPENCODE_BIN to its path.',
    });
    expect(step(missing, 'prompt')).toMatchObject({ ok: false, detail: expect.stringContaining('Not run') });

    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Say hello',
    });
    const failed = await waitForResults(server, owner.user.cookie, created.id);
    expect(failed.status).toBe('failed');
    expect(failed.messages.at(-1)).toMatchObject({
      type: 'result',
      is_error: true,
      result: expect.stringContaining('`npm install -g opencode-ai`'),
    });
  });

  describe('with the real Claude Code', requireTools(claude, bubblewrapTool()), () => {
    async function claudeServer(overrides: NodeJS.ProcessEnv = {}) {
      const home = tempDir('agent-check-claude-');
      mkdirSync(join(home, 'home'));
      const cli: RealCli = await realCli('claude-code', SCRIPT, join(home, 'home'));
      cleanups.push(() => cli.close());
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        ...cli.env,
        SESSIONDESK_CLAUDE_BIN: cli.bin,
        ...overrides,
      };
      for (const [name, value] of Object.entries(overrides)) if (value === undefined) delete env[name];
      const { server, owner } = await serverWith(env, cli.names);
      const put = await asUser(
        server,
        owner.user.cookie,
        'PUT',
        `/api/workspaces/${owner.organizationId}/agent`,
        {
          agent: 'claude-code',
        },
      );
      expect(put.status, await put.clone().text()).toBe(200);
      return { server, owner, cli };
    }

    it(
      'passes: the program and its version, the key a session gets, and the model answering',
      { timeout: 60_000 },
      async () => {
        const { server, owner, cli } = await claudeServer();
        const { check: passed, ms } = await check(server, owner.user.cookie, owner.organizationId);
        expect(passed, JSON.stringify(passed, null, 2)).toMatchObject({ ok: true, agent: 'Claude Code' });
        expect(step(passed, 'program')?.detail).toMatch(/version 2\.1\.\d+/u);
        expect(step(passed, 'credentials')?.detail).toContain('ANTHROPIC_API_KEY (environment)');
        expect(step(passed, 'prompt')?.detail).toMatch(/^Claude Code answered in [\d.]+ s: "OK"$/u);
        expect(ms).toBeLessThan(30_000);
        // The model was asked the check's prompt, and nothing of the check is left.
        expect(JSON.stringify(cli.requests.map((r) => r.body))).toContain('Reply with OK');
        const sessions = await (
          await asUser(
            server,
            owner.user.cookie,
            'GET',
            `/api/sessions?organizationId=${owner.organizationId}`,
          )
        ).json();
        expect(sessions).toMatchObject({ sessions: [] });
      },
    );

    it(
      'fails against a closed port in under 30 s, naming that endpoint; a session run gives up on it too',
      { timeout: 120_000 },
      async () => {
        const port = await closedPort();
        const endpoint = `http://127.0.0.1:${port}`;
        const { server, owner } = await claudeServer({ ANTHROPIC_BASE_URL: endpoint });
        const { check: failed, ms } = await check(server, owner.user.cookie, owner.organizationId);
        expect(ms).toBeLessThan(30_000);
        expect(failed.ok).toBe(false);
        expect(step(failed, 'program')?.ok).toBe(true);
        expect(step(failed, 'credentials')?.ok).toBe(true);
        expect(step(failed, 'prompt')).toMatchObject({
          ok: false,
          endpoint,
          detail: expect.stringContaining(`cannot reach its model API at ${endpoint} (ANTHROPIC_BASE_URL)`),
          fix: `Check the model API's address (ANTHROPIC_BASE_URL) and that this machine reaches 127.0.0.1:${port}.`,
        });
        expect(step(failed, 'prompt')?.detail).toContain('connection was refused');

        // A session's run ends within 30 s of its start rather than after Claude Code's retries.
        const created = await createSession(server, owner.user.cookie, {
          organizationId: owner.organizationId,
          initialMessage: 'Reply with OK',
        });
        const session = await waitForResults(server, owner.user.cookie, created.id, 1, 45_000);
        const result = session.messages.at(-1);
        expect(result).toMatchObject({ type: 'result', is_error: true });
        const text = (result as { result: string }).result;
        expect(text).toContain(`Claude Code cannot reach its model API at ${endpoint} (ANTHROPIC_BASE_URL)`);
        expect(text).toContain("rather than wait on Claude Code's own retries");
        expect((result as { duration_ms: number }).duration_ms).toBeLessThan(30_000);
        expect(session.status).toBe('failed');
      },
    );

    it('fails without a sign-in, naming the credential to add', { timeout: 90_000 }, async () => {
      const { server, owner } = await claudeServer({ ANTHROPIC_API_KEY: undefined });
      const { check: failed, ms } = await check(server, owner.user.cookie, owner.organizationId);
      expect(ms).toBeLessThan(30_000);
      expect(failed.ok).toBe(false);
      expect(step(failed, 'credentials')).toMatchObject({
        ok: false,
        detail: expect.stringContaining('Claude Code has no sign-in'),
        fix: expect.stringContaining('Set ANTHROPIC_API_KEY'),
      });
      expect(step(failed, 'prompt')?.ok).toBe(false);

      const created = await createSession(server, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Reply with OK',
      });
      const session = await waitForResults(server, owner.user.cookie, created.id, 1, 45_000);
      const full = await getSession(server, owner.user.cookie, session.id);
      expect(full.messages.at(-1)).toMatchObject({
        type: 'result',
        is_error: true,
        result: expect.stringContaining('Claude Code has no sign-in'),
      });
    });
  });
});
