import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import type { SessionFull } from '../../src-shared/index.js';
import { findAgentCli, writeScriptedOpencodeConfig } from './agent-cli.js';
import { startScriptedChatCompletionsServer } from '../fixtures/agents/scripted-chat-completions-server.mjs';
import type { RecordedRequest } from '../fixtures/agents/scripted-anthropic-server.mjs';
import { getSession, waitForResults } from './agent-runs.js';
import { realCli } from './real-cli-setup.js';
import { requireTools } from './require-tools.js';
import { runProcesses, transcript } from './run-control.js';
import { asUser, createSession, seedWorkspace, startTestServer, tempDir } from './server.js';
import type { Tool } from './tools.js';

/**
 * An agent that speaks the Agent Client Protocol, run by the real server in the real sandbox
 * against its scripted model server: a run that writes a file and runs a command, a follow-up
 * in the same ACP session, and Stop. The person's own configuration (in their home, as a person
 * signs the agent in) is all the agent is given: the session's home is seeded from it.
 */

/** Ties the requests of the run and its follow-up to their script. */
const MATCH = 'ACP-SESSION';
/** The prompt whose model answer is held open until the run is stopped. */
const CANCEL_MATCH = 'ACP-CANCEL';
const COMMAND = 'cp NOTES.md COPY.md';
const ANSWER = 'Wrote NOTES.md and copied it.';
const FOLLOW_UP = 'The notes file says: First line.';
const HOLD = 'Working on it';
/** Ties a run that answers and its follow-up, stopped while its command runs, to their script. */
const RESUME_STOP = 'ACP-RESUME-STOP';
/** The stopped follow-up's one response, as every agent's model server serves it. */
const STOPPED_USAGE = { inputTokens: 200, outputTokens: 20, cacheReadTokens: 100 };
/** A command that goes on until it is stopped. */
const WAIT_COMMAND = `node -e "setTimeout(() => {}, 120000)"`;
/** Where `scripts/install-agent-clis.sh --acp` puts the agents in CI. */
const DEFAULT_ACP_PREFIX = process.env.ACP_AGENTS_PREFIX ?? '/tmp/acp-agents';

interface ScriptedModel {
  env: NodeJS.ProcessEnv;
  names: string[];
  /** Every request it answered or holds. */
  requests: RecordedRequest[];
  held: RecordedRequest[];
  close(): Promise<void>;
}

interface AcpAgentUnderTest {
  name: string;
  program: string;
  /** The variable naming the program in the test's environment, and the server's. */
  envVariable: string;
  serverVariable: string;
  prefix: string;
  /**
   * What a follow-up stopped while its command runs is counted: its one model response's tokens
   * (served as 300 in, 100 of them from the cache, and 20 out), or null where the agent reports
   * none of a stopped turn and logs them nowhere Session Desk reads.
   */
  stoppedUsage: { inputTokens: number; outputTokens: number; cacheReadTokens: number } | null;
  /** Starts the agent's scripted model server and writes the person's configuration into `home`. */
  setUp(home: string): Promise<ScriptedModel>;
}

/**
 * The session folder a model request names (agents tell their model the folder they work in),
 * under the sandboxes of the test's server: the agents' tools want absolute paths.
 */
let folderOf: (body: unknown) => string = () => {
  throw new Error('no test is running');
};

/** The scripted turns for a Chat Completions model, in the agent's own tools' words. */
function chatScript(
  write: (folder: string) => [string, object],
  shell: [string, object],
  wait: [string, object],
) {
  return [
    { match: CANCEL_MATCH, turns: [{ hold: true, text: HOLD }] },
    {
      match: RESUME_STOP,
      turns: [
        { text: 'Ready.', usage: { prompt_tokens: 100, completion_tokens: 10 } },
        {
          calls: [{ name: wait[0], arguments: wait[1] }],
          usage: { prompt_tokens: 300, completion_tokens: 20, cached_tokens: 100 },
        },
      ],
    },
    {
      match: MATCH,
      turns: [
        (body: unknown) => {
          const [name, args] = write(folderOf(body));
          return {
            reasoning: 'Write the notes first.',
            text: 'I will write the notes file.',
            calls: [{ name, arguments: args }],
            usage: { prompt_tokens: 1200, completion_tokens: 30, cached_tokens: 1000 },
          };
        },
        {
          calls: [{ name: shell[0], arguments: shell[1] }],
          usage: { prompt_tokens: 1300, completion_tokens: 20 },
        },
        { text: ANSWER, usage: { prompt_tokens: 1400, completion_tokens: 12 } },
        { text: FOLLOW_UP, usage: { prompt_tokens: 1500, completion_tokens: 9 } },
      ],
    },
  ];
}

const chatModelEnv = (url: string) => ({
  OPENAI_API_KEY: 'scripted',
  OPENAI_BASE_URL: url,
  OPENAI_MODEL: 'scripted-model',
});

export const ACP_AGENTS_UNDER_TEST: Record<string, AcpAgentUnderTest> = {
  opencode: {
    name: 'OpenCode',
    program: 'opencode',
    envVariable: 'OPENCODE_BIN',
    serverVariable: 'SESSIONDESK_OPENCODE_BIN',
    prefix: DEFAULT_ACP_PREFIX,
    // OpenCode answers a cancelled prompt with zero usage and reports none of it otherwise.
    stoppedUsage: null,
    async setUp(home) {
      const server = await startScriptedChatCompletionsServer(
        chatScript(
          (folder) => ['write', { filePath: join(folder, 'NOTES.md'), content: 'First line\n' }],
          ['bash', { command: COMMAND, description: 'Copy the notes' }],
          ['bash', { command: WAIT_COMMAND, description: 'Wait' }],
        ),
      );
      // The person's own OpenCode configuration: a provider of their choosing.
      writeScriptedOpencodeConfig(join(home, '.config'), server.url);
      return {
        env: {},
        names: [],
        requests: server.requests,
        held: server.held,
        close: () => server.close(),
      };
    },
  },
  'qwen-code': {
    name: 'Qwen Code',
    program: 'qwen',
    envVariable: 'QWEN_BIN',
    serverVariable: 'SESSIONDESK_QWEN_BIN',
    prefix: DEFAULT_ACP_PREFIX,
    stoppedUsage: STOPPED_USAGE,
    async setUp(home) {
      const server = await startScriptedChatCompletionsServer(
        chatScript(
          (folder) => ['write_file', { file_path: join(folder, 'NOTES.md'), content: 'First line\n' }],
          ['run_shell_command', { command: COMMAND, description: 'Copy the notes', is_background: false }],
          ['run_shell_command', { command: WAIT_COMMAND, description: 'Wait', is_background: false }],
        ),
      );
      // The person's own Qwen Code sign-in: an OpenAI-compatible key in ~/.qwen/.env.
      mkdirSync(join(home, '.qwen'), { recursive: true });
      writeFileSync(
        join(home, '.qwen', 'settings.json'),
        JSON.stringify({
          security: { auth: { selectedType: 'openai' } },
          privacy: { usageStatisticsEnabled: false },
        }),
      );
      writeFileSync(
        join(home, '.qwen', '.env'),
        Object.entries(chatModelEnv(server.url))
          .map(([name, value]) => `${name}=${value}\n`)
          .join(''),
      );
      return {
        env: {},
        names: [],
        requests: server.requests,
        held: server.held,
        close: () => server.close(),
      };
    },
  },
  'claude-code': {
    name: 'Claude Agent',
    program: 'claude-agent-acp',
    envVariable: 'CLAUDE_AGENT_ACP_BIN',
    serverVariable: 'SESSIONDESK_CLAUDE_AGENT_ACP_BIN',
    prefix: DEFAULT_ACP_PREFIX,
    stoppedUsage: STOPPED_USAGE,
    async setUp(home) {
      const cli = await realCli(
        'claude-code',
        [
          {
            match: CANCEL_MATCH,
            latest: true,
            turns: [{ blocks: [{ type: 'text', text: HOLD }], hold: true }],
          },
          {
            match: RESUME_STOP,
            turns: [
              { blocks: [{ type: 'text', text: 'Ready.' }], usage: { input_tokens: 100, output_tokens: 10 } },
              {
                blocks: [
                  { type: 'tool_use', name: 'Bash', input: { command: WAIT_COMMAND, description: 'Wait' } },
                ],
                usage: { input_tokens: 200, output_tokens: 20, cache_read_input_tokens: 100 },
              },
            ],
          },
          {
            match: MATCH,
            turns: [
              (body: unknown) => ({
                blocks: [
                  { type: 'thinking', thinking: 'Write the notes first.' },
                  { type: 'text', text: 'I will write the notes file.' },
                  {
                    type: 'tool_use',
                    name: 'Write',
                    input: { file_path: join(folderOf(body), 'NOTES.md'), content: 'First line\n' },
                  },
                ],
                usage: { input_tokens: 1200, output_tokens: 30 },
              }),
              {
                blocks: [
                  {
                    type: 'tool_use',
                    name: 'Bash',
                    input: { command: COMMAND, description: 'Copy the notes' },
                  },
                ],
                usage: { input_tokens: 1300, output_tokens: 20 },
              },
              { blocks: [{ type: 'text', text: ANSWER }], usage: { input_tokens: 1400, output_tokens: 12 } },
              {
                blocks: [{ type: 'text', text: FOLLOW_UP }],
                usage: { input_tokens: 1500, output_tokens: 9 },
              },
            ],
          },
        ],
        home,
      );
      return {
        env: cli.env,
        names: cli.names,
        requests: cli.requests,
        held: cli.held,
        close: () => cli.close(),
      };
    },
  },
  codex: {
    name: 'Codex',
    program: 'codex-acp',
    envVariable: 'CODEX_ACP_BIN',
    serverVariable: 'SESSIONDESK_CODEX_ACP_BIN',
    prefix: DEFAULT_ACP_PREFIX,
    stoppedUsage: STOPPED_USAGE,
    async setUp(home) {
      const cli = await realCli(
        'codex',
        [
          { match: CANCEL_MATCH, turns: [{ output: { text: HOLD }, hold: true }] },
          {
            match: RESUME_STOP,
            turns: [
              {
                output: { text: 'Ready.' },
                usage: { input_tokens: 100, output_tokens: 10, cached_tokens: 0, reasoning_tokens: 0 },
              },
              {
                output: { call: 'exec_command', arguments: { cmd: WAIT_COMMAND } },
                usage: { input_tokens: 300, output_tokens: 20, cached_tokens: 100, reasoning_tokens: 0 },
              },
            ],
          },
          {
            match: MATCH,
            turns: [
              {
                reasoning: 'Write the notes first.',
                output: {
                  custom: 'apply_patch',
                  input: '*** Begin Patch\n*** Add File: NOTES.md\n+First line\n*** End Patch\n',
                },
              },
              { output: { call: 'exec_command', arguments: { cmd: COMMAND } } },
              { output: { text: ANSWER } },
              { output: { text: FOLLOW_UP } },
            ],
          },
        ],
        home,
      );
      return {
        env: cli.env,
        names: cli.names,
        requests: cli.requests,
        held: cli.held,
        close: () => cli.close(),
      };
    },
  },
};

export function acpAgentTool(agent: AcpAgentUnderTest): Tool & { path: string | null } {
  const path = findAgentCli(agent.program, agent.envVariable, agent.prefix);
  return {
    name: `${agent.program} (${agent.name}, an ACP agent)`,
    found: path !== null,
    path,
    install: `set ${agent.envVariable}, put ${agent.program} on PATH, or run scripts/install-agent-clis.sh --acp ${agent.prefix} (the prefix ACP_AGENTS_PREFIX names)`,
  };
}

/** Every block of the assistant's messages, in order. */
const blocks = (session: SessionFull) =>
  session.messages.flatMap((m) => (m.type === 'assistant' ? m.message.content : []));

/** The tests of one ACP agent, by its id in Session Desk's registry. */
export function describeAcpAgentRuns(id: string): void {
  const agent = ACP_AGENTS_UNDER_TEST[id]!;
  const tool = acpAgentTool(agent);
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function acpServer() {
    const home = tempDir(`acp-${id}-home-`);
    // Last of the cleanups (they run in reverse): after the server and the model have stopped.
    cleanups.push(() => rm(home, { recursive: true, force: true }));
    let sandboxRoot = '';
    folderOf = (body) => {
      const pattern = new RegExp(`${sandboxRoot.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')}/[\\w-]+`, 'u');
      const found = pattern.exec(JSON.stringify(body))?.[0];
      if (!found) throw new Error('the model request names no session folder');
      return found;
    };
    const model = await agent.setUp(home);
    cleanups.push(() => model.close());
    const server = await startTestServer({
      agentEnv: { PATH: process.env.PATH, HOME: home, ...model.env, [agent.serverVariable]: tool.path! },
      agentEnvNames: model.names,
    });
    cleanups.push(() => server.dispose());
    sandboxRoot = server.sandboxRoot;
    const owner = await seedWorkspace(server);
    const cookie = owner.user.cookie;
    const put = await asUser(server, cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, {
      agent: 'acp',
      acpAgent: id,
    });
    expect(put.status, await put.clone().text()).toBe(200);
    return { server, owner, cookie, model };
  }

  describe(`${agent.name} through the Agent Client Protocol`, requireTools(tool), () => {
    it(
      'writes a file and runs a command in the sandbox, then answers a follow-up in the same ACP session',
      { timeout: 150_000 },
      async () => {
        const { server, owner, cookie } = await acpServer();
        const listed = (await (await asUser(server, cookie, 'GET', '/api/agents')).json()) as {
          agents: { kind: string; acpAgent?: string; found: boolean; version?: string }[];
        };
        expect(listed.agents).toContainEqual(
          expect.objectContaining({ kind: 'acp', acpAgent: id, found: true, version: expect.any(String) }),
        );
        const created = await createSession(server, cookie, {
          organizationId: owner.organizationId,
          initialMessage: `Write the notes. ${MATCH}`,
        });
        const first = await waitForResults(server, cookie, created.id, 1, 60_000);
        expect(first.status, JSON.stringify(first.messages.at(-1))).toBe('completed');
        expect(first).toMatchObject({ agent: 'acp', acpAgent: id, isolation: 'sandbox' });
        expect(first.messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: ANSWER });
        // What the agent did is on disk, in the session's own folder.
        const folder = sandboxPath(server.sandboxRoot, created.id);
        expect(readFileSync(join(folder, 'NOTES.md'), 'utf8')).toBe('First line\n');
        expect(readFileSync(join(folder, 'COPY.md'), 'utf8')).toBe('First line\n');
        // Its tool calls, each paired with its result.
        const uses = blocks(first).filter((b) => b.type === 'tool_use');
        const results = blocks(first).filter((b) => b.type === 'tool_result');
        expect(uses.length).toBeGreaterThanOrEqual(2);
        expect(results.map((r) => (r as { tool_use_id: string }).tool_use_id)).toEqual(
          uses.map((u) => (u as { id: string }).id),
        );
        expect(results.filter((r) => (r as { is_error?: boolean }).is_error === true)).toEqual([]);
        // codex-acp reports only the context window's use: its tokens come from Codex's own log.
        expect(first.usage?.outputTokens).toBeGreaterThan(0);
        expect(runProcesses(created.id)).toEqual([]);

        // The follow-up's model request carries the first turn: the agent loaded its session.
        const posted = await asUser(server, cookie, 'POST', `/api/sessions/${created.id}/messages`, {
          content: `What does it say? ${MATCH}`,
        });
        expect(posted.status, await posted.clone().text()).toBe(201);
        const second = await waitForResults(server, cookie, created.id, 2, 60_000);
        expect(transcript(second).at(-1)).toBe(`result: ${FOLLOW_UP}`);
        const full = await getSession(server, cookie, created.id);
        expect(transcript(full).filter((line) => /earlier session/u.test(line))).toEqual([]);
        expect(runProcesses(created.id)).toEqual([]);
      },
    );

    it(
      'continues its own session in a follow-up, and a stop there counts what that run was served',
      { timeout: 150_000 },
      async () => {
        const { server, owner, cookie, model } = await acpServer();
        const created = await createSession(server, cookie, {
          organizationId: owner.organizationId,
          initialMessage: `Get ready. ${RESUME_STOP}`,
        });
        const first = await waitForResults(server, cookie, created.id, 1, 60_000);
        expect(first.messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Ready.' });
        const posted = await asUser(server, cookie, 'POST', `/api/sessions/${created.id}/messages`, {
          content: 'Now wait.',
        });
        expect(posted.status, await posted.clone().text()).toBe(201);
        const waiting = () => runProcesses(created.id).some((p) => p.cmdline.includes('120000'));
        await expect.poll(waiting, { timeout: 60_000, interval: 100 }).toBe(true);
        // The follow-up's model request holds the first turn: the agent went on in its own session.
        const followUp = model.requests.filter((r) => JSON.stringify(r.body).includes('Now wait.'));
        expect(followUp.length).toBeGreaterThan(0);
        expect(JSON.stringify(followUp[0]!.body)).toContain(`Get ready. ${RESUME_STOP}`);
        expect(JSON.stringify(followUp[0]!.body)).toContain('Ready.');
        const stop = await asUser(server, cookie, 'POST', `/api/sessions/${created.id}/stop`);
        expect(stop.status, await stop.clone().text()).toBe(200);
        await expect.poll(() => runProcesses(created.id), { timeout: 15_000, interval: 100 }).toEqual([]);
        const session = await waitForResults(server, cookie, created.id, 2, 30_000);
        const results = session.messages.filter((m) => m.type === 'result');
        expect(results[1]).toMatchObject({ stopped: true });
        const stopped = results[1]?.type === 'result' ? results[1].usage : undefined;
        if (agent.stoppedUsage === null) expect(stopped?.inputTokens ?? 0).toBe(0);
        // That run's one response: not the first run's, not none.
        else expect(stopped).toMatchObject(agent.stoppedUsage);
        // The cost the agent reported in its `usage_update` (claude-agent-acp: Claude Code's, for
        // this run's response at its price of the scripted model) is kept with it.
        if (agent.program === 'claude-agent-acp') expect(stopped?.costUsd).toBeCloseTo(0.00093, 6);
      },
    );

    it(
      'stops: the agent is told to cancel, and nothing of its run is left',
      { timeout: 60_000 },
      async () => {
        const { server, owner, cookie, model } = await acpServer();
        const created = await createSession(server, cookie, {
          organizationId: owner.organizationId,
          initialMessage: `Wait. ${CANCEL_MATCH}`,
        });
        await expect.poll(() => model.held.length, { timeout: 40_000, interval: 100 }).toBeGreaterThan(0);
        expect(runProcesses(created.id).length).toBeGreaterThan(0);
        const stop = await asUser(server, cookie, 'POST', `/api/sessions/${created.id}/stop`);
        expect(stop.status, await stop.clone().text()).toBe(200);
        await expect.poll(() => runProcesses(created.id), { timeout: 10_000, interval: 100 }).toEqual([]);
        const session = await waitForResults(server, cookie, created.id);
        expect(session.messages.at(-1)).toMatchObject({ type: 'result', stopped: true });
      },
    );
  });
}
