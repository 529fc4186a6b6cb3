// Continuing an imported Gemini CLI session in a sandbox places its chat in a project of the
// session's own CLI home, a folder its earlier runs could write: a link planted where the chat
// goes is replaced, never written through. The real server, the real Gemini CLI on a scripted
// model server, a real recorded chat, github.com as a bare repository.
import { cpSync, existsSync, lstatSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliHomePath, sessionCliFolder } from '../../src-main/agents/kinds/cli/cli-homes.js';
import { ListSessionsResponseSchema } from '../../src-shared/sessions.js';
import { startScriptedGeminiServer } from '../fixtures/agents/scripted-gemini-server.mjs';
import { requireTools } from '../helpers/require-tools.js';
import { agentCliTool } from '../helpers/tools.js';
import { waitForResults } from '../helpers/agent-runs.js';
import { createGitHubFixture } from '../helpers/github-fixture.js';
import { filesUnder, HISTORY_FIXTURES } from '../helpers/hostile-history.js';
import { addHistorySource, asUser, seedWorkspace, startTestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';
import { useCleanups } from '../helpers/cleanups.js';

const cleanup = useCleanups();

const geminiTool = agentCliTool('gemini');
const gemini = geminiTool.path;

describe("an imported Gemini CLI chat placed in the session's home for a sandbox's folder", () => {
  it(
    'is never written through a link planted where it goes',
    { ...requireTools(geminiTool), timeout: 120_000 },
    async () => {
      const model = await startScriptedGeminiServer([
        { match: '', turns: [{ parts: [{ text: 'Going on in the sandbox.' }] }] },
      ]);
      cleanup(() => model.close());
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
      writeFileSync(
        join(geminiRoot, 'settings.json'),
        JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }),
      );

      const server = await startTestServer({
        agentEnv: {
          ...github.env(),
          PATH: `${github.env().PATH}:${process.env.PATH}`,
          HOME: github.root,
          SESSIONDESK_GEMINI_BIN: gemini!,
          GEMINI_API_KEY: 'scripted',
          GOOGLE_GEMINI_BASE_URL: model.url,
          GEMINI_TELEMETRY_ENABLED: 'false',
        },
        agentEnvNames: ['GEMINI_TELEMETRY_ENABLED'],
      });
      cleanup(() => server.dispose());
      const owner = await seedWorkspace(server);
      const cookie = owner.user.cookie;
      await addHistorySource(server, cookie, owner.organizationId, {
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

      // An earlier run of this session marked a project for its folder in the session's own Gemini
      // folder, with a dangling link where the chat goes.
      const victim = join(github.root, 'victim', '.bashrc');
      mkdirSync(join(victim, '..'));
      const planted = join(
        sessionCliFolder('gemini', cliHomePath(server.sandboxRoot, session.id)),
        'tmp',
        'planted',
      );
      mkdirSync(join(planted, 'chats'), { recursive: true });
      writeFileSync(join(planted, '.project_root'), join(server.sandboxRoot, session.id));
      symlinkSync(victim, join(planted, 'chats', basename(chat!)));

      const followUp = await asUser(server, cookie, 'POST', `/api/sessions/${session.id}/messages`, {
        content: 'Go on in a sandbox.',
        continueIn: 'sandbox',
      });
      expect(followUp.status, await followUp.clone().text()).toBe(201);
      // Gemini CLI 0.61.0 records no result in its file: the run's is the first.
      const ended = await waitForResults(server, cookie, session.id, 1, 120_000);
      expect(existsSync(victim)).toBe(false);
      expect(ended.status, JSON.stringify(ended.messages.at(-1))).toBe('completed');
      // The link is gone: the chat stands there, the CLI found it and went on.
      expect(lstatSync(join(planted, 'chats', basename(chat!))).isSymbolicLink()).toBe(false);
      expect(JSON.stringify(model.requests.at(-1)?.body)).toContain('Go on in a sandbox.');
    },
  );
});
