// Continuing an imported Gemini CLI session in a sandbox copies its chat into a project folder of
// Gemini CLI's own, a folder agents can write: a link planted where the copy goes is never
// written through. The real server, a real recorded chat, github.com as a bare repository.
import { cpSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ListSessionsResponseSchema } from '../../src-shared/sessions.js';
import { waitForResults } from '../helpers/agent-runs.js';
import { createGitHubFixture } from '../helpers/github-fixture.js';
import { filesUnder, HISTORY_FIXTURES } from '../helpers/hostile-history.js';
import { addHistorySource, asUser, seedWorkspace, startTestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';
import { useCleanups } from '../helpers/cleanups.js';

const cleanup = useCleanups();

describe("the copy of an imported Gemini CLI chat for a sandbox's folder", () => {
  it('is never written through a link planted where it goes: the run fails saying what is in the way', async () => {
    const github = createGitHubFixture(['acme/widgets']);
    cleanup(() => github.dispose());
    // The person's clone, where the recorded conversation ran.
    const work = join(github.root, 'work', 'widgets');
    mkdirSync(join(work, '..'), { recursive: true });
    github.git(github.root, 'clone', '--quiet', 'https://github.com/acme/widgets', work);
    const geminiRoot = join(github.root, '.gemini');
    cpSync(join(HISTORY_FIXTURES, 'gemini', '0.61.0', 'plain-answer'), geminiRoot, { recursive: true });
    const [chat] = filesUnder(join(geminiRoot, 'tmp'), /^session-/u);
    writeFileSync(join(geminiRoot, 'tmp', 'repo', '.project_root'), work);

    const server = await startTestServer({
      agentEnv: { ...github.env(), PATH: `${github.env().PATH}:${process.env.PATH}` },
    });
    cleanup(() => server.dispose());
    const owner = await seedWorkspace(server);
    const cookie = owner.user.cookie;
    const sourceId = await addHistorySource(server, cookie, owner.organizationId, {
      kind: 'gemini',
      rootDir: geminiRoot,
    });
    const sessions = await until(
      async () =>
        ListSessionsResponseSchema.parse(
          await (
            await asUser(server, cookie, 'GET', `/api/sessions?organizationId=${owner.organizationId}`)
          ).json(),
        ).sessions,
      (list) => list.length === 1,
      30_000,
    );
    const session = sessions[0]!;
    expect(session.metadata.repository).toBe('acme/widgets');

    // The folder is no longer followed (its sessions stay): the copy is all that is left to make.
    const removed = await asUser(
      server,
      cookie,
      'DELETE',
      `/api/workspaces/${owner.organizationId}/history-sources/${sourceId}`,
    );
    expect(removed.status).toBe(204);

    // An agent that ran in this session's sandbox before marked a project for that folder in
    // Gemini CLI's folder, with a dangling link where the chat's copy goes.
    const victim = join(github.root, 'victim', '.bashrc');
    mkdirSync(join(victim, '..'));
    const planted = join(geminiRoot, 'tmp', 'planted');
    mkdirSync(join(planted, 'chats'), { recursive: true });
    writeFileSync(join(planted, '.project_root'), join(server.sandboxRoot, session.id));
    symlinkSync(victim, join(planted, 'chats', basename(chat!)));

    const followUp = await asUser(server, cookie, 'POST', `/api/sessions/${session.id}/messages`, {
      content: 'Go on in a sandbox.',
      continueIn: 'sandbox',
    });
    expect(followUp.status, await followUp.clone().text()).toBe(201);
    // Gemini CLI 0.61.0 records no result in its file: the run's is the first.
    const ended = await waitForResults(server, cookie, session.id, 1, 60_000);
    expect(existsSync(victim)).toBe(false);
    const result = ended.messages.at(-1);
    expect(result).toMatchObject({ type: 'result', is_error: true });
    expect(result?.type === 'result' ? result.result : '').toContain(
      `Cannot copy ${chat} to ${join(planted, 'chats', basename(chat!))}: a symbolic link is already there`,
    );
    expect(ended.status).toBe('failed');
  }, 120_000);
});
