import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import { waitForResults } from '../helpers/agent-runs.js';
import { ROOT } from '../helpers/cli.js';
import { createGitHubFixture, git, type GitHubFixture } from '../helpers/github-fixture.js';
import { createSession, seedWorkspace, startTestServer, type TestServer } from '../helpers/server.js';

const BRANCH_AGENT = join(ROOT, 'test', 'fixtures', 'branch-agent.mjs');

describe('the branch an agent ends on, and the pull requests it reports', () => {
  let github: GitHubFixture;
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;

  beforeAll(async () => {
    github = createGitHubFixture(['acme/widgets']);
    server = await startTestServer({
      agentCommand: [process.execPath, BRANCH_AGENT],
      agentEnv: github.env(),
    });
    owner = await seedWorkspace(server);
  });
  afterAll(async () => {
    await server.dispose();
    github.dispose();
  });

  async function run(prompt: string) {
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: prompt,
      repoUrl: 'https://github.com/acme/widgets',
    });
    const session = await waitForResults(server, owner.user.cookie, created.id);
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success' });
    return { session, sandbox: sandboxPath(server.sandboxRoot, created.id) };
  }

  it('records the branch the agent switched to, read from git when the run ends', async () => {
    const { session, sandbox } = await run('Add notes SWITCH:feature/notes-on-widgets');
    expect(git(sandbox, 'symbolic-ref', '--short', 'HEAD')).toBe('feature/notes-on-widgets');
    expect(session.metadata.branch).toBe('feature/notes-on-widgets');
  });

  it('keeps the last known branch when the agent leaves a detached HEAD, and says so', async () => {
    const { session, sandbox } = await run('Look around DETACH');
    expect(() => git(sandbox, 'symbolic-ref', '--quiet', 'HEAD')).toThrow();
    expect(session.metadata.branch).toMatch(/^agent\/look-around-detach-/);
    const notice = session.messages.find((m) => m.type === 'assistant' && m.notice === 'info');
    expect(notice?.type === 'assistant' && notice.message.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringContaining(`on no branch; the session's branch stays ${session.metadata.branch}.`),
    });
    // The notice comes before the run's result.
    expect(session.messages.at(-2)).toBe(notice);
  });

  it('records only a pull request of the session repository, whatever its case', async () => {
    const { session } = await run(
      'Ship it PRINT:https://github.com/other/widgets/pull/9 PRINT:https://github.com/ACME/Widgets/pull/12 PRINT:https://gitlab.com/acme/widgets/-/merge_requests/3',
    );
    expect(session.metadata).toMatchObject({
      prNumber: 12,
      prUrl: 'https://github.com/ACME/Widgets/pull/12',
      prStatus: 'open',
    });
  });

  it('ignores a pull request of another repository', async () => {
    const { session } = await run(
      'Ship it PRINT:https://github.com/acme/widgets-fork/pull/4 PRINT:https://github.com/someone/widgets/pull/5',
    );
    expect(session.metadata.prNumber).toBeUndefined();
    expect(session.metadata.prUrl).toBeUndefined();
    expect(session.metadata.prStatus).toBeUndefined();
    // The agent's words stay in the transcript; only the record ignores them.
    expect(JSON.stringify(session.messages)).toContain('https://github.com/someone/widgets/pull/5');
  });
});
