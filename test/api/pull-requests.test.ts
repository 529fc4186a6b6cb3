import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GhStatusResponseSchema, PullRequestResponseSchema } from '../../src-shared/pull-requests.js';
import { ListSessionsResponseSchema } from '../../src-shared/sessions.js';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import { getSession, waitForResults } from '../helpers/agent-runs.js';
import { ROOT } from '../helpers/cli.js';
import { createGitHubFixture, git, type GitHubFixture } from '../helpers/github-fixture.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  startTestServer,
  withKey,
  type TestServer,
} from '../helpers/server.js';

const BRANCH_AGENT = join(ROOT, 'test', 'fixtures', 'branch-agent.mjs');
/** By its full path: git runs what the sandbox configures with the server's PATH, which lacks it. */
const TOUCH = execFileSync('sh', ['-c', 'command -v touch'], { encoding: 'utf8' }).trim();

describe('opening and refreshing a pull request with gh', () => {
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

  async function sessionAfterRun(prompt: string, target: TestServer = server, who = owner) {
    const created = await createSession(target, who.user.cookie, {
      organizationId: who.organizationId,
      initialMessage: prompt,
      repoUrl: 'https://github.com/acme/widgets',
    });
    const session = await waitForResults(target, who.user.cookie, created.id);
    return { ...session, sandbox: sandboxPath(target.sandboxRoot, created.id) };
  }

  const open = (id: string, body?: unknown, target: TestServer = server, who = owner) =>
    asUser(target, who.user.cookie, 'POST', `/api/sessions/${id}/pull-request`, body);

  async function errorOf(response: Response) {
    return ((await response.json()) as { error: { code: string; message: string } }).error;
  }

  it('pushes the branch, opens the pull request with gh, and a refresh sees it merged', async () => {
    const session = await sessionAfterRun('Document the widgets');
    const branch = session.metadata.branch ?? '';
    expect(branch).toMatch(/^agent\/document-the-widgets-/);

    const response = await open(session.id, { draft: true });
    expect(response.status).toBe(201);
    const opened = PullRequestResponseSchema.parse(await response.json());
    expect(opened.pullRequest).toEqual({
      number: 41,
      url: 'https://github.com/acme/widgets/pull/41',
      status: 'draft',
    });
    expect(opened.session.metadata).toMatchObject({ prNumber: 41, prStatus: 'draft', branch });

    // The branch really arrived in the repository, as the sandbox has it, and is its upstream.
    expect(git(github.root, '--git-dir', github.bare(), 'rev-parse', `refs/heads/${branch}`)).toBe(
      git(session.sandbox, 'rev-parse', 'HEAD'),
    );
    expect(git(session.sandbox, 'rev-parse', '--abbrev-ref', `${branch}@{upstream}`)).toBe(
      `origin/${branch}`,
    );

    // gh was asked whether it is signed in, then to open exactly this pull request.
    const calls = github.ghCalls();
    expect(calls.at(-2)).toEqual(['auth', 'status', '--hostname', 'github.com']);
    expect(calls.at(-1)).toEqual([
      'pr',
      'create',
      '--repo=acme/widgets',
      `--head=${branch}`,
      '--base=main',
      '--title=Document the widgets',
      `--body=> Document the widgets\n\nOpened from Session Desk (session ${session.id}).`,
      '--draft',
    ]);

    // Visible through GET, and a second click answers the same pull request without gh.
    expect((await getSession(server, owner.user.cookie, session.id)).metadata).toMatchObject({
      prNumber: 41,
      prUrl: 'https://github.com/acme/widgets/pull/41',
      prStatus: 'draft',
    });
    const again = await open(session.id);
    expect(again.status).toBe(200);
    expect(PullRequestResponseSchema.parse(await again.json()).pullRequest.number).toBe(41);
    expect(github.ghCalls()).toHaveLength(calls.length);

    // Marked ready, then merged on GitHub: each refresh follows (an API key may refresh).
    const refresh = () =>
      withKey(server, owner.apiKey, 'POST', `/api/sessions/${session.id}/pull-request/refresh`);
    const pulls = github.pulls();
    const pull = pulls['acme/widgets']?.[0] ?? {};
    pull.isDraft = false;
    github.setPulls(pulls);
    let refreshed = await refresh();
    expect(refreshed.status).toBe(200);
    expect(PullRequestResponseSchema.parse(await refreshed.json()).pullRequest.status).toBe('open');
    expect(github.ghCalls().at(-1)).toEqual([
      'pr',
      'view',
      'https://github.com/acme/widgets/pull/41',
      '--json',
      'state,isDraft,mergedAt,closedAt,number,url',
    ]);

    const mergedAt = new Date(Date.now() - 3_600_000).toISOString();
    Object.assign(pull, { state: 'MERGED', mergedAt, closedAt: mergedAt });
    github.setPulls(pulls);
    refreshed = await refresh();
    expect(PullRequestResponseSchema.parse(await refreshed.json()).pullRequest).toEqual({
      number: 41,
      url: 'https://github.com/acme/widgets/pull/41',
      status: 'merged',
      mergedAt,
    });
    const list = ListSessionsResponseSchema.parse(
      await (await withKey(server, owner.apiKey, 'GET', '/api/sessions')).json(),
    );
    expect(list.stats.mergesPastWeek).toBe(1);
    expect(list.sessions.find((s) => s.id === session.id)?.metadata.prStatus).toBe('merged');
  });

  it('records the pull request GitHub already has for the branch', async () => {
    const session = await sessionAfterRun('Polish the widgets');
    const branch = session.metadata.branch ?? '';
    // Someone pushed the same branch and opened its pull request by hand.
    github.git(session.sandbox, 'push', '--quiet', 'origin', branch);
    github.setPulls({
      ...github.pulls(),
      'acme/widgets': [
        ...(github.pulls()['acme/widgets'] ?? []),
        {
          number: 77,
          head: branch,
          base: 'main',
          title: 'By hand',
          body: '',
          isDraft: false,
          state: 'OPEN',
          mergedAt: null,
          closedAt: null,
        },
      ],
    });
    const response = await open(session.id);
    expect(response.status).toBe(200);
    expect(PullRequestResponseSchema.parse(await response.json()).pullRequest).toEqual({
      number: 77,
      url: 'https://github.com/acme/widgets/pull/77',
      status: 'open',
    });
  });

  it('says when there is nothing to open: no commits, uncommitted work, the base branch, no repository', async () => {
    const unchanged = await sessionAfterRun('Read the code NOCHANGE');
    let response = await open(unchanged.id);
    expect(response.status).toBe(409);
    expect((await errorOf(response)).message).toMatch(/^No changes: agent\/.* has no commits beyond main/);

    const uncommitted = await sessionAfterRun('Draft a note UNCOMMITTED');
    response = await open(uncommitted.id);
    expect(response.status).toBe(409);
    expect((await errorOf(response)).message).toContain("the agent's changes are not committed");

    const onMain = await sessionAfterRun('Work on main SWITCH:main-copy');
    git(onMain.sandbox, 'checkout', '--quiet', 'main');
    // The next run ends on main: the session's branch follows.
    const follow = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${onMain.id}/messages`, {
      content: 'Again NOCHANGE',
    });
    expect(follow.status).toBe(201);
    await waitForResults(server, owner.user.cookie, onMain.id, 2);
    response = await open(onMain.id);
    expect(response.status).toBe(409);
    expect((await errorOf(response)).message).toContain('main, the base branch itself');

    const bare = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'No repository here NOCHANGE',
    });
    await waitForResults(server, owner.user.cookie, bare.id);
    response = await open(bare.id);
    expect(response.status).toBe(409);
    expect((await errorOf(response)).message).toContain('no repository');
    // Nothing reached gh or the repository for any of these.
    expect(github.ghCalls().some((argv) => argv.includes(`--head=${unchanged.metadata.branch}`))).toBe(false);
  });

  it('refuses an API key: the push uses the credentials of the person running Session Desk', async () => {
    const session = await sessionAfterRun('Key attempt');
    const response = await withKey(
      server,
      owner.apiKey,
      'POST',
      `/api/sessions/${session.id}/pull-request`,
      {},
    );
    expect(response.status).toBe(400);
    expect((await errorOf(response)).code).toBe('api_key_not_allowed');
    const stranger = await seedWorkspace(server, 'stranger');
    const foreign = await open(session.id, {}, server, stranger);
    expect(foreign.status).toBe(403);
  });

  it('gh not signed in: 424 saying how to sign in, and nothing is pushed', async () => {
    const session = await sessionAfterRun('Signed out attempt');
    github.signOut(true);
    try {
      const response = await open(session.id);
      expect(response.status).toBe(424);
      const error = await errorOf(response);
      expect(error.code).toBe('gh_unavailable');
      expect(error.message).toContain('not signed in to github.com: run `gh auth login`');
    } finally {
      github.signOut(false);
    }
    expect(() =>
      git(
        github.root,
        '--git-dir',
        github.bare(),
        'rev-parse',
        '--verify',
        `refs/heads/${session.metadata.branch}`,
      ),
    ).toThrow();
  });

  it('a push the repository rejects: 502 with git’s words, and no pull request', async () => {
    const session = await sessionAfterRun('Rejected push');
    const branch = session.metadata.branch ?? '';
    // Someone else pushed other commits to the same branch name first.
    const other = join(github.root, 'other-clone');
    mkdirSync(other);
    github.git(other, 'clone', '--quiet', 'https://github.com/acme/widgets', '.');
    git(other, 'checkout', '--quiet', '-b', branch);
    writeFileSync(join(other, 'OTHER.md'), 'other work\n');
    git(other, 'add', 'OTHER.md');
    git(
      other,
      '-c',
      'user.name=Other',
      '-c',
      'user.email=o@example.test',
      'commit',
      '--quiet',
      '-m',
      'Other',
    );
    github.git(other, 'push', '--quiet', 'origin', branch);

    const response = await open(session.id);
    expect(response.status).toBe(502);
    const error = await errorOf(response);
    expect(error.code).toBe('push_failed');
    expect(error.message).toContain(
      `Pushing ${branch} to https://github.com/acme/widgets failed. The remote refused the push`,
    );
    expect(error.message).toMatch(/rejected/);
    expect((await getSession(server, owner.user.cookie, session.id)).metadata.prNumber).toBeUndefined();
    expect(github.ghCalls().some((argv) => argv.includes(`--head=${branch}`))).toBe(false);
  });

  it('says up front whether gh is there: with a cookie or a key, not without either', async () => {
    const byCookie = await asUser(server, owner.user.cookie, 'GET', '/api/pull-requests/tool');
    expect(byCookie.status).toBe(200);
    expect(GhStatusResponseSchema.parse(await byCookie.json())).toEqual({ available: true });
    const byKey = await withKey(server, owner.apiKey, 'GET', '/api/pull-requests/tool');
    expect(GhStatusResponseSchema.parse(await byKey.json())).toEqual({ available: true });
    expect((await fetch(`${server.url}/api/pull-requests/tool`)).status).toBe(401);
  });

  it('no gh on the server: said up front, and opening answers 424 saying to install it', async () => {
    const noGh = await startTestServer({
      agentCommand: [process.execPath, BRANCH_AGENT],
      agentEnv: github.env({ withGh: false }),
    });
    try {
      const who = await seedWorkspace(noGh);
      const tool = await asUser(noGh, who.user.cookie, 'GET', '/api/pull-requests/tool');
      const status = GhStatusResponseSchema.parse(await tool.json());
      expect(status.available).toBe(false);
      expect(status.problem).toContain("GitHub CLI (`gh`) was not found on the server's PATH");
      expect(status.problem).toContain('https://cli.github.com');
      const session = await sessionAfterRun('Without gh', noGh, who);
      const response = await open(session.id, {}, noGh, who);
      expect(response.status).toBe(424);
      const error = await errorOf(response);
      expect(error.code).toBe('gh_unavailable');
      expect(error.message).toContain("GitHub CLI (`gh`) was not found on the server's PATH");
      expect(error.message).toContain('https://cli.github.com');
    } finally {
      await noGh.dispose();
    }
  });

  it('waits for the agent: 409 while it works, and its branch is pushable once it is stopped', async () => {
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Keep going KEEPWORKING',
      repoUrl: 'https://github.com/acme/widgets',
    });
    await expect
      .poll(async () => JSON.stringify((await getSession(server, owner.user.cookie, created.id)).messages), {
        timeout: 20_000,
      })
      .toContain('Committed');
    let response = await open(created.id);
    expect(response.status).toBe(409);
    expect((await errorOf(response)).message).toContain('The agent is still working on this session');

    const stop = await withKey(server, owner.apiKey, 'POST', `/api/sessions/${created.id}/stop`);
    expect(stop.status).toBe(200);
    response = await open(created.id);
    expect(response.status).toBe(201);
  });

  it("pushes only to the session's repository: an origin the agent redirected is refused", async () => {
    const session = await sessionAfterRun('Redirect the origin');
    git(session.sandbox, 'remote', 'set-url', 'origin', 'https://github.com/someone/elsewhere');
    let response = await open(session.id);
    expect(response.status).toBe(409);
    expect((await errorOf(response)).message).toContain(
      'origin no longer points to https://github.com/acme/widgets alone, so Session Desk will not push from it. Set it back with: git remote set-url origin https://github.com/acme/widgets',
    );
    git(session.sandbox, 'remote', 'set-url', 'origin', 'https://github.com/acme/widgets');
    git(session.sandbox, 'remote', 'set-url', '--push', 'origin', 'https://github.com/someone/elsewhere');
    response = await open(session.id);
    expect(response.status).toBe(409);
    expect(github.ghCalls().some((argv) => argv.includes(`--head=${session.metadata.branch}`))).toBe(false);
  });

  it("the push follows none of the sandbox's git configuration: a pushInsteadOf goes nowhere else", async () => {
    const session = await sessionAfterRun('Send the push elsewhere');
    const branch = session.metadata.branch ?? '';
    const decoy = join(github.root, 'decoy.git');
    git(github.root, 'init', '--quiet', '--bare', decoy);
    // The agent's own .git/config rewrites the address of pushes to the session's repository.
    git(session.sandbox, 'config', `url.file://${decoy}.pushInsteadOf`, 'https://github.com/acme/widgets');

    const response = await open(session.id);
    expect(response.status, JSON.stringify(await errorOf(response.clone()))).toBe(201);
    expect(git(github.root, '--git-dir', github.bare(), 'rev-parse', `refs/heads/${branch}`)).toBe(
      git(session.sandbox, 'rev-parse', 'HEAD'),
    );
    expect(git(github.root, '--git-dir', decoy, 'for-each-ref')).toBe('');
    // The user's own configuration still applies: it is what sends github.com to the fixture.
    expect(git(session.sandbox, 'rev-parse', '--abbrev-ref', `${branch}@{upstream}`)).toBe(
      `origin/${branch}`,
    );
  });

  it('a click on Open pull request runs no command the agent wrote: ext:: addresses are never used', async () => {
    const session = await sessionAfterRun('Run a command on push');
    const branch = session.metadata.branch ?? '';
    const marker = join(github.root, 'ext-command-ran');
    git(session.sandbox, 'config', 'protocol.ext.allow', 'always');
    git(
      session.sandbox,
      'config',
      `url.ext::${TOUCH} ${marker} .pushInsteadOf`,
      'https://github.com/acme/widgets',
    );
    git(
      session.sandbox,
      'config',
      `url.ext::${TOUCH} ${marker} .insteadOf`,
      'https://github.com/acme/widgets',
    );
    git(session.sandbox, 'config', 'credential.helper', `!${TOUCH} ${marker}`);
    git(session.sandbox, 'config', 'core.fsmonitor', `${TOUCH} ${marker}`);
    // Read as the branch is fetched from the sandbox: git takes it from the user's config only.
    git(session.sandbox, 'config', 'uploadpack.packObjectsHook', `${TOUCH} ${marker}`);
    mkdirSync(join(session.sandbox, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(session.sandbox, '.git', 'hooks', 'pre-push'), `#!/bin/sh\n${TOUCH} ${marker}\n`, {
      mode: 0o755,
    });

    const response = await open(session.id);
    expect(response.status).toBe(201);
    expect(existsSync(marker)).toBe(false);
    expect(git(github.root, '--git-dir', github.bare(), 'rev-parse', `refs/heads/${branch}`)).toBe(
      git(session.sandbox, 'rev-parse', 'HEAD'),
    );
  });

  it('a sandbox with no commits to push runs nothing it configured while it is checked', async () => {
    const session = await sessionAfterRun('Change nothing NOCHANGE');
    const marker = join(github.root, 'status-filter-ran');
    git(session.sandbox, 'config', 'filter.evil.clean', `${TOUCH} ${marker}; cat`);
    writeFileSync(join(session.sandbox, '.git', 'info', 'attributes'), '* filter=evil\n');
    // Touched, not changed: git reads the file again (through its clean filter) to compare it.
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(session.sandbox, 'NOTES.md'), later, later);
    const response = await open(session.id);
    expect(response.status).toBe(409);
    expect((await errorOf(response)).message).toMatch(/^No changes: /u);
    expect(existsSync(marker)).toBe(false);
  });

  it('refresh without a pull request is a 409', async () => {
    const session = await sessionAfterRun('Nothing opened NOCHANGE');
    const response = await withKey(
      server,
      owner.apiKey,
      'POST',
      `/api/sessions/${session.id}/pull-request/refresh`,
    );
    expect(response.status).toBe(409);
    expect((await errorOf(response)).message).toContain('no pull request to refresh');
  });
});
