import { chmodSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ListSessionsResponseSchema, type Message } from '../../src-shared/index.js';
import { getSession, waitForResults } from '../helpers/agent-runs.js';
import { installRecordedClis } from '../helpers/recorded-clis.js';
import { asUser, createSession, seedWorkspace, startTestServer, type TestServer } from '../helpers/server.js';
import { assistantText as text } from '../helpers/messages.js';

interface Call {
  kind: string;
  args: string[];
  stdin: string;
  /** Why the player refused the call: not the command line its recordings were made with. */
  problem?: string;
}

let server: TestServer | undefined;
let dir = '';
afterEach(async () => {
  await server?.dispose();
  server = undefined;
  const log = join(dir, 'calls.jsonl');
  const refused = existsSync(log)
    ? readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Call)
        .flatMap((call) => (call.problem ? [call.problem] : []))
    : [];
  rmSync(dir, { recursive: true, force: true });
  // Whatever the test saw, a refused command line is the first thing to know.
  expect(refused, 'calls the recorded CLIs refused').toEqual([]);
});

/** A real server whose agent CLIs are the recorded players, and a workspace using `kind`. */
async function serverWith(kind: string, env: NodeJS.ProcessEnv = {}) {
  dir = installRecordedClis(mkdtempSync(join(tmpdir(), 'cli-agents-')));
  const log = join(dir, 'calls.jsonl');
  // The player's own variables reach it only when named, as any beyond the allow-list. It
  // writes how it was called to a log outside the session's folder, which an operating-system
  // sandbox would not let it do: these runs go without one (os-sandbox.test.ts tests it).
  const s = await startTestServer({
    agentEnv: {
      PATH: `${dir}:${process.env.PATH ?? ''}`,
      RECORDED_CLI_LOG: log,
      SESSIONDESK_OS_SANDBOX: 'off',
      ...env,
    },
    agentEnvNames: ['RECORDED_CLI_LOG', ...Object.keys(env)],
  });
  server = s;
  const owner = await seedWorkspace(s);
  const put = await asUser(s, owner.user.cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, {
    agent: kind,
  });
  expect(put.status, await put.clone().text()).toBe(200);
  expect(await put.json()).toEqual({
    settings: { agent: kind },
    source: 'workspace',
    commands: [],
    networkEnforced: false,
    networkProblem: expect.stringContaining('SESSIONDESK_OS_SANDBOX=off'),
    sandbox: { isolation: 'none', detail: expect.stringContaining('SESSIONDESK_OS_SANDBOX=off') },
  });
  const calls = () =>
    readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Call);
  const cookie = owner.user.cookie;
  const start = (initialMessage: string) =>
    createSession(s, cookie, { organizationId: owner.organizationId, initialMessage });
  return { s, owner, cookie, calls, start };
}

async function followUp(s: TestServer, cookie: string, id: string, content: string) {
  const response = await asUser(s, cookie, 'POST', `/api/sessions/${id}/messages`, { content });
  expect(response.status, await response.clone().text()).toBe(201);
}

const user = (content: string): Message => ({ type: 'user', message: { content } });
const usage = (input: number, output: number, cacheRead: number, costUsd?: number) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: cacheRead,
  cacheWriteTokens: 0,
  ...(costUsd === undefined ? {} : { costUsd }),
});
/**
 * A session's usage: Codex and Gemini CLI report no cost, and a session that named no model
 * cannot be priced, so its runs' cost is unknown, with no model to name.
 */
const sessionUsage = (runUsage: object, unknownRuns: number) =>
  unknownRuns === 0 ? runUsage : { ...runUsage, costUnknown: { runs: unknownRuns, models: [] } };
const success = (result: string, turns: number, durationMs: number | unknown, runUsage: object) => ({
  type: 'result',
  subtype: 'success',
  is_error: false,
  result,
  duration_ms: durationMs,
  num_turns: turns,
  usage: runUsage,
});

const RESUMES = [
  {
    kind: 'claude-code',
    chosenModel: 'sonnet',
    conversation: '3d964378-3d76-467f-93b2-c115ecfccbdc',
    resumeArg: '--resume=3d964378-3d76-467f-93b2-c115ecfccbdc',
    durations: [252, 671] as unknown[],
    usages: [usage(80, 9, 0, 0.000375), usage(120, 10, 80, 0.000534)],
    total: usage(200, 19, 80, 0.000909),
    reportsCost: true,
  },
  {
    kind: 'codex',
    chosenModel: 'gpt-6.1-sol',
    conversation: '01a203e3-9043-71e0-834e-0d073940fa08',
    resumeArg: 'resume',
    // Codex reports no duration: the run's own is measured.
    durations: [expect.any(Number), expect.any(Number)],
    // The resumed run reports the thread's totals; the session counts only the run's own.
    usages: [usage(800, 9, 0), usage(50, 10, 800)],
    total: usage(850, 19, 800),
    reportsCost: false,
  },
  {
    kind: 'gemini',
    chosenModel: 'flash',
    conversation: 'fde42b8b-f495-48ff-8ac5-04127d4deb03',
    resumeArg: '--resume=fde42b8b-f495-48ff-8ac5-04127d4deb03',
    durations: [363, 309],
    usages: [usage(800, 9, 0), usage(50, 10, 800)],
    total: usage(850, 19, 800),
    reportsCost: false,
  },
];

describe.each(RESUMES)('$kind through the real server, played back from its recordings', (c) => {
  it('records the transcript, usage and conversation id, and a follow-up resumes it', async () => {
    const { s, cookie, calls, start } = await serverWith(c.kind);
    const created = await start('Remember the colour. scenario:resume');
    const first = await waitForResults(s, cookie, created.id);
    expect(first.status).toBe('completed');
    expect(first.agent).toBe(c.kind);
    // Created without a model: the CLI runs its own configured default, and the session
    // does not claim to know which.
    expect(first.model).toBe('');
    expect(first.messages).toEqual([
      user('Remember the colour. scenario:resume'),
      text('Remembered: the colour is teal.'),
      success('Remembered: the colour is teal.', 1, c.durations[0], c.usages[0]!),
    ]);
    expect(first.usage).toEqual(sessionUsage(c.usages[0]!, c.reportsCost ? 0 : 1));
    expect(first.tasks).toEqual([]);
    expect(s.repos.sessions.conversation(created.id)).toEqual({ kind: c.kind, id: c.conversation });

    await followUp(s, cookie, created.id, 'Which colour? scenario:resume');
    const second = await waitForResults(s, cookie, created.id, 2);
    expect(second.status).toBe('completed');
    expect(second.messages.slice(3)).toEqual([
      user('Which colour? scenario:resume'),
      text('You told me the colour is teal.'),
      success('You told me the colour is teal.', 1, c.durations[1], c.usages[1]!),
    ]);
    // The session's usage is the sum of its runs'.
    expect(second.usage).toEqual(sessionUsage(c.total, c.reportsCost ? 0 : 2));

    // The second invocation, and only it, carries the conversation id; prompts go on stdin.
    const [one, two] = calls();
    expect(one!.args.some((a) => a.startsWith('--model'))).toBe(false);
    expect(two!.args.some((a) => a.startsWith('--model'))).toBe(false);
    expect(one!.stdin).toBe('Remember the colour. scenario:resume');
    expect(one!.args.join(' ')).not.toContain(c.conversation);
    expect(two!.stdin).toBe('Which colour? scenario:resume');
    expect(two!.args).toContain(c.resumeArg);
    expect(two!.args.join(' ')).toContain(c.conversation);
  });
});

describe.each(RESUMES)('$kind with the model the person chose', (c) => {
  it('records it on the session and passes it to the CLI', async () => {
    const { s, owner, cookie, calls } = await serverWith(c.kind);
    const created = await createSession(s, cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Say hello. scenario:plain-answer',
      model: c.chosenModel,
    });
    expect(created.model).toBe(c.chosenModel);
    await waitForResults(s, cookie, created.id);
    expect(calls()[0]!.args).toContain(`--model=${c.chosenModel}`);
  });
});

describe.each(RESUMES)('$kind without its earlier conversation', (c) => {
  it('starts a new conversation for the follow-up, and says the earlier context is gone', async () => {
    const { s, cookie, calls, start } = await serverWith(c.kind);
    const created = await start('Remember the colour. scenario:resume');
    await waitForResults(s, cookie, created.id);
    // The recording of the follow-up never had that conversation: the CLI refuses it, as
    // the real one does when its files are gone.
    await followUp(s, cookie, created.id, 'Say hello. scenario:plain-answer');
    const session = await waitForResults(s, cookie, created.id, 2);
    expect(session.status).toBe('completed');
    const [notice, ...answer] = session.messages.slice(4);
    expect(session.messages[3]).toEqual(user('Say hello. scenario:plain-answer'));
    expect(notice).toMatchObject({ type: 'assistant', notice: 'info' });
    expect(JSON.stringify(notice)).toContain('could not resume its earlier conversation');
    expect(answer.at(-1)).toMatchObject({ type: 'result', subtype: 'success' });
    expect(answer.some((m) => m.type === 'result' && m.is_error)).toBe(false);

    // Refused with the id, then run again without any; the new conversation is kept.
    const [, refused, fresh] = calls();
    expect(refused!.args.join(' ')).toContain(c.conversation);
    expect(fresh!.stdin).toBe('Say hello. scenario:plain-answer');
    expect(fresh!.args.join(' ')).not.toContain(c.conversation);
    expect(calls()).toHaveLength(3);
    expect(s.repos.sessions.conversation(created.id)?.id).not.toBe(c.conversation);
  });
});

describe('what a run records', () => {
  it('keeps Claude Code tasks, closing the one left in progress when the run ends', async () => {
    const { s, cookie, start } = await serverWith('claude-code');
    const created = await start('Track it. scenario:task-tracking');
    const session = await waitForResults(s, cookie, created.id);
    expect(session.status).toBe('completed');
    expect(session.tasks).toEqual([
      { id: '1', title: 'Write the notes', status: 'completed' },
      // In progress when the run ended: nobody works on it any more.
      { id: '2', title: 'Run the tests', status: 'pending' },
    ]);
    const toolUses = session.messages.flatMap((m) =>
      m.type === 'assistant' ? m.message.content.filter((b) => b.type === 'tool_use') : [],
    );
    expect(toolUses.map((b) => b.name)).toEqual([
      'TaskCreate',
      'TaskCreate',
      'TaskUpdate',
      'TaskUpdate',
      'TaskUpdate',
    ]);
    expect(session.usage).toEqual(usage(990, 85, 0, 0.004245));
  });

  it("marks a sub-agent's messages with the call that started it", async () => {
    const { s, cookie, start } = await serverWith('claude-code');
    const created = await start('Delegate. scenario:sub-agent');
    const session = await waitForResults(s, cookie, created.id);
    const marked = session.messages.map((m) =>
      m.type === 'assistant' ? ((m.parent_tool_use_id as string | undefined) ?? 'main') : m.type,
    );
    expect(marked).toEqual([
      'user',
      'main',
      'toolu_1_0_0',
      'toolu_1_0_0',
      'toolu_1_0_0',
      'toolu_1_0_0',
      'main',
      'main',
      'result',
    ]);
    expect(session.messages.at(-2)).toEqual(text('The helper found README.md.'));
  });

  it("keeps the CLI's error subtype and fails the session", async () => {
    const { s, cookie, start } = await serverWith('claude-code');
    const created = await start('Loop. scenario:error-max-turns');
    const session = await waitForResults(s, cookie, created.id);
    expect(session.status).toBe('failed');
    expect(session.messages.at(-1)).toEqual({
      type: 'result',
      subtype: 'error',
      is_error: true,
      result: 'Reached maximum number of turns (1)',
      duration_ms: 1050,
      num_turns: 2,
      error_subtype: 'error_max_turns',
      usage: usage(100, 12, 0, 0.00048),
    });
  });

  it('shows error lines as notices in the transcript', async () => {
    const { s, cookie, start } = await serverWith('codex');
    const created = await start('Try. scenario:error-retry');
    const session = await waitForResults(s, cookie, created.id);
    expect(session.status).toBe('failed');
    const demand = 'We’re currently experiencing high demand, which may cause temporary errors.';
    const notice = (t: string) => ({ ...text(t), notice: 'error' });
    expect(session.messages.slice(1)).toEqual([
      notice(`Reconnecting... 1/2 (${demand})`),
      notice(`Reconnecting... 2/2 (${demand})`),
      notice(demand),
      {
        type: 'result',
        subtype: 'error',
        is_error: true,
        // Its model never answered: the result says what Session Desk finds missing (this test's
        // Codex has no sign-in), after Codex's own words.
        result: expect.stringMatching(
          /^We’re currently experiencing high demand, which may cause temporary errors\.\n\nCodex has no sign-in: /u,
        ),
        duration_ms: expect.any(Number),
        num_turns: 0,
        error_subtype: 'turn_failed',
      },
    ]);
  });

  it('shows the retries Gemini CLI tells of on stderr as notices, before its answer', async () => {
    const { s, cookie, start } = await serverWith('gemini');
    const created = await start('Hello. scenario:stream-retry');
    const session = await waitForResults(s, cookie, created.id);
    expect(session.status).toBe('completed');
    const retry = (attempt: number) => ({
      ...text(
        `Attempt ${attempt} failed. Retrying with backoff... Error: exception TypeError: fetch failed sending request`,
      ),
      notice: 'error',
    });
    expect(session.messages.slice(1, 4)).toEqual([retry(1), retry(2), text('Hello after the retries.')]);
  });

  it('keeps only the Gemini CLI to-do lists it accepted', async () => {
    const { s, cookie, start } = await serverWith('gemini');
    const created = await start('Plan. scenario:write-todos-rejected');
    const session = await waitForResults(s, cookie, created.id);
    expect(session.tasks).toEqual([
      { id: 'todo-1', title: 'Write the notes', status: 'pending' },
      { id: 'todo-2', title: 'Run the tests', status: 'pending' },
    ]);
  });

  it('shows a key Claude Code was refused as an error, not as the model speaking', async () => {
    const { s, cookie, start } = await serverWith('claude-code');
    const created = await start('Hello. scenario:error-auth');
    const session = await waitForResults(s, cookie, created.id);
    expect(session.status).toBe('failed');
    expect(session.messages[1]).toEqual({
      ...text('Invalid API key · Fix external API key'),
      notice: 'error',
    });
  });

  it('keeps Gemini CLI to-dos as tasks', async () => {
    const { s, cookie, start } = await serverWith('gemini');
    const created = await start('Plan. scenario:write-todos');
    const session = await waitForResults(s, cookie, created.id);
    expect(session.tasks).toEqual([
      { id: 'todo-1', title: 'Write the notes', status: 'completed' },
      { id: 'todo-2', title: 'Run the tests', status: 'pending' },
      { id: 'todo-3', title: 'Ask for review (cancelled)', status: 'completed' },
    ]);
  });

  it('sums the cost of the past week into the list stats', async () => {
    const { s, cookie, owner, start } = await serverWith('claude-code');
    await waitForResults(s, cookie, (await start('One. scenario:plain-answer')).id);
    await waitForResults(s, cookie, (await start('Two. scenario:error-max-turns')).id);
    const list = await asUser(s, cookie, 'GET', `/api/sessions?organizationId=${owner.organizationId}`);
    const body = (await list.json()) as {
      sessions: Array<{ usage?: { costUsd?: number } }>;
      stats: { costPastWeek: number };
    };
    // The recordings' own figures (total_cost_usd in claude-code/2.1.330/plain-answer.jsonl and
    // error-max-turns.jsonl).
    const costs = body.sessions.map((x) => x.usage?.costUsd ?? 0).sort((a, b) => a - b);
    expect(costs).toEqual([0.00048, 0.000729]);
    expect(body.stats.costPastWeek).toBeCloseTo(0.000729 + 0.00048, 9);
  });

  it('closes open tool calls and tasks when a run is stopped', async () => {
    const { s, cookie, start } = await serverWith('claude-code', { RECORDED_CLI_PACE_MS: '400' });
    const created = await start('Track it. scenario:task-tracking');
    // Wait until a task is in progress, then stop the run.
    for (let i = 0; ; i++) {
      const now = await getSession(s, cookie, created.id);
      if (now.tasks.some((t) => t.status === 'in_progress')) break;
      if (i > 200) throw new Error('no task started');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const patch = await asUser(s, cookie, 'PATCH', `/api/sessions/${created.id}`, { status: 'failed' });
    expect(patch.status).toBe(200);
    const session = await waitForResults(s, cookie, created.id);
    expect(session.status).toBe('failed');
    expect(session.tasks.some((t) => t.status === 'in_progress')).toBe(false);
    const blocks = session.messages.flatMap((m) => (m.type === 'assistant' ? m.message.content : []));
    const used = blocks.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
    const answered = blocks.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []));
    expect(used.length).toBeGreaterThan(0);
    expect(answered.sort()).toEqual(used.sort());
    expect(session.messages.at(-1)).toMatchObject({ type: 'result' });
  });
});

describe('size caps', () => {
  it('records a notice instead of a message over 16 MiB, and the run goes on', async () => {
    // A Gemini CLI whose speech, joined from its deltas, is 17 MiB: more than a message may hold.
    dir = mkdtempSync(join(tmpdir(), 'cli-agents-'));
    const program = join(dir, 'big-gemini');
    const delta = JSON.stringify({
      type: 'message',
      role: 'assistant',
      content: 'y'.repeat(1 << 20),
      delta: true,
    });
    writeFileSync(
      program,
      `#!${process.execPath}
const out = (line) => process.stdout.write(line + '\\n');
out(JSON.stringify({ type: 'init', session_id: 'big-1', model: 'gemini-2.5-pro' }));
for (let i = 0; i < 17; i++) out(${JSON.stringify(delta)});
out(JSON.stringify({ type: 'tool_use', tool_name: 'read_file', tool_id: 't1', parameters: {} }));
out(JSON.stringify({ type: 'tool_result', tool_id: 't1', status: 'success', output: 'ok' }));
out(JSON.stringify({ type: 'message', role: 'assistant', content: 'Done.' }));
out(JSON.stringify({ type: 'result', status: 'success', stats: { input: 5, output_tokens: 2, cached: 0 } }));
`,
    );
    chmodSync(program, 0o755);
    const s = await startTestServer({
      agentEnv: { PATH: process.env.PATH ?? '', SESSIONDESK_GEMINI_BIN: program },
    });
    server = s;
    const owner = await seedWorkspace(s);
    const put = await asUser(s, owner.user.cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, {
      agent: 'gemini',
    });
    expect(put.status).toBe(200);
    const created = await createSession(s, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Talk a lot',
    });
    const session = await waitForResults(s, owner.user.cookie, created.id, 1, 60_000);
    expect(session.status).toBe('completed');
    expect(session.messages.slice(1, 3)).toEqual([
      {
        ...text('A message of 17.0 MiB was left out: a session keeps messages up to 16 MiB.'),
        notice: 'error',
      },
      {
        type: 'assistant',
        message: { content: [{ type: 'tool_use', id: 't1', name: 'read_file', input: {} }] },
      },
    ]);
    expect(session.messages.at(-2)).toEqual(text('Done.'));
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Done.' });
  });
});

describe('choosing an agent CLI', () => {
  it('lists the kinds with their programs and versions, and refuses one not installed', async () => {
    dir = installRecordedClis(mkdtempSync(join(tmpdir(), 'cli-agents-')));
    const s = await startTestServer({
      agentEnv: { PATH: '/nonexistent', SESSIONDESK_CODEX_BIN: join(dir, 'codex') },
    });
    server = s;
    const owner = await seedWorkspace(s);
    const list = await asUser(s, owner.user.cookie, 'GET', '/api/agents');
    expect(list.status).toBe(200);
    const { agents } = (await list.json()) as { agents: Array<Record<string, unknown>> };
    expect(agents.slice(0, 6).map((a) => [a.kind, a.found, a.version, a.simulated])).toEqual([
      ['demo', true, undefined, true],
      ['command', true, undefined, false],
      ['claude-code', false, undefined, false],
      ['codex', true, '0.169.0', false],
      ['gemini', false, undefined, false],
      // Gemini CLI again, as an agent that speaks the Agent Client Protocol: not found here either.
      ['acp', false, undefined, false],
    ]);
    // Then the other ACP agents: those tested here, and the registry's, none installed here.
    const acp = agents.slice(5);
    expect(acp.every((a) => a.kind === 'acp' && a.found === false)).toBe(true);
    expect(acp.map((a) => a.acpAgent)).toEqual([
      'gemini',
      'opencode',
      'qwen-code',
      'claude-code',
      'codex',
      'amp-acp',
      'auggie',
      'cline',
      'cortex-code',
      'corust-agent',
      'cursor',
      'devin',
      'dimcode',
      'dirac',
      'factory-droid',
      'github-copilot',
      'github-copilot-cli',
      'glm-acp-agent',
      'goose',
      'grok-build',
      'harn',
      'junie',
      'kilo',
      'kimi',
      'nova',
      'pi-acp',
      'poolside',
      'sigit',
      'stakpak',
    ]);
    expect(acp.map((a) => a.tested)).toEqual([
      ...Array<boolean>(5).fill(true),
      ...Array<boolean>(24).fill(false),
    ]);
    // Each with how it is installed: an npm package's command, else its makers' way.
    expect(agents.find((a) => a.acpAgent === 'auggie')).toMatchObject({
      install: 'npm install -g @augmentcode/auggie',
    });
    expect(agents.find((a) => a.acpAgent === 'goose')).not.toHaveProperty('install');
    expect(agents[5]).toMatchObject({ acpAgent: 'gemini', envVar: 'SESSIONDESK_GEMINI_BIN' });
    expect(agents[3]).toMatchObject({ path: join(dir, 'codex'), envVar: 'SESSIONDESK_CODEX_BIN' });
    expect(agents[2]!.problem).toContain('SESSIONDESK_CLAUDE_BIN');

    const put = (agent: string) =>
      asUser(s, owner.user.cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, { agent });
    const refused = await put('claude-code');
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      "Claude Code (`claude`) was not found on the server's PATH",
    );
    expect((await put('codex')).status).toBe(200);
  });

  it('asks a program its version once, and again when the program changes', async () => {
    dir = mkdtempSync(join(tmpdir(), 'cli-agents-'));
    const program = join(dir, 'gemini');
    const asked = join(dir, 'asked');
    const install = (path: string, version: string) => {
      writeFileSync(path, `#!/bin/sh\necho "$@" >> '${asked}'\necho '${version}'\n`);
      chmodSync(path, 0o755);
    };
    install(program, '0.61.0');
    // Without the sandbox, where versions are asked (cli-homes.test.ts), so that the program can
    // count the times it is asked in a file that lasts.
    const s = await startTestServer({
      agentEnv: { PATH: `${dir}:/usr/bin:/bin`, SESSIONDESK_OS_SANDBOX: 'off' },
    });
    server = s;
    const owner = await seedWorkspace(s);
    const gemini = async () => {
      const list = await asUser(s, owner.user.cookie, 'GET', '/api/agents');
      const { agents } = (await list.json()) as { agents: Array<Record<string, unknown>> };
      return agents.find((a) => a.kind === 'gemini');
    };
    expect(await gemini()).toMatchObject({ found: true, version: '0.61.0' });
    expect(await gemini()).toMatchObject({ found: true, version: '0.61.0' });
    expect(readFileSync(asked, 'utf8')).toBe('--version\n');

    // An update in place: a new file (rename over) with another version.
    install(`${program}.new`, '0.62.1');
    renameSync(`${program}.new`, program);
    expect(await gemini()).toMatchObject({ found: true, version: '0.62.1' });
    expect(readFileSync(asked, 'utf8')).toBe('--version\n--version\n');
  });

  it('labels a demo run as the demo agent', async () => {
    const s = await startTestServer({ agentPaceMs: 0 });
    server = s;
    const owner = await seedWorkspace(s);
    const created = await createSession(s, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Hello',
    });
    const session = await waitForResults(s, owner.user.cookie, created.id);
    expect(session.agent).toBe('demo');
    // Its usage is simulated, and counted apart from real agents' cost.
    expect(session.usage?.costUsd).toBeGreaterThan(0);
    const list = await asUser(s, owner.user.cookie, 'GET', '/api/sessions');
    const { stats } = ListSessionsResponseSchema.parse(await list.json());
    expect(stats.costPastWeek).toBe(0);
    expect(stats.simulatedCostPastWeek).toBe(session.usage?.costUsd);
  });
});
