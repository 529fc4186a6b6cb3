// A review reaches the real agents as one follow-up: Claude Code and Codex through their own
// CLIs, OpenCode through the Agent Client Protocol, each against its scripted model server. The
// session works in a clone of a repository; its changes are made in the sandbox, commented on
// two lines, and the model's next request is read for the one prompt quoting both.
import { mkdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import type { RecordedRequest } from '../fixtures/agents/scripted-anthropic-server.mjs';
import { startScriptedChatCompletionsServer } from '../fixtures/agents/scripted-chat-completions-server.mjs';
import { ACP_AGENTS_UNDER_TEST, acpAgentTool } from '../helpers/acp-runs.js';
import { writeScriptedOpencodeConfig } from '../helpers/agent-cli.js';
import { waitForResults } from '../helpers/agent-runs.js';
import { createGitHubFixture } from '../helpers/github-fixture.js';
import { realCli } from '../helpers/real-cli-setup.js';
import { requireTools } from '../helpers/require-tools.js';
import { asUser, createSession, seedWorkspace, startTestServer, tempDir } from '../helpers/server.js';
import { agentCliTool, type Tool } from '../helpers/tools.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Ties the session's requests to its script. */
const MATCH = 'REVIEW-RUN';

/** What the sandbox holds once the test has changed it: two files, one line each commented. */
const APP = 'export const a = 1;\nexport const b = 2;\nexport const c = 3;\n';
const NOTES = '# Widgets\n\nKeep b small.\n';
const REVIEW = {
  comments: [
    { path: 'src/app.js', line: 2, body: 'Rename b to size.' },
    { path: 'NOTES.md', startLine: 2, line: 3, body: 'Say why.' },
  ],
  message: 'Then commit.',
};
/** The follow-up the agent is sent: every commented line quoted, with its path and number. */
const PROMPT = [
  'Review of your changes:',
  '',
  'src/app.js:2\n> export const b = 2;\nRename b to size.',
  '',
  'NOTES.md:2-3\n> \n> Keep b small.\nSay why.',
  '',
  'Then commit.',
].join('\n');

interface Agent {
  tool: Tool;
  /** The server's agent setting, the agents' environment, and the model's requests. */
  setUp(home: string): Promise<{
    settings: Record<string, unknown>;
    env: NodeJS.ProcessEnv;
    names: string[];
    requests: RecordedRequest[];
    close(): Promise<void>;
  }>;
  /** The text of the latest user message of a model request. */
  latestPrompt(body: unknown): string;
}

type Part = { type?: string; text?: string };
const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? (content as Part[]).map((p) => (typeof p === 'string' ? p : (p.text ?? ''))).join('\n')
      : '';

/** The latest user message of a Messages or Chat Completions request (`messages`). */
const latestMessage = (body: unknown) =>
  textOf(
    ((body as { messages?: { role: string; content: unknown }[] }).messages ?? []).findLast(
      (m) => m.role === 'user',
    )?.content,
  );

const AGENTS: Record<string, Agent> = {
  'Claude Code': {
    tool: agentCliTool('claude'),
    async setUp(home) {
      const cli = await realCli(
        'claude-code',
        [
          {
            match: MATCH,
            turns: [
              { blocks: [{ type: 'text', text: 'Ready.' }] },
              { blocks: [{ type: 'text', text: 'Renamed.' }] },
            ],
          },
        ],
        home,
      );
      return {
        settings: { agent: 'claude-code' },
        env: { ...cli.env, SESSIONDESK_CLAUDE_BIN: cli.bin },
        names: cli.names,
        requests: cli.requests,
        close: () => cli.close(),
      };
    },
    latestPrompt: latestMessage,
  },
  Codex: {
    tool: agentCliTool('codex'),
    async setUp(home) {
      const cli = await realCli(
        'codex',
        [{ match: MATCH, turns: [{ output: { text: 'Ready.' } }, { output: { text: 'Renamed.' } }] }],
        home,
      );
      return {
        settings: { agent: 'codex' },
        env: { ...cli.env, SESSIONDESK_CODEX_BIN: cli.bin },
        names: cli.names,
        requests: cli.requests,
        close: () => cli.close(),
      };
    },
    // The Responses API: `input` items, the person's as `{ role: 'user', content: [{ text }] }`.
    latestPrompt: (body) =>
      textOf(
        ((body as { input?: { role?: string; content: unknown }[] }).input ?? []).findLast(
          (i) => i.role === 'user',
        )?.content,
      ),
  },
  'OpenCode (ACP)': {
    tool: acpAgentTool(ACP_AGENTS_UNDER_TEST.opencode!),
    async setUp(home) {
      const server = await startScriptedChatCompletionsServer([
        { match: MATCH, turns: [{ text: 'Ready.' }, { text: 'Renamed.' }] },
      ]);
      writeScriptedOpencodeConfig(join(home, '.config'), server.url);
      return {
        settings: { agent: 'acp', acpAgent: 'opencode' },
        env: { HOME: home, SESSIONDESK_OPENCODE_BIN: acpAgentTool(ACP_AGENTS_UNDER_TEST.opencode!).path! },
        names: [],
        requests: server.requests,
        close: () => server.close(),
      };
    },
    latestPrompt: latestMessage,
  },
};

describe.each(Object.entries(AGENTS))('a review sent to %s', (_name, agent) => {
  it(
    'reaches the model as one follow-up quoting both commented lines',
    { ...requireTools(agent.tool), timeout: 150_000 },
    async () => {
      const github = createGitHubFixture(['acme/widgets']);
      cleanups.push(() => github.dispose());
      const home = tempDir('review-agent-home-');
      cleanups.push(() => rm(home, { recursive: true, force: true }));
      const model = await agent.setUp(home);
      cleanups.push(() => model.close());
      const server = await startTestServer({
        agentEnv: {
          ...github.env({ withGh: false }),
          PATH: `${join(github.root, 'bin')}:${process.env.PATH ?? ''}`,
          ...model.env,
        },
        agentEnvNames: model.names,
      });
      cleanups.push(() => server.dispose());
      const owner = await seedWorkspace(server);
      const cookie = owner.user.cookie;
      const put = await asUser(
        server,
        cookie,
        'PUT',
        `/api/workspaces/${owner.organizationId}/agent`,
        model.settings,
      );
      expect(put.status, await put.clone().text()).toBe(200);

      const created = await createSession(server, cookie, {
        organizationId: owner.organizationId,
        initialMessage: `Get ready. ${MATCH}`,
        repoUrl: 'https://github.com/acme/widgets',
      });
      const first = await waitForResults(server, cookie, created.id, 1, 90_000);
      expect(first.status, JSON.stringify(first.messages.at(-1))).toBe('completed');

      // The changes to review, made in the session's clone.
      const sandbox = sandboxPath(server.sandboxRoot, created.id);
      mkdirSync(join(sandbox, 'src'), { recursive: true });
      writeFileSync(join(sandbox, 'src', 'app.js'), APP);
      writeFileSync(join(sandbox, 'NOTES.md'), NOTES);
      const before = model.requests.length;

      const posted = await asUser(server, cookie, 'POST', `/api/sessions/${created.id}/review`, REVIEW);
      expect(posted.status, await posted.clone().text()).toBe(201);
      const second = await waitForResults(server, cookie, created.id, 2, 90_000);
      expect(second.messages.at(-1)).toMatchObject({
        type: 'result',
        subtype: 'success',
        result: 'Renamed.',
      });

      // One follow-up in the transcript, and in the model's request the prompt quoting both lines.
      const users = second.messages.filter((m) => m.type === 'user');
      expect(users.map((m) => m.message.content)).toEqual([`Get ready. ${MATCH}`, PROMPT]);
      const asked = model.requests
        .slice(before)
        .filter((r) => agent.latestPrompt(r.body).includes('Review of your changes:'));
      expect(asked.length).toBeGreaterThan(0);
      for (const request of asked) expect(agent.latestPrompt(request.body)).toContain(PROMPT);
    },
  );
});
