import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claudeCodeCommand } from '../../src-main/agents/kinds/claude-code/command.js';
import { codexCommand } from '../../src-main/agents/kinds/codex/command.js';
import { geminiCommand } from '../../src-main/agents/kinds/gemini/command.js';
import { ListSessionsResponseSchema, type SessionFull } from '../../src-shared/sessions.js';
import { startScriptedAnthropicServer } from '../fixtures/agents/scripted-anthropic-server.mjs';
import { startScriptedGeminiServer } from '../fixtures/agents/scripted-gemini-server.mjs';
import { startScriptedResponsesServer } from '../fixtures/agents/scripted-responses-server.mjs';
import { fieldOf, runProgram } from '../helpers/agent-cli.js';
import { defaultSandboxRoot } from '../../src-main/agents/sandbox/sandbox-root.js';
import { getSession, waitForResults } from '../helpers/agent-runs.js';
import { release, runProcesses, waitForText, WAITING_AGENT } from '../helpers/run-control.js';
import { startServe } from '../helpers/cli.js';
import { seedDataDir } from '../helpers/seed.js';
import { CLAUDE_CODE_VARIABLES, claudeCodeEnv } from '../helpers/claude-code-cli.js';
import { requireTools } from '../helpers/require-tools.js';
import { agentCliTool } from '../helpers/tools.js';
import { createGitHubFixture } from '../helpers/github-fixture.js';
import { seedImported } from '../helpers/imported.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  startTestServer,
  tempDir,
  type TestServer,
} from '../helpers/server.js';

const claude = agentCliTool('claude');
const bin = claude.path;
const codex = agentCliTool('codex');
const codexBin = codex.path;
const gemini = agentCliTool('gemini');
const geminiBin = gemini.path;

/** One conversation, a distinct answer per turn, so that a message counted twice shows. */
const SCRIPT = [
  {
    match: 'CONTINUE-ME',
    turns: [
      'Noted: the colour is teal.',
      'Answered in your folder: teal.',
      'Answered from your terminal: teal.',
      'Answered in a sandbox: teal.',
    ].map((text) => ({ blocks: [{ type: 'text' as const, text }] })),
  },
];

const CLI_VARIABLES = CLAUDE_CODE_VARIABLES;

/** The texts of the agent's answers, in order. */
function answers(session: SessionFull): string[] {
  return session.messages.flatMap((m) =>
    m.type === 'assistant' && m.notice === undefined
      ? m.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))
      : [],
  );
}

const prompts = (session: SessionFull) =>
  session.messages.flatMap((m) =>
    m.type === 'user' && typeof m.message.content === 'string' ? [m.message.content] : [],
  );

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A conversation a person had with the real Claude Code in their own clone is imported, then
 * continued from Session Desk with Claude Code's own resume: in that folder, and in a fresh
 * clone. github.com is a bare repository reached through `insteadOf`.
 */
describe('continuing a session imported from Claude Code', requireTools(claude), () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setUp(branch?: string) {
    const github = createGitHubFixture(['acme/widgets']);
    cleanups.push(() => github.dispose());
    appendFileSync(join(github.root, 'gitconfig'), '[user]\n\tname = Agent\n\temail = agent@example.test\n');
    const work = join(github.root, 'work', 'widgets');
    mkdirSync(join(work, '..'), { recursive: true });
    github.git(github.root, 'clone', '--quiet', 'https://github.com/acme/widgets', work);
    if (branch) github.git(work, 'checkout', '--quiet', '-b', branch);
    const model = await startScriptedAnthropicServer(SCRIPT);
    cleanups.push(() => model.close());
    // The person's terminal: the same home folder (and so the same ~/.claude) as the server's agents.
    const terminalEnv = { ...github.env(), ...claudeCodeEnv(github.root, model.url), PATH: process.env.PATH };
    const terminal = async (prompt: string, resumeId?: string) => {
      const command = claudeCodeCommand({ prompt, model: 'claude-sonnet-4-5', resumeId });
      const run = await runProgram(bin!, command.args, command.stdin, work, terminalEnv);
      expect(run.code, run.stderr).toBe(0);
      return fieldOf(run.stdout, 'system', 'session_id');
    };
    const conversationId = await terminal('Remember that the colour is teal. CONTINUE-ME');

    const claudeEnv = claudeCodeEnv(github.root, model.url);
    const server = await startTestServer({
      agentEnv: {
        ...github.env(),
        SESSIONDESK_CLAUDE_BIN: bin!,
        ...Object.fromEntries(CLI_VARIABLES.map((name) => [name, claudeEnv[name]])),
      },
      agentEnvNames: CLI_VARIABLES,
    });
    cleanups.push(() => server.dispose());
    const owner = await seedWorkspace(server);
    const cookie = owner.user.cookie;
    const added = await asUser(
      server,
      cookie,
      'POST',
      `/api/workspaces/${owner.organizationId}/history-sources`,
      {
        kind: 'claude-code',
        rootDir: join(github.root, '.claude'),
      },
    );
    expect(added.status, await added.clone().text()).toBe(201);
    const imported = await waitFor('the import', async () => {
      const list = ListSessionsResponseSchema.parse(
        await (
          await asUser(server, cookie, 'GET', `/api/sessions?organizationId=${owner.organizationId}`)
        ).json(),
      );
      return list.sessions[0];
    });
    expect(imported.source).toMatchObject({ kind: 'claude-code', cwd: work, conversationId });
    expect(imported.metadata.repository).toBe('acme/widgets');
    return { github, work, model, server, cookie, id: imported.id, conversationId, terminal };
  }

  const followUp = (server: TestServer, cookie: string, id: string, body: Record<string, unknown>) =>
    asUser(server, cookie, 'POST', `/api/sessions/${id}/messages`, body);

  it('goes on in the original folder, without duplicates, and later terminal turns still arrive', async () => {
    const { work, model, server, cookie, id, conversationId, terminal } = await setUp();

    const refused = await followUp(server, cookie, id, { content: 'Which colour?' });
    expect(refused.status).toBe(409);
    const why = ((await refused.json()) as { error: { message: string } }).error.message;
    expect(why).toContain('"continueIn": "original"');
    expect(why).toContain('"continueIn": "sandbox"');
    expect(why).toContain(work);

    const sent = await followUp(server, cookie, id, {
      content: 'Which colour did I name?',
      continueIn: 'original',
      continueFolder: work,
    });
    expect(sent.status, await sent.clone().text()).toBe(201);
    const continued = await waitForResults(server, cookie, id, 2, 120_000);
    expect(continued.status, JSON.stringify(continued.messages.at(-1))).toBe('completed');
    expect(continued.agent).toBe('claude-code');
    expect(prompts(continued)).toEqual([
      'Remember that the colour is teal. CONTINUE-ME',
      'Which colour did I name?',
    ]);
    expect(answers(continued)).toEqual(['Noted: the colour is teal.', 'Answered in your folder: teal.']);
    // The model saw the first exchange: the conversation was resumed, in the person's folder.
    const resumed = model.requests.find((r) => JSON.stringify(r.body).includes('Which colour did I name?'));
    expect(JSON.stringify(resumed?.body)).toContain('Noted: the colour is teal.');
    expect(JSON.stringify(resumed?.body)).toContain(work);

    // The person resumes it in their terminal: that turn is imported, the run's is not again.
    expect(await terminal('And now?', conversationId)).toBe(conversationId);
    const after = await waitFor('the terminal turn', async () => {
      const session = await getSession(server, cookie, id);
      return answers(session).includes('Answered from your terminal: teal.') ? session : undefined;
    });
    expect(prompts(after)).toEqual([
      'Remember that the colour is teal. CONTINUE-ME',
      'Which colour did I name?',
      'And now?',
    ]);
    expect(answers(after)).toEqual([
      'Noted: the colour is teal.',
      'Answered in your folder: teal.',
      'Answered from your terminal: teal.',
    ]);
  }, 240_000);

  it('goes on in a fresh clone of its repository in the sandbox', async () => {
    // The person worked on a branch of their own clone only: the clone starts from main.
    const { server, model, cookie, id, work } = await setUp('feature/local-only');
    const sent = await followUp(server, cookie, id, {
      content: 'Which colour, from the clone?',
      continueIn: 'sandbox',
    });
    expect(sent.status, await sent.clone().text()).toBe(201);
    const continued = await waitForResults(server, cookie, id, 2, 120_000);
    expect(continued.status, JSON.stringify(continued.messages.at(-1))).toBe('completed');
    expect(answers(continued)).toEqual(['Noted: the colour is teal.', 'Answered in your folder: teal.']);
    const sandbox = join(server.sandboxRoot, id);
    expect(existsSync(join(sandbox, '.git'))).toBe(true);
    expect(
      execFileSync('git', ['remote', 'get-url', 'origin'], { cwd: sandbox, encoding: 'utf8' }).trim(),
    ).toBe('https://github.com/acme/widgets');
    expect(continued.metadata.branch).toMatch(/^agent\//u);
    expect(execFileSync('git', ['log', '-1', '--format=%s'], { cwd: sandbox, encoding: 'utf8' }).trim()).toBe(
      'Initial commit',
    );
    const resumed = model.requests.find((r) =>
      JSON.stringify(r.body).includes('Which colour, from the clone?'),
    );
    expect(JSON.stringify(resumed?.body)).toContain('Noted: the colour is teal.');
    expect(JSON.stringify(resumed?.body)).toContain(`Primary working directory: ${sandbox} (was ${work})`);
    // The person's clone is untouched.
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: work, encoding: 'utf8' })).toBe('');

    // A later follow-up resumes in the same clone.
    const again = await followUp(server, cookie, id, { content: 'And once more?', continueIn: 'sandbox' });
    expect(again.status, await again.clone().text()).toBe(201);
    const twice = await waitForResults(server, cookie, id, 3, 120_000);
    expect(answers(twice)).toEqual([
      'Noted: the colour is teal.',
      'Answered in your folder: teal.',
      'Answered from your terminal: teal.',
    ]);
  }, 240_000);

  it('refuses clearly when the original folder is gone', async () => {
    const { server, cookie, id, work } = await setUp();
    rmSync(work, { recursive: true, force: true });
    const refused = await followUp(server, cookie, id, {
      content: 'Still there?',
      continueIn: 'original',
      continueFolder: work,
    });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      `The folder ${work}`,
    );
    expect(prompts(await getSession(server, cookie, id))).toEqual([
      'Remember that the colour is teal. CONTINUE-ME',
    ]);
  }, 120_000);
});

/**
 * A crash of the server while a continuation runs: what the CLI had written to the session's
 * file by then is not imported a second time once the server is back.
 */
describe('a continuation of an imported session cut off by a crash', requireTools(claude), () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('leaves each message once after a SIGKILL and a restart; later terminal turns still arrive', async () => {
    const github = createGitHubFixture(['acme/widgets']);
    cleanups.push(() => github.dispose());
    const work = join(github.root, 'work', 'widgets');
    mkdirSync(join(work, '..'), { recursive: true });
    github.git(github.root, 'clone', '--quiet', 'https://github.com/acme/widgets', work);
    const model = await startScriptedAnthropicServer([
      {
        match: 'CRASH-ME',
        turns: [
          { blocks: [{ type: 'text', text: 'Noted: the colour is teal.' }] },
          {
            blocks: [
              {
                type: 'tool_use',
                name: 'Bash',
                input: { command: 'tail -f /dev/null', description: 'Wait' },
              },
            ],
          },
          { blocks: [{ type: 'text', text: 'Answered from your terminal: teal.' }] },
        ],
      },
    ]);
    cleanups.push(() => model.close());
    const claudeEnv = claudeCodeEnv(github.root, model.url);
    const terminal = async (prompt: string, resumeId?: string) => {
      const command = claudeCodeCommand({ prompt, model: 'claude-sonnet-4-5', resumeId });
      const run = await runProgram(bin!, command.args, command.stdin, work, {
        ...github.env(),
        ...claudeEnv,
        PATH: process.env.PATH,
      });
      expect(run.code, run.stderr).toBe(0);
      return fieldOf(run.stdout, 'system', 'session_id');
    };
    const conversationId = await terminal('Remember that the colour is teal. CRASH-ME');

    const dataDir = tempDir('sessiondesk-continue-crash-');
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    cleanups.push(() => rmSync(defaultSandboxRoot(dataDir), { recursive: true, force: true }));
    const seeded = await seedDataDir(dataDir);
    const env = {
      ...github.env(),
      PATH: `${github.env().PATH}:${process.env.PATH}`,
      SESSIONDESK_CLAUDE_BIN: bin!,
      SESSIONDESK_AGENT_ENV: CLI_VARIABLES.join(','),
      ...Object.fromEntries(CLI_VARIABLES.map((name) => [name, claudeEnv[name]])),
    };
    const first = await startServe(dataDir, ['--log-level', 'silent'], env);
    cleanups.push(() => first.kill());
    const server = { url: first.url, origin: first.url } as TestServer;
    const signIn = await fetch(`${first.url}/api/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: seeded.email, password: seeded.password }),
    });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const org = seeded.organizationId;
    const added = await asUser(server, cookie, 'POST', `/api/workspaces/${org}/history-sources`, {
      kind: 'claude-code',
      rootDir: join(github.root, '.claude'),
    });
    expect(added.status, await added.clone().text()).toBe(201);
    const imported = await waitFor('the import', async () => {
      const list = ListSessionsResponseSchema.parse(
        await (await asUser(server, cookie, 'GET', `/api/sessions?organizationId=${org}`)).json(),
      );
      return list.sessions.find((s) => s.source?.conversationId === conversationId);
    });
    const id = imported.id;

    const sent = await asUser(server, cookie, 'POST', `/api/sessions/${id}/messages`, {
      content: 'Wait a while. CRASH-FOLLOW-UP',
      continueIn: 'original',
      continueFolder: work,
    });
    expect(sent.status, await sent.clone().text()).toBe(201);
    // The run is inside its tool: the CLI has written the prompt and its tool call to its file.
    await waitFor(
      'the tool to run',
      async () => (runProcesses(id).some((p) => p.cmdline.includes('tail -f /dev/null')) ? true : undefined),
      60_000,
    ).catch(async (err: unknown) => {
      const seen = await getSession(server, cookie, id);
      throw new Error(`the run did not start its tool:\n${JSON.stringify(seen.messages).slice(-3000)}`, {
        cause: err,
      });
    });
    await first.kill();
    await waitFor('the run to end with the server', async () =>
      runProcesses(id).length === 0 ? true : undefined,
    );

    const second = await startServe(dataDir, ['--log-level', 'silent'], env);
    cleanups.push(() => second.kill());
    const again = { url: second.url, origin: second.url } as TestServer;
    const recovered = await getSession(again, cookie, id);
    expect(recovered.status).toBe('failed');

    // The person resumes the conversation in their terminal: that turn arrives (so the file was
    // followed after the restart), and what the cut-off run wrote is there once.
    expect(await terminal('And now?', conversationId)).toBe(conversationId);
    const after = await waitFor('the terminal turn', async () => {
      const session = await getSession(again, cookie, id);
      return answers(session).includes('Answered from your terminal: teal.') ? session : undefined;
    });
    expect(prompts(after)).toEqual([
      'Remember that the colour is teal. CRASH-ME',
      'Wait a while. CRASH-FOLLOW-UP',
      'And now?',
    ]);
    const toolCalls = after.messages.flatMap((m) =>
      m.type === 'assistant' ? m.message.content.filter((b) => b.type === 'tool_use') : [],
    );
    expect(toolCalls).toHaveLength(1);
    // Each scripted answer once (Claude Code adds a note of its own when resuming a cut-off turn).
    const count = (text: string) => answers(after).filter((a) => a === text).length;
    expect(count('Noted: the colour is teal.')).toBe(1);
    expect(count('Answered from your terminal: teal.')).toBe(1);
  }, 240_000);
});

/** The same, with Codex: it resumes a thread by its id from any folder, appending to its rollout file. */
describe('continuing a session imported from Codex', requireTools(codex), () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('goes on in the original folder and in a sandbox, each turn once, terminal turns too', async () => {
    const github = createGitHubFixture(['acme/widgets']);
    cleanups.push(() => github.dispose());
    appendFileSync(join(github.root, 'gitconfig'), '[user]\n\tname = Agent\n\temail = agent@example.test\n');
    const work = join(github.root, 'work', 'widgets');
    mkdirSync(join(work, '..'), { recursive: true });
    github.git(github.root, 'clone', '--quiet', 'https://github.com/acme/widgets', work);
    const model = await startScriptedResponsesServer([
      {
        match: 'CONTINUE-ME',
        turns: [
          'Noted: the colour is teal.',
          'Answered in your folder: teal.',
          'Answered from your terminal: teal.',
          'Answered in a sandbox: teal.',
        ].map((text) => ({ output: { text } })),
      },
    ]);
    cleanups.push(() => model.close());
    const codexHome = join(github.root, '.codex');
    mkdirSync(codexHome);
    writeFileSync(
      join(codexHome, 'config.toml'),
      [
        'model = "gpt-5.5"',
        'model_provider = "scripted"',
        '[model_providers.scripted]',
        'name = "Scripted"',
        `base_url = "${model.url}"`,
        'wire_api = "responses"',
        'env_key = "SCRIPTED_API_KEY"',
        'request_max_retries = 1',
        'stream_max_retries = 2',
        '',
      ].join('\n'),
    );
    const codexEnv = { CODEX_HOME: codexHome, SCRIPTED_API_KEY: 'scripted' };
    const terminal = async (prompt: string, resumeId?: string) => {
      const command = codexCommand({ prompt, resumeId });
      const run = await runProgram(codexBin!, command.args, command.stdin, work, {
        ...github.env(),
        ...codexEnv,
        PATH: process.env.PATH,
      });
      expect(run.code, run.stderr).toBe(0);
      return fieldOf(run.stdout, 'thread.started', 'thread_id');
    };
    const conversationId = await terminal('Remember that the colour is teal. CONTINUE-ME');

    const server = await startTestServer({
      agentEnv: {
        ...github.env(),
        ...codexEnv,
        PATH: `${github.env().PATH}:${process.env.PATH}`,
        SESSIONDESK_CODEX_BIN: codexBin!,
      },
      agentEnvNames: ['SCRIPTED_API_KEY'],
    });
    cleanups.push(() => server.dispose());
    const owner = await seedWorkspace(server);
    const cookie = owner.user.cookie;
    const added = await asUser(
      server,
      cookie,
      'POST',
      `/api/workspaces/${owner.organizationId}/history-sources`,
      { kind: 'codex', rootDir: codexHome },
    );
    expect(added.status, await added.clone().text()).toBe(201);
    const imported = await waitFor('the import', async () => {
      const list = ListSessionsResponseSchema.parse(
        await (
          await asUser(server, cookie, 'GET', `/api/sessions?organizationId=${owner.organizationId}`)
        ).json(),
      );
      return list.sessions[0];
    });
    expect(imported.source).toMatchObject({ kind: 'codex', cwd: work, conversationId });
    const id = imported.id;
    const followUp = (body: Record<string, unknown>) =>
      asUser(server, cookie, 'POST', `/api/sessions/${id}/messages`, body);

    const original = await followUp({
      content: 'Which colour did I name?',
      continueIn: 'original',
      continueFolder: work,
    });
    expect(original.status, await original.clone().text()).toBe(201);
    const continued = await waitForResults(server, cookie, id, 2, 120_000);
    expect(continued.status, JSON.stringify(continued.messages.at(-1))).toBe('completed');
    expect(continued.agent).toBe('codex');
    expect(answers(continued)).toEqual(['Noted: the colour is teal.', 'Answered in your folder: teal.']);

    expect(await terminal('And now?', conversationId)).toBe(conversationId);
    await waitFor('the terminal turn', async () => {
      const session = await getSession(server, cookie, id);
      return answers(session).includes('Answered from your terminal: teal.') ? session : undefined;
    });

    const sandboxed = await followUp({ content: 'Which colour, from the clone?', continueIn: 'sandbox' });
    expect(sandboxed.status, await sandboxed.clone().text()).toBe(201);
    const after = await waitFor(
      'the sandbox run',
      async () => {
        const session = await getSession(server, cookie, id);
        return answers(session).includes('Answered in a sandbox: teal.') && session.status !== 'active'
          ? session
          : undefined;
      },
      120_000,
    );
    expect(prompts(after)).toEqual([
      'Remember that the colour is teal. CONTINUE-ME',
      'Which colour did I name?',
      'And now?',
      'Which colour, from the clone?',
    ]);
    expect(answers(after)).toEqual([
      'Noted: the colour is teal.',
      'Answered in your folder: teal.',
      'Answered from your terminal: teal.',
      'Answered in a sandbox: teal.',
    ]);
    const sandbox = join(server.sandboxRoot, id);
    expect(existsSync(join(sandbox, '.git'))).toBe(true);
    const resumed = model.requests.find((r) =>
      JSON.stringify(r.body).includes('Which colour, from the clone?'),
    );
    expect(JSON.stringify(resumed?.body)).toContain('Noted: the colour is teal.');
    expect(JSON.stringify(resumed?.body)).toContain(sandbox);
  }, 300_000);
});

/** The same, with Gemini CLI: its conversations are found among the chats of the folder it runs in. */
describe('continuing a session imported from Gemini CLI', requireTools(gemini), () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('goes on in the original folder and in a sandbox, each turn once, in one session', async () => {
    const github = createGitHubFixture(['acme/widgets']);
    cleanups.push(() => github.dispose());
    appendFileSync(join(github.root, 'gitconfig'), '[user]\n\tname = Agent\n\temail = agent@example.test\n');
    const work = join(github.root, 'work', 'widgets');
    mkdirSync(join(work, '..'), { recursive: true });
    github.git(github.root, 'clone', '--quiet', 'https://github.com/acme/widgets', work);
    const model = await startScriptedGeminiServer([
      {
        match: 'CONTINUE-ME',
        turns: [
          'Noted: the colour is teal.',
          'Answered in your folder: teal.',
          // The sandbox goes on from a copy of the chat, and the terminal from the original:
          // each is the third turn of its conversation.
          'Answered a third time: teal.',
        ].map((text) => ({ parts: [{ text }] })),
      },
    ]);
    cleanups.push(() => model.close());
    const geminiRoot = join(github.root, '.gemini');
    mkdirSync(geminiRoot);
    writeFileSync(
      join(geminiRoot, 'settings.json'),
      JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }),
    );
    const geminiEnv = {
      GEMINI_API_KEY: 'scripted',
      GOOGLE_GEMINI_BASE_URL: model.url,
      GEMINI_TELEMETRY_ENABLED: 'false',
    };
    const terminal = async (prompt: string, resumeId?: string) => {
      const command = geminiCommand({ prompt, model: 'gemini-2.5-pro', resumeId });
      const run = await runProgram(geminiBin!, command.args, command.stdin, work, {
        ...github.env(),
        ...geminiEnv,
        PATH: process.env.PATH,
      });
      expect(run.code, run.stderr).toBe(0);
      return fieldOf(run.stdout, 'init', 'session_id');
    };
    const conversationId = await terminal('Remember that the colour is teal. CONTINUE-ME');

    const server = await startTestServer({
      agentEnv: {
        ...github.env(),
        ...geminiEnv,
        PATH: `${github.env().PATH}:${process.env.PATH}`,
        SESSIONDESK_GEMINI_BIN: geminiBin!,
      },
      agentEnvNames: ['GEMINI_TELEMETRY_ENABLED'],
    });
    cleanups.push(() => server.dispose());
    const owner = await seedWorkspace(server);
    const cookie = owner.user.cookie;
    const added = await asUser(
      server,
      cookie,
      'POST',
      `/api/workspaces/${owner.organizationId}/history-sources`,
      { kind: 'gemini', rootDir: geminiRoot },
    );
    expect(added.status, await added.clone().text()).toBe(201);
    const list = async () =>
      ListSessionsResponseSchema.parse(
        await (
          await asUser(server, cookie, 'GET', `/api/sessions?organizationId=${owner.organizationId}`)
        ).json(),
      ).sessions;
    const imported = await waitFor('the import', async () => (await list())[0]);
    expect(imported.source).toMatchObject({ kind: 'gemini', cwd: work, conversationId });
    const id = imported.id;
    const followUp = (body: Record<string, unknown>) =>
      asUser(server, cookie, 'POST', `/api/sessions/${id}/messages`, body);

    const original = await followUp({
      content: 'Which colour did I name?',
      continueIn: 'original',
      continueFolder: work,
    });
    expect(original.status, await original.clone().text()).toBe(201);
    // Gemini CLI 0.61.0 records no result in its file: the run's is the first.
    const continued = await waitForResults(server, cookie, id, 1, 120_000);
    expect(continued.status, JSON.stringify(continued.messages.at(-1))).toBe('completed');
    expect(continued.agent).toBe('gemini');
    expect(answers(continued)).toEqual(['Noted: the colour is teal.', 'Answered in your folder: teal.']);

    const sandboxed = await followUp({ content: 'Which colour, from the clone?', continueIn: 'sandbox' });
    expect(sandboxed.status, await sandboxed.clone().text()).toBe(201);
    const after = await waitForResults(server, cookie, id, 2, 120_000);
    expect(after.status, JSON.stringify(after.messages.at(-1))).toBe('completed');
    expect(answers(after)).toEqual([
      'Noted: the colour is teal.',
      'Answered in your folder: teal.',
      'Answered a third time: teal.',
    ]);
    const sandbox = join(server.sandboxRoot, id);
    expect(existsSync(join(sandbox, '.git'))).toBe(true);
    // A turn from the terminal in the person's folder arrives; by then the follower has read the
    // chats of the clone's folder too: what the run wrote there is the same session's, once.
    await terminal('And now?', conversationId);
    const last = await waitFor('the terminal turn', async () => {
      const session = await getSession(server, cookie, id);
      return prompts(session).includes('And now?') && answers(session).length === 4 ? session : undefined;
    });
    expect(prompts(last)).toEqual([
      'Remember that the colour is teal. CONTINUE-ME',
      'Which colour did I name?',
      'Which colour, from the clone?',
      'And now?',
    ]);
    expect(answers(last)).toEqual([
      'Noted: the colour is teal.',
      'Answered in your folder: teal.',
      'Answered a third time: teal.',
      'Answered a third time: teal.',
    ]);
    expect((await list()).map((s) => s.id)).toEqual([id]);
  }, 300_000);
});

/** What is refused before anything runs: no CLI is needed to see it. */
describe('where a follow-up goes on is checked first', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('refuses continueIn on a session Session Desk ran, a sandbox without a repository, and its own folders', async () => {
    const server = await startTestServer();
    cleanups.push(() => server.dispose());
    const owner = await seedWorkspace(server);
    const cookie = owner.user.cookie;
    const own = await createSession(server, cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Hello',
    });
    const notImported = await asUser(server, cookie, 'POST', `/api/sessions/${own.id}/messages`, {
      content: 'Go on',
      continueIn: 'original',
    });
    expect(notImported.status).toBe(400);
    const unknown = await asUser(server, cookie, 'POST', `/api/sessions/${own.id}/messages`, {
      content: 'Go on',
      continueIn: 'elsewhere',
    });
    expect(unknown.status).toBe(400);

    // An imported session whose folder is there but has no origin: no repository to clone.
    const folder = tempDir('continue-no-origin-');
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    const id = await seedImported(server, owner, folder);
    const send = (body: Record<string, unknown>) =>
      asUser(server, cookie, 'POST', `/api/sessions/${id}/messages`, body);
    const message = async (response: Response) =>
      ((await response.json()) as { error: { message: string } }).error.message;

    const unsaid = await send({ content: 'Go on' });
    expect(unsaid.status).toBe(409);
    expect(await message(unsaid)).toContain('6f1c1f64-3b5e-4b8e-9d5c-2a4c1f0e9b11');
    const noRepository = await send({ content: 'Go on', continueIn: 'sandbox' });
    expect(noRepository.status).toBe(409);
    expect(await message(noRepository)).toContain('no repository to clone');
    const session = await getSession(server, cookie, id);
    expect(prompts(session)).toEqual(['Hi']);
    expect(session.status).toBe('completed');

    // A session a CLI ran in Session Desk's own folders never goes on there.
    for (const folder of [join(server.dataDir, 'inside'), join(server.sandboxRoot, 'ses_other')]) {
      mkdirSync(folder, { recursive: true });
      const own = await seedImported(server, owner, folder);
      const refused = await asUser(server, cookie, 'POST', `/api/sessions/${own}/messages`, {
        content: 'Go on',
        continueIn: 'original',
        continueFolder: folder,
      });
      expect(refused.status).toBe(409);
      expect(await message(refused)).toMatch(/lies in Session Desk's (data directory|sandboxes)/u);
    }
  });
});

describe('a continuation waiting for a place across a restart', () => {
  it(
    'is not run where nobody chose again: the session keeps its status, saying to send it again',
    { ...requireTools(claude), timeout: 60_000 },
    async () => {
      const dataDir = tempDir('sessiondesk-continue-queue-');
      const folder = tempDir('continue-queued-');
      // Claude Code is there (a follow-up is refused without it), though it never runs here.
      const agentEnv = { ...process.env, SESSIONDESK_CLAUDE_BIN: bin! };
      try {
        const first = await startTestServer({ dataDir, agentCommand: WAITING_AGENT, maxRuns: 1, agentEnv });
        const owner = await seedWorkspace(first);
        const cookie = owner.user.cookie;
        const running = await createSession(first, cookie, {
          organizationId: owner.organizationId,
          initialMessage: 'Holding the only place',
        });
        await waitForText(first, cookie, running.id, 'Working on: Holding the only place');
        const id = await seedImported(first, owner, folder);
        const sent = await asUser(first, cookie, 'POST', `/api/sessions/${id}/messages`, {
          content: 'Go on in my folder',
          continueIn: 'original',
          continueFolder: folder,
        });
        expect(sent.status, await sent.clone().text()).toBe(201);
        expect((await getSession(first, cookie, id)).agentState).toBe('queued');
        await first.stop();

        const second = await startTestServer({ dataDir, agentCommand: WAITING_AGENT, maxRuns: 1, agentEnv });
        try {
          const after = await getSession(second, cookie, id);
          expect(after.status).toBe('completed');
          expect(after.agentState).toBeUndefined();
          expect(after.messages.at(-1)).toMatchObject({
            type: 'result',
            result: expect.stringContaining('send it again, choosing where to continue') as string,
          });
          release(second.sandboxRoot, running.id);
        } finally {
          await second.stop();
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
        rmSync(defaultSandboxRoot(dataDir), { recursive: true, force: true });
        rmSync(folder, { recursive: true, force: true });
      }
    },
  );
});
