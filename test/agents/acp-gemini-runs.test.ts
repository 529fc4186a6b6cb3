import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import type { SessionFull } from '../../src-shared/index.js';
import { GEMINI_SCENARIOS } from '../fixtures/agents/gemini-scenarios.mjs';
import { getSession, waitForResults } from '../helpers/agent-runs.js';
import { createGitHubFixture } from '../helpers/github-fixture.js';
import { realCli } from '../helpers/real-cli-setup.js';
import { requireTools } from '../helpers/require-tools.js';
import { runProcesses, transcript } from '../helpers/run-control.js';
import { asUser, createSession, seedWorkspace, startTestServer, tempDir } from '../helpers/server.js';
import { agentCliTool } from '../helpers/tools.js';

/**
 * Gemini CLI driven through the Agent Client Protocol (`gemini --acp`) by the real server, in
 * the real sandbox, against its scripted model server: the `acp` agent kind end to end.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function acpServer(script: unknown[], extraEnv: NodeJS.ProcessEnv = {}) {
  const home = tempDir('acp-gemini-home-');
  const cli = await realCli('gemini', script, home);
  cleanups.push(() => cli.close());
  const server = await startTestServer({
    agentEnv: { PATH: process.env.PATH, ...extraEnv, ...cli.env, SESSIONDESK_GEMINI_BIN: cli.bin },
    agentEnvNames: cli.names,
  });
  cleanups.push(() => server.dispose());
  const owner = await seedWorkspace(server);
  const cookie = owner.user.cookie;
  const put = await asUser(server, cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, {
    agent: 'acp',
    acpAgent: 'gemini',
  });
  expect(put.status, await put.clone().text()).toBe(200);
  expect(await put.json()).toMatchObject({ settings: { agent: 'acp', acpAgent: 'gemini' } });
  return { server, owner, cookie, cli };
}

/** Every block of the assistant's messages, in order. */
const blocks = (session: SessionFull) =>
  session.messages.flatMap((m) => (m.type === 'assistant' ? m.message.content : []));

const gemini = agentCliTool('gemini');
const LONG = { timeout: 120_000 };

describe('an ACP agent (Gemini CLI in ACP mode)', requireTools(gemini), () => {
  it(
    'is listed by GET /api/agents, and a workspace cannot choose one Session Desk does not know',
    LONG,
    async () => {
      const { server, owner, cookie } = await acpServer([]);
      const agents = await asUser(server, cookie, 'GET', '/api/agents');
      const listed = (await agents.json()) as {
        agents: { kind: string; acpAgent?: string; found: boolean }[];
      };
      expect(listed.agents).toContainEqual(
        expect.objectContaining({ kind: 'acp', acpAgent: 'gemini', found: true }),
      );
      const unknown = await asUser(server, cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, {
        agent: 'acp',
        acpAgent: 'no-such-agent',
      });
      expect(unknown.status).toBe(400);
      const refusal = (await unknown.json()) as { error: { message: string } };
      expect(refusal.error.message).toContain('no ACP agent "no-such-agent"');
      const missing = await asUser(server, cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, {
        agent: 'acp',
      });
      expect(missing.status).toBe(400);
      const stray = await asUser(server, cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, {
        agent: 'gemini',
        acpAgent: 'gemini',
      });
      expect(stray.status).toBe(400);
    },
  );

  it(
    'writes a file and commits it in the sandbox, its tool calls paired with their results',
    LONG,
    async () => {
      const github = createGitHubFixture(['acme/widgets']);
      cleanups.push(() => github.dispose());
      const scenario = GEMINI_SCENARIOS.find((s) => s.name === 'edit-and-commit')!;
      const { server, owner, cookie } = await acpServer(scenario.script, {
        ...github.env({ withGh: false }),
        PATH: `${join(github.root, 'bin')}:${process.env.PATH ?? ''}`,
      });
      const created = await createSession(server, cookie, {
        organizationId: owner.organizationId,
        initialMessage: scenario.runs[0]!.prompt,
        repoUrl: 'https://github.com/acme/widgets',
      });
      const session = await waitForResults(server, cookie, created.id, 1, 90_000);
      expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
      expect(session).toMatchObject({ agent: 'acp', acpAgent: 'gemini', isolation: 'sandbox' });
      // The streamed chunks are joined as the model wrote them.
      expect(transcript(session)).toContain('assistant: I will write the notes file.');
      expect(session.messages.at(-1)).toMatchObject({
        type: 'result',
        subtype: 'success',
        result: 'Committed NOTES.md.',
      });
      const all = blocks(session);
      const uses = all.filter((b) => b.type === 'tool_use');
      const results = all.filter((b) => b.type === 'tool_result');
      expect(uses).toHaveLength(2);
      expect(results.map((r) => (r as { tool_use_id: string }).tool_use_id)).toEqual(
        uses.map((u) => (u as { id: string }).id),
      );
      expect(results.every((r) => (r as { is_error?: boolean }).is_error !== true)).toBe(true);
      // What the agent did is on disk, in the session's own folder.
      const folder = sandboxPath(server.sandboxRoot, created.id);
      expect(readFileSync(join(folder, 'NOTES.md'), 'utf8')).toBe('First line\n');
      // Committed on the session's branch, as the session's author.
      const log = execFileSync('git', ['log', '-1', '--format=%s|%ae'], { cwd: folder, encoding: 'utf8' });
      expect(log.trim()).toBe(`Add notes|${owner.user.email}`);
      // Gemini CLI reports the turn's tokens (cached ones included) in its answer's metadata.
      expect(session.usage).toMatchObject({ inputTokens: 4800, outputTokens: 58 });
      // Nothing of the run outlives it.
      expect(runProcesses(created.id)).toEqual([]);
    },
  );

  it('stops: the agent is told to cancel, and nothing of its run is left', LONG, async () => {
    const wait = `node -e "setTimeout(() => {}, 120000)"`;
    const { server, owner, cookie } = await acpServer([
      {
        match: 'LONG-TOOL',
        turns: [
          {
            parts: [
              { text: 'Waiting for it.' },
              { call: 'run_shell_command', args: { command: wait, description: 'Wait' } },
            ],
            usage: { prompt: 300, output: 20, cached: 100, thoughts: 0 },
          },
        ],
      },
    ]);
    const created = await createSession(server, cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Wait. LONG-TOOL',
    });
    await expect
      .poll(() => runProcesses(created.id).some((p) => p.cmdline.includes('120000')), {
        timeout: 60_000,
        interval: 100,
      })
      .toBe(true);
    const stop = await asUser(server, cookie, 'POST', `/api/sessions/${created.id}/stop`);
    expect(stop.status, await stop.clone().text()).toBe(200);
    await expect.poll(() => runProcesses(created.id), { timeout: 10_000, interval: 100 }).toEqual([]);
    const session = await waitForResults(server, cookie, created.id);
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', stopped: true });
    // The tool call the stop cut off has a result saying so.
    const uses = blocks(session).filter((b) => b.type === 'tool_use');
    const results = blocks(session).filter((b) => b.type === 'tool_result');
    expect(uses).toHaveLength(1);
    expect(results).toHaveLength(1);
  });

  it(
    'a follow-up runs in the same session folder and says when the agent could not load its earlier session',
    LONG,
    async () => {
      // The second prompt first: a request that carries the earlier conversation (when Gemini CLI
      // could load it) holds both.
      const { server, owner, cookie } = await acpServer([
        { match: 'SECOND-PROMPT', turns: [{ parts: [{ text: 'Second answer.' }] }] },
        { match: 'FIRST-PROMPT', turns: [{ parts: [{ text: 'First answer.' }] }] },
      ]);
      const created = await createSession(server, cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Answer. FIRST-PROMPT',
      });
      await waitForResults(server, cookie, created.id, 1, 90_000);
      const posted = await asUser(server, cookie, 'POST', `/api/sessions/${created.id}/messages`, {
        content: 'Again. SECOND-PROMPT',
      });
      expect(posted.status, await posted.clone().text()).toBe(201);
      const session = await waitForResults(server, cookie, created.id, 2, 90_000);
      const texts = transcript(session);
      expect(texts).toContain('result: First answer.');
      // Only this turn's answer: what a loaded session replays is never recorded again.
      expect(texts.at(-1)).toBe('result: Second answer.');
      // Gemini CLI 0.61 mostly cannot load a session in a new process (it finds its chat file only
      // once it is on disk): when it could not, the transcript says the context is gone.
      const full = await getSession(server, cookie, created.id);
      const notices = blocks(full).filter(
        (b) => b.type === 'text' && /earlier session/u.test((b as { text: string }).text),
      );
      expect(notices.length).toBeLessThanOrEqual(1);
    },
  );
});
