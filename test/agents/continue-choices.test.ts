// Where a follow-up to an imported session can go on, asked of the server before anything is
// sent, and what a continuation that never got going leaves: the session as it was.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ContinuationChoicesResponseSchema } from '../../src-shared/continuation.js';
import type { SessionFull } from '../../src-shared/sessions.js';
import { getSession, waitForResults } from '../helpers/agent-runs.js';
import { useCleanups } from '../helpers/cleanups.js';
import { createGitHubFixture } from '../helpers/github-fixture.js';
import { copyClaudeScenario, followedSession } from '../helpers/imported.js';
import { requireTools } from '../helpers/require-tools.js';
import {
  asUser,
  seedWorkspace,
  startTestServer,
  tempDir,
  withKey,
  type TestServer,
} from '../helpers/server.js';
import { agentCliTool } from '../helpers/tools.js';

const cleanup = useCleanups();
const claude = agentCliTool('claude');

/** Long enough ago that the session counts as ended. */
const LONG_AGO_MS = 24 * 60 * 60 * 1000;

/** A clone of acme/widgets the person ran Claude Code in, its conversation long over. */
function personsClone(): { work: string; root: string } {
  const work = tempDir('choices-work-');
  cleanup(() => rmSync(work, { recursive: true, force: true }));
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: work });
  execFileSync('git', ['remote', 'add', 'origin', 'https://github.com/acme/widgets'], { cwd: work });
  const { root } = copyClaudeScenario('plain-answer', { cwd: work, writtenAgoMs: LONG_AGO_MS });
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  return { work, root };
}

/** A server whose agents see `env`, with the clone's history followed; the imported session. */
async function importedInto(env: NodeJS.ProcessEnv, root: string) {
  const server = await startTestServer({ agentEnv: env });
  cleanup(() => server.dispose());
  const admin = await seedWorkspace(server, 'admin');
  const session = await followedSession(server, admin, { kind: 'claude-code', rootDir: root });
  expect(session).toMatchObject({ status: 'completed', metadata: { repository: 'acme/widgets' } });
  return { server, admin, id: session.id };
}

async function choices(server: TestServer, cookie: string, id: string) {
  const response = await asUser(server, cookie, 'GET', `/api/sessions/${id}/continuation`);
  expect(response.status, await response.clone().text()).toBe(200);
  return ContinuationChoicesResponseSchema.parse(await response.json());
}

const prompts = (session: SessionFull) =>
  session.messages.flatMap((m) => (m.type === 'user' ? [m.message.content] : []));

describe('where an imported session can go on', () => {
  it('says its CLI is not installed here, before anything is sent, and a follow-up changes nothing', async () => {
    const { work, root } = personsClone();
    const github = createGitHubFixture();
    cleanup(() => github.dispose());
    // PATH holds git and node only: no claude, and no variable naming one.
    const { server, admin, id } = await importedInto(github.env(), root);

    const offered = await choices(server, admin.user.cookie, id);
    expect(offered.cli).toBe('claude-code');
    expect(offered.blocked).toContain('SESSIONDESK_CLAUDE_BIN');
    expect(offered.blocked).toContain('Claude Code');
    expect(offered.original).toEqual({ possible: false, folder: work });
    expect(offered.sandbox).toEqual({ possible: false, repository: 'acme/widgets' });

    const sent = await asUser(server, admin.user.cookie, 'POST', `/api/sessions/${id}/messages`, {
      content: 'Go on',
      continueIn: 'sandbox',
    });
    expect(sent.status).toBe(409);
    expect(((await sent.json()) as { error: { message: string } }).error.message).toContain(
      'SESSIONDESK_CLAUDE_BIN',
    );
    const after = await getSession(server, admin.user.cookie, id);
    expect(after.status).toBe('completed');
    expect(prompts(after)).toEqual(['Say hello. PLAIN-ANSWER']);
  });

  it(
    'offers the original folder only while it is there and to the administrator, and says why neither works',
    { ...requireTools(claude), timeout: 60_000 },
    async () => {
      const { work, root } = personsClone();
      const github = createGitHubFixture();
      cleanup(() => github.dispose());
      const { server, admin, id } = await importedInto(
        { ...github.env(), SESSIONDESK_CLAUDE_BIN: claude.path! },
        root,
      );
      expect(await choices(server, admin.user.cookie, id)).toEqual({
        cli: 'claude-code',
        original: { possible: true, folder: work },
        sandbox: { possible: true, repository: 'acme/widgets' },
      });

      // Another owner, given the session's workspace, may not send an agent into the folder.
      const other = await seedWorkspace(server, 'member');
      await server.accounts.addMember({ organizationId: admin.organizationId, email: other.user.email });
      const theirs = await choices(server, other.user.cookie, id);
      expect(theirs.original.possible).toBe(false);
      expect(theirs.original.why).toContain('Only the administrator');
      expect(theirs.sandbox.possible).toBe(true);

      rmSync(work, { recursive: true, force: true });
      const gone = await choices(server, admin.user.cookie, id);
      expect(gone.original.possible).toBe(false);
      expect(gone.original.why).toContain(`The folder ${work}`);
      expect(gone.original.why).toContain('once the folder is back');
      expect(gone.sandbox).toEqual({ possible: true, repository: 'acme/widgets' });
    },
  );

  it(
    'names both reasons when the folder is gone and there is no repository to clone',
    { ...requireTools(claude), timeout: 60_000 },
    async () => {
      const work = tempDir('choices-no-origin-');
      const { root } = copyClaudeScenario('plain-answer', { cwd: work, writtenAgoMs: LONG_AGO_MS });
      cleanup(() => rmSync(root, { recursive: true, force: true }));
      const server = await startTestServer({
        agentEnv: { PATH: process.env.PATH, SESSIONDESK_CLAUDE_BIN: claude.path! },
      });
      cleanup(() => server.dispose());
      const admin = await seedWorkspace(server, 'admin');
      const session = await followedSession(server, admin, { kind: 'claude-code', rootDir: root });
      rmSync(work, { recursive: true, force: true });
      const neither = await choices(server, admin.user.cookie, session.id);
      expect(neither.blocked).toBeUndefined();
      expect(neither.original).toMatchObject({ possible: false, why: expect.stringContaining('is gone') });
      expect(neither.sandbox).toMatchObject({
        possible: false,
        why: expect.stringContaining('no repository to clone'),
      });
    },
  );

  it('is not asked of a session Session Desk ran, nor with an API key', async () => {
    const server = await startTestServer();
    cleanup(() => server.dispose());
    const owner = await seedWorkspace(server);
    const created = await asUser(server, owner.user.cookie, 'POST', '/api/sessions', {
      organizationId: owner.organizationId,
      initialMessage: 'Run here',
    });
    const { id } = ((await created.json()) as { session: { id: string } }).session;
    expect((await asUser(server, owner.user.cookie, 'GET', `/api/sessions/${id}/continuation`)).status).toBe(
      409,
    );
    expect((await withKey(server, owner.apiKey, 'GET', `/api/sessions/${id}/continuation`)).status).toBe(400);
  });
});

describe('a continuation that fails to start', () => {
  it(
    "leaves the imported session's status as it was, saying why in its result",
    { ...requireTools(claude), timeout: 60_000 },
    async () => {
      const { root } = personsClone();
      // github.com holds no acme/widgets: the fresh clone fails before Claude Code starts.
      const github = createGitHubFixture([]);
      cleanup(() => github.dispose());
      const { server, admin, id } = await importedInto(
        { ...github.env(), SESSIONDESK_CLAUDE_BIN: claude.path! },
        root,
      );
      const sent = await asUser(server, admin.user.cookie, 'POST', `/api/sessions/${id}/messages`, {
        content: 'Go on in a clone',
        continueIn: 'sandbox',
      });
      expect(sent.status, await sent.clone().text()).toBe(201);
      const ended = await waitForResults(server, admin.user.cookie, id, 2, 30_000);
      expect(ended.messages.at(-1)).toMatchObject({
        type: 'result',
        is_error: true,
        result: expect.stringContaining('Cloning https://github.com/acme/widgets') as string,
      });
      expect(ended.status).toBe('completed');
      expect(ended.agentState).toBeUndefined();
    },
  );
});
