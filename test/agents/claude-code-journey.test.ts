import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionChangesResponseSchema } from '../../src-shared/changes.js';
import { PullRequestResponseSchema } from '../../src-shared/pull-requests.js';
import { ListSessionsResponseSchema } from '../../src-shared/sessions.js';
import { CLAUDE_CODE_SCENARIOS } from '../fixtures/agents/claude-code-scenarios.mjs';
import { startScriptedAnthropicServer } from '../fixtures/agents/scripted-anthropic-server.mjs';
import { waitForResults } from '../helpers/agent-runs.js';
import { CLAUDE_CODE_VARIABLES, claudeCodeEnv } from '../helpers/claude-code-cli.js';
import { requireTools } from '../helpers/require-tools.js';
import { agentCliTool } from '../helpers/tools.js';
import { createGitHubFixture } from '../helpers/github-fixture.js';
import { asUser, createSession, seedWorkspace, startTestServer } from '../helpers/server.js';

const claude = agentCliTool('claude');
const bin = claude.path;

const EDIT_AND_COMMIT = CLAUDE_CODE_SCENARIOS.find((s) => s.name === 'edit-and-commit')!;

/**
 * The whole of what a person does with a real agent, through the real server: the real Claude
 * Code CLI (against the scripted model server on 127.0.0.1) edits and commits in the session's
 * sandbox, the session shows its cost and its changes, and a pull request is opened with gh.
 * github.com is a bare repository reached through `insteadOf`; gh is the stand-in.
 */
describe('a Claude Code session, from prompt to pull request', requireTools(claude), () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('edits and commits, shows its cost and changes, and opens a pull request', async () => {
    const github = createGitHubFixture(['acme/widgets']);
    cleanups.push(() => github.dispose());
    // The scenario writes NOTES.md afresh: the repository starts without one.
    const seed = mkdtempSync(join(tmpdir(), 'journey-seed-'));
    cleanups.push(() => rmSync(seed, { recursive: true, force: true }));
    github.git(seed, 'clone', '--quiet', 'https://github.com/acme/widgets', '.');
    github.git(seed, 'rm', '--quiet', 'NOTES.md');
    writeFileSync(join(seed, 'README.md'), '# Widgets\n');
    github.git(seed, 'add', 'README.md');
    github.git(seed, '-c', 'user.name=Seed', '-c', 'user.email=seed@example.test', 'commit', '-qm', 'Readme');
    github.git(seed, 'push', '--quiet', 'origin', 'main');
    // Who the agent commits as, in the git configuration the server (and so the agent) uses.
    appendFileSync(join(github.root, 'gitconfig'), '[user]\n\tname = Agent\n\temail = agent@example.test\n');

    const model = await startScriptedAnthropicServer(EDIT_AND_COMMIT.script);
    cleanups.push(() => model.close());
    const claudeEnv = claudeCodeEnv(github.root, model.url);
    const cliVariables = CLAUDE_CODE_VARIABLES;
    const server = await startTestServer({
      agentEnv: {
        ...github.env(),
        SESSIONDESK_CLAUDE_BIN: bin!,
        ...Object.fromEntries(cliVariables.map((name) => [name, claudeEnv[name]])),
      },
      agentEnvNames: cliVariables,
    });
    cleanups.push(() => server.dispose());
    const owner = await seedWorkspace(server);
    const cookie = owner.user.cookie;
    const chosen = await asUser(server, cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, {
      agent: 'claude-code',
    });
    expect(chosen.status, await chosen.clone().text()).toBe(200);

    const created = await createSession(server, cookie, {
      organizationId: owner.organizationId,
      initialMessage: EDIT_AND_COMMIT.runs[0]!.prompt,
      repoUrl: 'https://github.com/acme/widgets',
    });
    const session = await waitForResults(server, cookie, created.id, 1, 120_000);
    expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
    expect(session.agent).toBe('claude-code');
    const tools = session.messages.flatMap((m) =>
      m.type === 'assistant' ? m.message.content.flatMap((b) => (b.type === 'tool_use' ? [b.name] : [])) : [],
    );
    expect(tools).toEqual(['Write', 'Edit', 'Bash']);
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', result: 'Committed NOTES.md.' });
    expect(session.usage?.costUsd).toBeGreaterThan(0);
    const branch = session.metadata.branch ?? '';
    expect(branch).toMatch(/^agent\/add-a-notes-file-and-commit-/u);

    // What it changed, from git: the committed file against the base branch.
    const changes = SessionChangesResponseSchema.parse(
      await (await asUser(server, cookie, 'GET', `/api/sessions/${created.id}/changes`)).json(),
    );
    expect(changes).toMatchObject({
      available: true,
      head: { branch },
      totals: { files: 1, additions: 1, deletions: 0 },
    });
    expect(changes.available && changes.files.map((f) => [f.path, f.status])).toEqual([
      ['NOTES.md', 'added'],
    ]);
    expect(changes.available && changes.files[0]!.patch).toContain('+First line, edited');

    // What it cost, in the workspace's week.
    const list = ListSessionsResponseSchema.parse(
      await (
        await asUser(server, cookie, 'GET', `/api/sessions?organizationId=${owner.organizationId}`)
      ).json(),
    );
    expect(list.stats.costPastWeek).toBe(session.usage?.costUsd);

    // The pull request: the branch is pushed as committed, and gh opens it.
    const opened = await asUser(server, cookie, 'POST', `/api/sessions/${created.id}/pull-request`);
    expect(opened.status, await opened.clone().text()).toBe(201);
    const { pullRequest } = PullRequestResponseSchema.parse(await opened.json());
    expect(pullRequest).toMatchObject({
      url: expect.stringMatching(/^https:\/\/github\.com\/acme\/widgets\/pull\/\d+$/u),
    });
    expect(github.git(github.root, '--git-dir', github.bare(), 'log', '-1', '--format=%s', branch)).toBe(
      'Add notes',
    );
    expect(github.git(github.root, '--git-dir', github.bare(), 'show', `${branch}:NOTES.md`)).toBe(
      'First line, edited',
    );
    expect(github.ghCalls().at(-1)?.slice(0, 3)).toEqual(['pr', 'create', '--repo=acme/widgets']);
  }, 180_000);
});
