import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FullSessionResponseSchema, type SessionFull } from '../../src-shared/index.js';
import { writeNamedCommands } from '../../src-main/agents/kinds/command/named-commands.js';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import { mapStreamLine } from '../../src-main/agents/kinds/claude-code/stream-json.js';
import { ROOT } from '../helpers/cli.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  startTestServer,
  tempDir,
  withKey,
  type TestServer,
} from '../helpers/server.js';

const FAKE_AGENT = join(ROOT, 'test', 'fixtures', 'fake-agent.mjs');
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env: process.env }).toString().trim();

describe('the command agent, against a local repository through insteadOf', () => {
  const root = tempDir('sessiondesk-git-');
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  const previousGitConfig = process.env.GIT_CONFIG_GLOBAL;

  beforeAll(async () => {
    // A bare repository with a main branch, reachable as https://git.example.test/acme/widgets.
    const seed = join(root, 'seed');
    mkdirSync(seed);
    git(seed, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(join(seed, 'NOTES.md'), '# Widgets\n');
    git(seed, 'add', 'NOTES.md');
    git(
      seed,
      '-c',
      'user.name=Seed',
      '-c',
      'user.email=seed@example.test',
      'commit',
      '--quiet',
      '-m',
      'Initial commit',
    );
    mkdirSync(join(root, 'repos', 'acme'), { recursive: true });
    git(root, 'clone', '--quiet', '--bare', seed, join(root, 'repos', 'acme', 'widgets.git'));
    const gitConfig = join(root, 'gitconfig');
    writeFileSync(
      gitConfig,
      `[url "file://${join(root, 'repos')}/"]\n\tinsteadOf = https://git.example.test/\n`,
    );
    process.env.GIT_CONFIG_GLOBAL = gitConfig;

    server = await startTestServer({ agentCommand: [process.execPath, FAKE_AGENT, '{prompt}', '{model}'] });
    owner = await seedWorkspace(server);
  });
  afterAll(async () => {
    await server.dispose();
    if (previousGitConfig === undefined) delete process.env.GIT_CONFIG_GLOBAL;
    else process.env.GIT_CONFIG_GLOBAL = previousGitConfig;
    rmSync(root, { recursive: true, force: true });
  });

  async function settled(id: string): Promise<SessionFull> {
    const get = async () =>
      FullSessionResponseSchema.parse(
        await (await withKey(server, owner.apiKey, 'GET', `/api/sessions/${id}`)).json(),
      ).session;
    await expect.poll(async () => (await get()).messages.at(-1)?.type, { timeout: 20_000 }).toBe('result');
    return get();
  }

  it('clones the base branch, works on a new branch, commits, and records its output', async () => {
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Document the widgets; open a PR',
      repoUrl: 'https://git.example.test/acme/widgets.git',
      model: 'test-model-1',
    });
    const session = await settled(created.id);
    expect(session.status).toBe('completed');
    expect(session.messages.at(-1)).toMatchObject({
      type: 'result',
      subtype: 'success',
      result: 'Done: Document the widgets; open a PR',
    });

    // The sandbox is a real clone, on the recorded branch, with the agent's commit.
    const sandbox = sandboxPath(server.sandboxRoot, created.id);
    expect(session.metadata.branch).toMatch(/^agent\/document-the-widgets/);
    expect(git(sandbox, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe(session.metadata.branch);
    expect(git(sandbox, 'log', '--format=%s', '-2').split('\n')).toEqual([
      'Agent: Document the widgets; open a PR',
      'Initial commit',
    ]);
    expect(readFileSync(join(sandbox, 'NOTES.md'), 'utf8')).toContain('Document the widgets; open a PR');

    // Tool results were folded to the agent's side; the todo list became the tasks.
    expect(session.messages.filter((m) => m.type === 'user')).toHaveLength(1);
    const blocks = session.messages.flatMap((m) => (m.type === 'assistant' ? m.message.content : []));
    expect(blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id)).toEqual([
      'toolu_todo_1',
      'toolu_bash_1',
    ]);
    expect(blocks.find((b) => b.type === 'text')).toMatchObject({
      text: 'Working in ' + created.id + ' with test-model-1.',
    });
    expect(session.tasks).toEqual([
      { id: 'task-1', title: 'Edit NOTES.md', status: 'completed' },
      { id: 'task-2', title: 'Commit the change', status: 'completed' },
    ]);
    expect(session.metadata).toMatchObject({
      prNumber: 17,
      prUrl: 'https://git.example.test/acme/widgets/pull/17',
      prStatus: 'open',
    });
  });

  it('passes a prompt full of shell syntax as one plain argument', async () => {
    const prompt = 'Say "hi" $(touch /tmp/pwned-sessiondesk) `id` ; rm -rf ~ && echo done';
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: prompt,
    });
    const session = await settled(created.id);
    expect(session.messages.at(-1)).toMatchObject({ result: `Done: ${prompt}` });
    expect(() => readFileSync('/tmp/pwned-sessiondesk')).toThrow();
  });

  it('a follow-up runs in the same sandbox', async () => {
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'First change',
      repoUrl: 'https://git.example.test/acme/widgets',
    });
    await settled(created.id);
    const response = await fetch(`${server.url}/api/sessions/${created.id}/messages`, {
      method: 'POST',
      headers: { cookie: owner.user.cookie, origin: server.origin, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'Second change' }),
    });
    expect(response.status).toBe(201);
    await expect
      .poll(async () => (await settled(created.id)).messages.filter((m) => m.type === 'result').length, {
        timeout: 20_000,
      })
      .toBe(2);
    const sandbox = sandboxPath(server.sandboxRoot, created.id);
    expect(git(sandbox, 'log', '--format=%s', '-3').split('\n')).toEqual([
      'Agent: Second change',
      'Agent: First change',
      'Initial commit',
    ]);
  });

  it('a base branch that does not exist fails the session with a clear result', async () => {
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Anything',
      repoUrl: 'https://git.example.test/acme/widgets',
      baseBranch: 'no-such-branch',
    });
    const session = await settled(created.id);
    expect(session.status).toBe('failed');
    const result = session.messages.at(-1);
    expect(result).toMatchObject({ type: 'result', subtype: 'error', is_error: true });
    expect(result?.type === 'result' && result.result).toContain(
      'The branch "no-such-branch" does not exist',
    );
  });

  it("an unreachable repository fails the session with git's own words", async () => {
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Anything',
      repoUrl: 'https://git.example.test/acme/missing',
    });
    const session = await settled(created.id);
    expect(session.status).toBe('failed');
    const result = session.messages.at(-1);
    expect(result?.type === 'result' && result.result).toMatch(
      /Cloning https:\/\/git.example.test\/acme\/missing .*failed/,
    );
  });

  it('an agent that exits with an error fails the session with its stderr', async () => {
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Please FAIL',
    });
    const session = await settled(created.id);
    expect(session.status).toBe('failed');
    const result = session.messages.at(-1);
    expect(result?.type === 'result' && result.result).toContain('exited with code 1');
    expect(result?.type === 'result' && result.result).toContain('fatal: the fixture agent was told to fail');
    // What it printed before failing was kept.
    expect(session.tasks).toHaveLength(2);
  });
});

describe('the command agent time limit', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer();
    owner = await seedWorkspace(server);
    await writeNamedCommands(server.dataDir, { fake: [process.execPath, FAKE_AGENT, '{prompt}', '{model}'] });
    const chosen = await asUser(
      server,
      owner.user.cookie,
      'PUT',
      `/api/workspaces/${owner.organizationId}/agent`,
      {
        agent: 'command',
        commandName: 'fake',
        timeoutMs: 1500,
      },
    );
    expect(chosen.status).toBe(200);
  });
  afterAll(async () => server.dispose());

  it('stops an agent that hangs and fails the session', async () => {
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'HANG please',
    });
    const get = async () =>
      FullSessionResponseSchema.parse(
        await (await withKey(server, owner.apiKey, 'GET', `/api/sessions/${created.id}`)).json(),
      ).session;
    await expect.poll(async () => (await get()).status, { timeout: 15_000 }).toBe('failed');
    const result = (await get()).messages.at(-1);
    expect(result?.type === 'result' && result.result).toContain('did not finish within 2 s');
  });
});

describe('mapping stream-json', () => {
  it('skips what is not part of the transcript and keeps known blocks', () => {
    expect(mapStreamLine({ type: 'system', subtype: 'init' })).toEqual([]);
    expect(mapStreamLine('nonsense')).toEqual([]);
    expect(
      mapStreamLine({ type: 'user', message: { content: [{ type: 'text', text: 'injected as a person' }] } }),
    ).toEqual([]);
    expect(
      mapStreamLine({
        type: 'assistant',
        message: {
          content: [
            { type: 'image', source: {} },
            { type: 'text', text: 'kept' },
          ],
        },
      }),
    ).toEqual([{ kind: 'assistant', content: [{ type: 'text', text: 'kept' }] }]);
    expect(
      mapStreamLine({ type: 'result', subtype: 'error_max_turns', is_error: true, num_turns: 9 }),
    ).toEqual([
      {
        kind: 'result',
        result: {
          type: 'result',
          subtype: 'error',
          is_error: true,
          result: 'The agent reported an error.',
          duration_ms: 0,
          num_turns: 9,
        },
      },
    ]);
  });
});
