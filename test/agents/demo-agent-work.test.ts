// The demo agent's work, over HTTP: a real clone of the sample project in the session's folder,
// changed as its transcript narrates (so the Changes view has a real diff), and in a workspace
// that asks, requests of the kinds `edit` and `execute` that are carried out only when allowed.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AgentSettingsResponseSchema,
  ListSessionsResponseSchema,
  SessionChangesResponseSchema,
  type ContentBlock,
  type SessionFull,
} from '../../src-shared/index.js';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import { DEMO } from '../../src-main/demo/people.js';
import { decide, decided, firstRequest, pendingApprovals, sessionNow } from '../helpers/approvals.js';
import { useCleanups } from '../helpers/cleanups.js';
import {
  asUser,
  createSession,
  launchCookie,
  seedWorkspace,
  startTestServer,
  withKey,
  type TestServer,
} from '../helpers/server.js';
import { sqljsOnly } from '../helpers/require-tools.js';
import { until } from '../helpers/until.js';

const cleanup = useCleanups();

async function setUp(approvals: 'auto' | 'ask') {
  const server = await startTestServer({ agentPaceMs: 0 });
  cleanup(() => server.dispose());
  const owner = await seedWorkspace(server);
  const put = await asUser(
    server,
    owner.user.cookie,
    'PUT',
    `/api/workspaces/${owner.organizationId}/agent`,
    {
      agent: 'demo',
      approvals,
    },
  );
  expect(put.status, await put.clone().text()).toBe(200);
  const start = async (initialMessage: string, more: Record<string, unknown> = {}) => {
    const { id } = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage,
      ...more,
    });
    return { id, dir: sandboxPath(server.sandboxRoot, id) };
  };
  const settled = (id: string) =>
    until(
      () => sessionNow(server, owner.user.cookie, id),
      (s) => s.messages.at(-1)?.type === 'result',
      30_000,
    );
  return { server, owner, cookie: owner.user.cookie, start, settled };
}

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trimEnd();

/** The commits on the session's branch since it left the sample project's main. */
const commits = (dir: string) =>
  git(dir, 'log', '--format=%s', 'origin/main..HEAD').split('\n').filter(Boolean);

const blocks = (session: SessionFull): ContentBlock[] =>
  session.messages.flatMap((m) => (m.type === 'assistant' ? m.message.content : []));

/** The agent's calls of a tool, each with its result. */
function calls(session: SessionFull, name: string) {
  const all = blocks(session);
  return all.flatMap((b) => {
    if (b.type !== 'tool_use' || b.name !== name) return [];
    const result = all.find((r) => r.type === 'tool_result' && r.tool_use_id === b.id);
    return [
      {
        input: b.input as Record<string, string>,
        result: result as Extract<ContentBlock, { type: 'tool_result' }>,
      },
    ];
  });
}

async function changesOf(server: TestServer, apiKey: string, id: string) {
  const response = await withKey(server, apiKey, 'GET', `/api/sessions/${id}/changes`);
  expect(response.status).toBe(200);
  return SessionChangesResponseSchema.parse(await response.json());
}

describe('the demo agent works in a clone of its sample project', () => {
  it('edits a file and writes a new one as narrated, commits them, and a follow-up goes on there', async () => {
    const { server, owner, start, settled } = await setUp('auto');
    const { id, dir } = await start('Add retries to the upload client. Three tries is plenty.', {
      repoUrl: 'https://github.com/acme/uploads',
    });
    const session = await settled(id);
    expect(session.status).toBe('completed');

    // A real clone of the sample project's repository, made beside the sessions' folders.
    const origin = git(dir, 'remote', 'get-url', 'origin');
    expect(dirname(origin)).toBe(server.sandboxRoot);
    expect(origin).toMatch(/demo-project-[0-9a-f]{12}\.git$/u);
    expect(git(dir, 'symbolic-ref', '--short', 'HEAD')).toBe(session.metadata.branch);
    expect(session.metadata.branch).toMatch(/^agent\/add-retries-to-the-upload-client-/u);
    expect(commits(dir)).toEqual(['Add retries to the upload client']);

    // What the transcript says it did is what the folder holds.
    const [edit] = calls(session, 'Edit');
    expect(edit?.input.file_path).toBe('src/config.js');
    expect(readFileSync(join(dir, 'src/config.js'), 'utf8')).toContain(edit!.input.new_string);
    expect(git(dir, 'show', 'origin/main:src/config.js')).toContain(edit!.input.old_string);
    const [write] = calls(session, 'Write');
    expect(write?.input.file_path).toBe('notes/add-retries-to-the-upload-client.md');
    expect(readFileSync(join(dir, write!.input.file_path!), 'utf8')).toBe(write!.input.content);
    expect(write!.input.content).toContain(
      'Asked in Session Desk: Add retries to the upload client. Three tries',
    );
    const [commit] = calls(session, 'Bash');
    expect(commit?.input.command).toBe(
      'git add --all && git commit --no-verify -m "Add retries to the upload client"',
    );
    expect(commit?.result.is_error).toBe(false);
    expect(commit?.result.content).toContain(git(dir, 'rev-parse', '--short', 'HEAD'));
    const [read] = calls(session, 'Read');
    expect(read?.result.content).toContain('retries: 0,');
    expect(session.tasks.every((t) => t.status === 'completed')).toBe(true);

    // The Changes view reads it from git: the edit and the new file, against origin's main.
    const changes = await changesOf(server, owner.apiKey, id);
    if (!changes.available) throw new Error(changes.message);
    expect(changes.base.ref).toBe('refs/remotes/origin/main');
    expect(changes.files.map((f) => [f.path, f.status, f.additions, f.deletions])).toEqual([
      ['notes/add-retries-to-the-upload-client.md', 'added', write!.input.content!.split('\n').length - 1, 0],
      ['src/config.js', 'modified', 1, 1],
    ]);
    expect(changes.files[1]?.patch).toContain(`+${edit!.input.new_string}`);

    // Its pull request is simulated: nothing is pushed, none is opened.
    const pr = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${id}/pull-request`, {});
    expect(pr.status).toBe(409);
    expect(await pr.text()).toContain("the demo's pull requests are simulated");

    // A follow-up: the same folder, the same branch, one commit more.
    const followUp = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${id}/messages`, {
      content: 'Also say that the timeout stays at five seconds.',
    });
    expect(followUp.status).toBe(201);
    const after = await until(
      () => sessionNow(server, owner.user.cookie, id),
      (s) => s.messages.filter((m) => m.type === 'result').length === 2,
      30_000,
    );
    expect(after.status).toBe('completed');
    expect(commits(dir)).toEqual([
      'Follow-up: Also say that the timeout stays at five seconds',
      'Add retries to the upload client',
    ]);
    const note = readFileSync(join(dir, 'notes/add-retries-to-the-upload-client.md'), 'utf8');
    expect(note).toContain('## Follow-up\n\nAlso say that the timeout stays at five seconds.');
    const [, noteEdit] = calls(after, 'Edit');
    expect(noteEdit?.input.file_path).toBe('notes/add-retries-to-the-upload-client.md');
    expect(note).toContain(noteEdit!.input.new_string);
    // Nothing was asked: the workspace lets agents act.
    expect(await pendingApprovals(server, owner.user.cookie, owner.organizationId, id)).toEqual([]);
    expect(blocks(after).some((b) => b.type === 'text' && b.text.includes('cannot put its requests'))).toBe(
      false,
    );
  });

  it('without a repository too; a base branch other than main is marked in the clone', async () => {
    const { server, owner, start, settled } = await setUp('auto');
    const { id, dir } = await start('Tidy up the config', {
      repoUrl: 'https://github.com/acme/uploads',
      baseBranch: 'develop',
    });
    expect((await settled(id)).status).toBe('completed');
    expect(git(dir, 'rev-parse', 'develop')).toBe(git(dir, 'rev-parse', 'origin/main'));
    const changes = await changesOf(server, owner.apiKey, id);
    expect(changes).toMatchObject({
      available: true,
      base: { branch: 'develop', ref: 'refs/heads/develop' },
    });

    const bare = await start('Tidy up the config');
    expect((await settled(bare.id)).status).toBe('completed');
    const noRepository = await changesOf(server, owner.apiKey, bare.id);
    expect(noRepository.available && noRepository.totals.files).toBe(2);
  });

  it('fails on purpose when asked, before committing: what it changed stays uncommitted', async () => {
    const { server, owner, start, settled } = await setUp('auto');
    const { id, dir } = await start('Please fail this one');
    const session = await settled(id);
    expect(session.status).toBe('failed');
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', is_error: true });
    expect(calls(session, 'Bash')).toEqual([]);
    expect(commits(dir)).toEqual([]);
    const changes = await changesOf(server, owner.apiKey, id);
    expect(changes.available && changes.totals.files).toBe(2);
  });
});

describe('the demo agent in a workspace that asks', () => {
  it('asks before it edits and before it runs a command; what is rejected is not done', async () => {
    const { server, owner, cookie, start, settled } = await setUp('ask');
    const { id, dir } = await start('Add retries to the upload client');

    const edit = await firstRequest(server, cookie, owner.organizationId, id);
    expect(edit).toMatchObject({
      agent: 'demo',
      title: 'Edit src/config.js',
      tool: { kind: 'edit', name: 'Edit' },
    });
    expect(edit.options.map((o) => o.kind)).toEqual(['allow_once', 'allow_always', 'reject_once']);
    expect(edit.detail).toContain('-  retries: 0,');
    expect(edit.detail).toMatch(/\+ {2}retries: \d,/u);
    // Waiting: nothing is changed yet, and the session says it needs its person.
    expect((await sessionNow(server, cookie, id)).agentState).toBe('needs_input');
    expect(readFileSync(join(dir, 'src/config.js'), 'utf8')).toContain('retries: 0,');
    await decide(server, cookie, edit.id, { optionId: 'allow' });
    await until(
      () => readFileSync(join(dir, 'src/config.js'), 'utf8'),
      (text) => !text.includes('retries: 0,'),
    );

    const write = await firstRequest(server, cookie, owner.organizationId, id);
    expect(write).toMatchObject({
      title: 'Write notes/add-retries-to-the-upload-client.md',
      tool: { kind: 'edit', name: 'Write' },
    });
    expect(write.detail).toContain('--- /dev/null');
    await decide(server, cookie, write.id, { decision: 'reject_once', message: 'No notes, please.' });

    const command = await firstRequest(server, cookie, owner.organizationId, id);
    expect(command).toMatchObject({
      title: 'git add --all && git commit --no-verify -m "Add retries to the upload client"',
      tool: { kind: 'execute', name: 'Bash' },
    });
    expect(command.detail).toBe(
      '$ git add --all && git commit --no-verify -m "Add retries to the upload client"',
    );
    expect(command.options.map((o) => o.label)).toEqual(['Allow once', 'Allow all commands', 'Reject']);
    await decide(server, cookie, command.id, { optionId: 'reject' });

    const session = await settled(id);
    expect(session.status).toBe('completed');
    expect(session.messages.at(-1)).toMatchObject({
      result: 'Finished, in part: Add retries to the upload client',
    });
    // The rejected note was not written, the rejected command did not run.
    expect(existsSync(join(dir, 'notes'))).toBe(false);
    expect(commits(dir)).toEqual([]);
    const [rejectedWrite] = calls(session, 'Write');
    expect(rejectedWrite?.result).toMatchObject({ is_error: true });
    expect(rejectedWrite?.result.content).toContain(
      'Rejected: notes/add-retries-to-the-upload-client.md was not written.',
    );
    expect(rejectedWrite?.result.content).toContain('Message: No notes, please.');
    const [rejectedCommand] = calls(session, 'Bash');
    expect(rejectedCommand?.result).toMatchObject({ is_error: true });
    expect(rejectedCommand?.result.content).toContain('the command did not run');
    const last = blocks(session)
      .filter((b) => b.type === 'text')
      .at(-1);
    expect(last).toMatchObject({ type: 'text' });
    expect((last as { text: string }).text).toContain('left uncommitted');
    // The allowed edit is there, uncommitted, for the Changes view.
    const changes = await changesOf(server, owner.apiKey, id);
    expect(changes.available && changes.files.map((f) => [f.path, f.status])).toEqual([
      ['src/config.js', 'modified'],
    ]);
  });

  it('"Allow all edits": the rest of the run\'s edits are not asked, its command is', async () => {
    const { server, owner, cookie, start, settled } = await setUp('ask');
    const { id, dir } = await start('Add retries to the upload client');
    const edit = await firstRequest(server, cookie, owner.organizationId, id);
    await decide(server, cookie, edit.id, { decision: 'allow_always' });
    const command = await firstRequest(server, cookie, owner.organizationId, id);
    expect(command.tool.kind).toBe('execute');
    await decide(server, cookie, command.id, { decision: 'allow_once' });
    const session = await settled(id);
    expect(session.messages.at(-1)).toMatchObject({ result: 'Finished: Add retries to the upload client' });
    expect(commits(dir)).toEqual(['Add retries to the upload client']);
    expect(existsSync(join(dir, 'notes/add-retries-to-the-upload-client.md'))).toBe(true);
  });

  it('stopped while it waits: the request is cancelled and nothing is changed', async () => {
    const { server, owner, cookie, start } = await setUp('ask');
    const { id, dir } = await start('Add retries to the upload client');
    const edit = await firstRequest(server, cookie, owner.organizationId, id);
    const stop = await withKey(server, owner.apiKey, 'PATCH', `/api/sessions/${id}`, { status: 'completed' });
    expect(stop.status).toBe(200);
    expect((await decided(server, cookie, edit.id)).decision).toBe('cancelled');
    const session = await until(
      () => sessionNow(server, cookie, id),
      (s) => s.messages.at(-1)?.type === 'result',
    );
    expect(session.messages.at(-1)).toMatchObject({ result: 'Stopped: the session was marked completed.' });
    expect(readFileSync(join(dir, 'src/config.js'), 'utf8')).toContain('retries: 0,');
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });
});

describe('the demo workspace', () => {
  it(
    "its accounts may switch approvals, are told before choosing that they run the demo agent only, and its sample sessions' Changes say what they are",
    sqljsOnly('the demo workspace lives in a data directory; a team server answers 503 for it'),
    async () => {
      const server = await startTestServer();
      cleanup(() => server.dispose());
      const opened = await fetch(`${server.url}/api/setup/demo`, {
        method: 'POST',
        headers: { origin: server.origin, cookie: await launchCookie(server) },
      });
      expect(opened.status).toBe(201);
      const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0]!;
      const path = `/api/workspaces/${DEMO.organizationId}/agent`;
      const told = AgentSettingsResponseSchema.parse(
        await (await asUser(server, cookie, 'GET', path)).json(),
      );
      expect(told.demoOnly).toBe(
        "The demo's accounts run the demo agent only: create your own account for that.",
      );

      const ask = await asUser(server, cookie, 'PUT', path, { agent: 'demo', approvals: 'ask' });
      expect(ask.status, await ask.clone().text()).toBe(200);
      expect(AgentSettingsResponseSchema.parse(await ask.json()).settings).toEqual({
        agent: 'demo',
        approvals: 'ask',
      });
      const other = await asUser(server, cookie, 'PUT', path, {
        agent: 'acp',
        acpAgent: 'opencode',
        approvals: 'ask',
      });
      expect(other.status).toBe(403);
      expect(await other.text()).toContain(told.demoOnly);
      const back = await asUser(server, cookie, 'PUT', path, { agent: 'demo', approvals: 'auto' });
      expect(back.status).toBe(200);

      const listed = await asUser(
        server,
        cookie,
        'GET',
        `/api/sessions?organizationId=${DEMO.organizationId}`,
      );
      const [first] = ListSessionsResponseSchema.parse(await listed.json()).sessions;
      const sample = await asUser(server, cookie, 'GET', `/api/sessions/${first!.id}/changes`);
      expect(await sample.json()).toMatchObject({
        available: false,
        reason: 'no_sandbox',
        message: expect.stringContaining('A sample session of the demo') as unknown,
      });

      // Anyone else's account is not limited, and is not told so.
      const own = await seedWorkspace(server);
      const theirs = AgentSettingsResponseSchema.parse(
        await (
          await asUser(server, own.user.cookie, 'GET', `/api/workspaces/${own.organizationId}/agent`)
        ).json(),
      );
      expect(theirs).not.toHaveProperty('demoOnly');
    },
  );
});
