import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UNFINISHED_TOOL_RESULT } from '../../src-main/agents/agent-events.js';
import { cliHomePath, sessionCliFolder } from '../../src-main/agents/kinds/cli/cli-homes.js';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import { defaultSandboxRoot } from '../../src-main/agents/sandbox/sandbox-root.js';
import type { SessionFull } from '../../src-shared/index.js';
import { GEMINI_SCENARIOS } from '../fixtures/agents/gemini-scenarios.mjs';
import { getSession, waitForResults } from '../helpers/agent-runs.js';
import { startServe } from '../helpers/cli.js';
import { createGitHubFixture } from '../helpers/github-fixture.js';
import { realCli, type RealCliKind } from '../helpers/real-cli-setup.js';
import { requireTools, skipWithReason, sqljsOnly } from '../helpers/require-tools.js';
import { runProcesses } from '../helpers/run-control.js';
import { seedDataDir } from '../helpers/seed.js';
import { asUser, createSession, seedWorkspace, startTestServer, tempDir } from '../helpers/server.js';
import { agentCliTool } from '../helpers/tools.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The real server with a workspace whose agent is the real `kind` CLI on its scripted server. */
async function serverWith(kind: RealCliKind, script: unknown[], extraEnv: NodeJS.ProcessEnv = {}) {
  const home = tempDir(`real-${kind}-home-`);
  const cli = await realCli(kind, script, home);
  cleanups.push(() => cli.close());
  const binVariable = {
    'claude-code': 'SESSIONDESK_CLAUDE_BIN',
    codex: 'SESSIONDESK_CODEX_BIN',
    gemini: 'SESSIONDESK_GEMINI_BIN',
  }[kind];
  const server = await startTestServer({
    agentEnv: { PATH: process.env.PATH, ...extraEnv, ...cli.env, [binVariable]: cli.bin },
    agentEnvNames: cli.names,
  });
  cleanups.push(() => server.dispose());
  const owner = await seedWorkspace(server);
  const cookie = owner.user.cookie;
  const put = await asUser(server, cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, {
    agent: kind,
  });
  expect(put.status, await put.clone().text()).toBe(200);
  return { server, owner, cookie };
}

type Usage = { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };
const usage = (input: number, output: number, cacheRead: number, costUsd?: number) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: cacheRead,
  cacheWriteTokens: 0,
  ...(costUsd === undefined ? {} : { costUsd }),
});
/**
 * A session's usage with `runs` runs whose cost is unknown: the Codex and Gemini CLI runs here
 * name no priced model, and a run that reports no cost has nothing to price it by.
 */
const withUnknownCost = (sessionUsage: object, runs: number) => ({
  ...sessionUsage,
  costUnknown: { runs, models: [] },
});
/**
 * The Claude model the stopped and crashed runs ask for: chosen, as an installed CLI's default
 * model changes with its version. At $3 in, $15 out and $0.30 cache reads per million tokens, a
 * run's logged 300 in, 20 out and 100 read from the cache cost $0.00123.
 */
const CLAUDE_MODEL = 'claude-sonnet-4-5';
const CLAUDE_STOPPED_COST = (300 * 3 + 20 * 15 + 100 * 0.3) / 1_000_000;
const claudeUsage = (input: number, output: number, cacheRead: number) => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_input_tokens: cacheRead,
  cache_creation_input_tokens: 0,
});

/** A tool call that goes on until it is stopped (Claude Code refuses a plain `sleep`). */
const WAIT_COMMAND = `node -e "setTimeout(() => {}, 120000)"`;

/** Claude Code: runs a command that goes on, then (when resumed) answers. */
const CLAUDE_LONG_TOOL = [
  {
    match: 'LONG-TOOL',
    turns: [
      {
        blocks: [
          { type: 'text', text: 'Waiting for it.' },
          { type: 'tool_use', name: 'Bash', input: { command: WAIT_COMMAND, description: 'Wait' } },
        ],
        usage: claudeUsage(300, 20, 100),
      },
      { blocks: [{ type: 'text', text: 'Carrying on.' }], usage: claudeUsage(400, 7, 300) },
    ],
  },
];

function toolUses(session: SessionFull) {
  return session.messages.flatMap((m) =>
    m.type === 'assistant' ? m.message.content.filter((b) => b.type === 'tool_use') : [],
  );
}

function toolResults(session: SessionFull) {
  return session.messages.flatMap((m) =>
    m.type === 'assistant' ? m.message.content.filter((b) => b.type === 'tool_result') : [],
  );
}

/** Whether a session file of the CLI under `root` holds `text`. */
function loggedBy(root: string, text: string): boolean {
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl'));
  return files.some((f) => readFileSync(join(root, f), 'utf8').includes(text));
}

async function waitForToolUse(server: Parameters<typeof getSession>[0], cookie: string, id: string) {
  await expect
    .poll(async () => toolUses(await getSession(server, cookie, id)).length, { timeout: 60_000 })
    .toBeGreaterThan(0);
}

const claude = agentCliTool('claude');
const gemini = agentCliTool('gemini');
const PROGRAMS = { 'claude-code': 'claude', codex: 'codex', gemini: 'gemini' } as const;

describe('a Claude Code run that lingers after its result', requireTools(claude), () => {
  it('is completed with that result, and what it left running is ended', { timeout: 120_000 }, async () => {
    // A command no other program on the machine runs, so the check below sees only this one's.
    const watcher = `sleep 300.${String(process.pid).padStart(6, '0')}`;
    const script = [
      {
        match: 'BACKGROUND',
        turns: [
          {
            blocks: [
              {
                type: 'tool_use',
                name: 'Bash',
                input: { command: watcher, description: 'Watch', run_in_background: true },
              },
            ],
            usage: claudeUsage(300, 20, 100),
          },
          { blocks: [{ type: 'text', text: 'Started the watcher.' }], usage: claudeUsage(400, 7, 300) },
        ],
      },
    ];
    const { server, owner, cookie } = await serverWith('claude-code', script);
    const created = await createSession(server, cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Start a watcher. BACKGROUND',
    });
    // The CLI itself would wait for its background task (here five minutes) before exiting.
    const session = await waitForResults(server, cookie, created.id, 1, 30_000);
    expect(session.status).toBe('completed');
    const result = session.messages.at(-1);
    expect(result).toMatchObject({ type: 'result', subtype: 'success', result: 'Started the watcher.' });
    expect(result).not.toHaveProperty('stopped');
    expect(result?.type === 'result' && result.usage).toMatchObject(usage(700, 27, 400));
    expect(session.usage).toEqual(result?.type === 'result' ? result.usage : undefined);
    // The background command went with the CLI.
    const running = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n');
    expect(running.map((args) => args.trim())).not.toContain(watcher);
  });
});

/**
 * Each kind: a first response that runs a command going on until stopped, and a second that
 * answers; what the stopped run used, and what the follow-up's own response adds.
 */
const LONG_TOOL_RUNS = [
  {
    kind: 'claude-code' as const,
    script: CLAUDE_LONG_TOOL,
    model: CLAUDE_MODEL,
    // From Claude Code's own session file (it prints no result when stopped, and its stream
    // printed the response's usage as it started: an output of 1), priced by the table.
    stopped: usage(300, 20, 100, CLAUDE_STOPPED_COST),
    // The follow-up's own response, as the CLI's result line counts it, with its cost.
    followUp: { ...usage(400, 7, 300), costUsd: expect.any(Number) as number },
  },
  {
    kind: 'codex' as const,
    script: [
      {
        match: 'LONG-TOOL',
        turns: [
          {
            output: { call: 'exec_command', arguments: { cmd: WAIT_COMMAND } },
            usage: { input_tokens: 300, output_tokens: 20, cached_tokens: 100, reasoning_tokens: 0 },
          },
          {
            output: { text: 'Carrying on.' },
            usage: { input_tokens: 400, output_tokens: 7, cached_tokens: 300, reasoning_tokens: 0 },
          },
        ],
      },
    ],
    // From Codex's own log: it prints usage only when its turn completes.
    stopped: usage(200, 20, 100),
    // Codex reports the thread's totals; the stopped run's share is not counted again.
    followUp: usage(100, 7, 300),
  },
  {
    kind: 'gemini' as const,
    script: [
      {
        match: 'LONG-TOOL',
        turns: [
          {
            parts: [
              { text: 'Waiting for it.' },
              { call: 'run_shell_command', args: { command: WAIT_COMMAND, description: 'Wait' } },
            ],
            usage: { prompt: 300, output: 20, cached: 100, thoughts: 0 },
          },
          { parts: [{ text: 'Carrying on.' }], usage: { prompt: 400, output: 7, cached: 300, thoughts: 0 } },
        ],
      },
    ],
    // From Gemini CLI's own session file: it prints usage only in its result line.
    stopped: usage(200, 20, 100),
    // With no model chosen, Gemini CLI routes each prompt first: one flash-lite request (the
    // scripted server's default answer, 10 in and 5 out), which its result line counts.
    followUp: usage(110, 12, 300),
  },
];

function sum(a: Usage & { costUsd?: number }, b: Usage & { costUsd?: number }) {
  const total: Usage & { costUsd?: number } = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
  };
  if (a.costUsd !== undefined || b.costUsd !== undefined) total.costUsd = (a.costUsd ?? 0) + (b.costUsd ?? 0);
  return total;
}

describe.each(LONG_TOOL_RUNS)('a stopped $kind run', (c) => {
  const needs = () => ({ ...requireTools(agentCliTool(PROGRAMS[c.kind])), timeout: 120_000 });
  /** A session whose run has called its tool that goes on until stopped. */
  async function waitingOnItsTool() {
    const { server, owner, cookie } = await serverWith(c.kind, c.script);
    const created = await createSession(server, cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Wait. LONG-TOOL',
      ...('model' in c ? { model: c.model } : {}),
    });
    await waitForToolUse(server, cookie, created.id);
    return { server, cookie, created };
  }

  it('keeps the usage the CLI reported before the stop', needs(), async () => {
    const { server, cookie, created } = await waitingOnItsTool();
    // The tool's command runs (Codex and Gemini CLI start it in a process session of its own).
    const waiting = () => runProcesses(created.id).some((p) => p.cmdline.includes('120000'));
    await expect.poll(waiting, { timeout: 30_000, interval: 100 }).toBe(true);
    const stop = await asUser(server, cookie, 'POST', `/api/sessions/${created.id}/stop`);
    expect(stop.status, await stop.clone().text()).toBe(200);
    // Within 10 s of Stop nothing of the run is left: the CLI, its tool, or anything else.
    await expect.poll(() => runProcesses(created.id), { timeout: 10_000, interval: 100 }).toEqual([]);
    const session = await waitForResults(server, cookie, created.id);
    const result = session.messages.at(-1);
    expect(result).toMatchObject({ type: 'result', stopped: true });
    expect(result?.type === 'result' && result.usage).toEqual(c.stopped);
    expect(session.usage).toEqual('costUsd' in c.stopped ? c.stopped : withUnknownCost(c.stopped, 1));
  });

  it('interrupted by a follow-up: its usage is kept, and the follow-up counts its own', needs(), async () => {
    const { server, cookie, created } = await waitingOnItsTool();
    const posted = await asUser(server, cookie, 'POST', `/api/sessions/${created.id}/messages`, {
      content: 'Never mind, carry on.',
    });
    expect(posted.status, await posted.clone().text()).toBe(201);
    const session = await waitForResults(server, cookie, created.id, 2, 60_000);
    const results = session.messages.filter((m) => m.type === 'result');
    expect(results[0]).toMatchObject({ result: 'Interrupted by a follow-up prompt.', usage: c.stopped });
    expect(results[1]).toMatchObject({ subtype: 'success', result: 'Carrying on.', usage: c.followUp });
    const second = (results[1] as { usage: Usage & { costUsd?: number } }).usage;
    // The session's usage is the sum of both runs' own; what has no cost is counted apart.
    const unknownRuns = ['costUsd' in c.stopped, second.costUsd !== undefined].filter(
      (priced) => !priced,
    ).length;
    const summed = sum(c.stopped, second);
    // Dollars add up to the micro-cent, not to the last bit of a float.
    const total =
      summed.costUsd === undefined ? summed : { ...summed, costUsd: expect.closeTo(summed.costUsd, 9) };
    expect(session.usage).toEqual(unknownRuns === 0 ? total : withUnknownCost(total, unknownRuns));
  });
});

describe('a Gemini CLI session in a repository', requireTools(gemini), () => {
  it(
    'commits as the session’s author, though its shell ignores the global git configuration',
    { timeout: 120_000 },
    async () => {
      const github = createGitHubFixture(['acme/widgets']);
      cleanups.push(() => github.dispose());
      const scenario = GEMINI_SCENARIOS.find((s) => s.name === 'edit-and-commit')!;
      // The server's git finds github.com through its configuration; no identity in it.
      const { server, owner, cookie } = await serverWith('gemini', scenario.script, {
        ...github.env({ withGh: false }),
        PATH: `${join(github.root, 'bin')}:${process.env.PATH ?? ''}`,
      });
      const created = await createSession(server, cookie, {
        organizationId: owner.organizationId,
        initialMessage: scenario.runs[0]!.prompt,
        repoUrl: 'https://github.com/acme/widgets',
      });
      const session = await waitForResults(server, cookie, created.id, 1, 90_000);
      expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
      const shell = toolResults(session).at(-1);
      expect(shell).toMatchObject({ is_error: false });
      const sandbox = sandboxPath(server.sandboxRoot, created.id);
      const log = execFileSync('git', ['log', '-1', '--format=%s|%an|%ae'], {
        cwd: sandbox,
        encoding: 'utf8',
      });
      expect(log.trim()).toBe(`Add notes|User owner|${owner.user.email}`);
    },
  );
});

describe(
  'a Claude Code run cut off by a crash of the server',
  process.platform === 'linux' ? requireTools(claude) : skipWithReason('it reads /proc: Linux only'),
  () => {
    it(
      'gets an error result for the tool call it left open, and keeps the usage the CLI logged',
      {
        timeout: 120_000,
        ...sqljsOnly(
          "a team server marks a dead process's runs failed by its lease sweep, within about 15 s (team-server.test.ts), not at the restart",
        ),
      },
      async () => {
        const dataDir = tempDir('sessiondesk-crash-');
        const home = tempDir('real-claude-code-home-');
        cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
        cleanups.push(() => rm(defaultSandboxRoot(dataDir), { recursive: true, force: true }));
        const cli = await realCli('claude-code', CLAUDE_LONG_TOOL, home);
        cleanups.push(() => cli.close());
        const seeded = await seedDataDir(dataDir);
        const env = {
          ...cli.env,
          SESSIONDESK_CLAUDE_BIN: cli.bin,
          SESSIONDESK_AGENT_ENV: cli.names.join(','),
        };
        const first = await startServe(dataDir, ['--log-level', 'silent'], env);
        cleanups.push(() => first.kill());
        const byUrl = (url: string) => ({ url, origin: url }) as Parameters<typeof getSession>[0];
        const signIn = await fetch(`${first.url}/api/auth/sign-in`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: seeded.email, password: seeded.password }),
        });
        const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
        const put = await asUser(
          byUrl(first.url),
          cookie,
          'PUT',
          `/api/workspaces/${seeded.organizationId}/agent`,
          {
            agent: 'claude-code',
          },
        );
        expect(put.status, await put.clone().text()).toBe(200);
        const created = await createSession(byUrl(first.url), cookie, {
          organizationId: seeded.organizationId,
          initialMessage: 'Wait. LONG-TOOL',
          model: CLAUDE_MODEL,
        });
        await waitForToolUse(byUrl(first.url), cookie, created.id);
        // The crash comes once the CLI has logged the response in its own file: in an
        // operating-system sandbox it ends with the server, at once, and what it had not
        // written yet is lost with it.
        const [open] = toolUses(await getSession(byUrl(first.url), cookie, created.id));
        // It logs in the session's own CLI home, never in the person's ~/.claude.
        const logs = sessionCliFolder('claude-code', cliHomePath(defaultSandboxRoot(dataDir), created.id));
        await expect.poll(() => loggedBy(logs, open!.id), { timeout: 20_000 }).toBe(true);
        expect(existsSync(join(home, '.claude'))).toBe(false);
        await first.kill();

        const restarted = await startServe(dataDir, ['--log-level', 'silent'], env);
        cleanups.push(() => restarted.stop());
        const after = await getSession(byUrl(restarted.url), cookie, created.id);
        expect(after.status).toBe('failed');
        const [call] = toolUses(after);
        expect(toolResults(after)).toEqual([
          { type: 'tool_result', tool_use_id: call!.id, content: UNFINISHED_TOOL_RESULT, is_error: true },
        ]);
        // The error result comes before the result message that marks the session failed.
        expect(after.messages.at(-2)).toMatchObject({
          type: 'assistant',
          message: { content: [{ type: 'tool_result' }] },
        });
        // What the CLI logged of its first response in its own session file (printed output
        // went with the server), priced by the table.
        const used = usage(300, 20, 100, CLAUDE_STOPPED_COST);
        expect(after.messages.at(-1)).toMatchObject({ type: 'result', is_error: true, usage: used });
        expect(after.usage).toEqual(used);
      },
    );
  },
);

describe('a Codex run stopped in its follow-up', requireTools(agentCliTool('codex')), () => {
  it(
    'counts every input token the model served: those read from the cache apart',
    { timeout: 120_000 },
    async () => {
      // The follow-up's request is served 1,000 input tokens, 110 of them from the cache. Codex
      // prints usage only when a turn completes, so a stopped turn's comes from its own log.
      const { server, owner, cookie } = await serverWith('codex', [
        {
          match: 'FOLLOW-STOP',
          turns: [
            {
              output: { text: 'Ready.' },
              usage: { input_tokens: 500, output_tokens: 10, cached_tokens: 0, reasoning_tokens: 0 },
            },
            {
              output: { call: 'exec_command', arguments: { cmd: WAIT_COMMAND } },
              usage: { input_tokens: 1000, output_tokens: 20, cached_tokens: 110, reasoning_tokens: 0 },
            },
          ],
        },
      ]);
      const created = await createSession(server, cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Get ready. FOLLOW-STOP',
      });
      await waitForResults(server, cookie, created.id, 1, 60_000);
      const posted = await asUser(server, cookie, 'POST', `/api/sessions/${created.id}/messages`, {
        content: 'Now wait.',
      });
      expect(posted.status, await posted.clone().text()).toBe(201);
      const waiting = () => runProcesses(created.id).some((p) => p.cmdline.includes('120000'));
      await expect.poll(waiting, { timeout: 60_000, interval: 100 }).toBe(true);
      const stop = await asUser(server, cookie, 'POST', `/api/sessions/${created.id}/stop`);
      expect(stop.status, await stop.clone().text()).toBe(200);
      const session = await waitForResults(server, cookie, created.id, 2, 30_000);
      const results = session.messages.filter((m) => m.type === 'result');
      expect(results.map((r) => r.usage)).toEqual([usage(500, 10, 0), usage(890, 20, 110)]);
      expect(results[1]).toMatchObject({ stopped: true });
      expect(session.usage).toEqual(withUnknownCost(usage(1390, 30, 110), 2));
    },
  );

  it(
    'counts the responses it was served, though the thread’s logged totals leave out earlier turns',
    { timeout: 120_000 },
    async () => {
      // Codex restores a resumed thread's totals from the earlier turns' token_usage_records
      // only: a conversation whose first turn was logged without one (by another writer of the
      // file) has totals that start at the resume, less than Session Desk's earlier runs.
      const { server, owner, cookie } = await serverWith('codex', [
        {
          match: 'UNRECORDED-FIRST',
          turns: [
            {
              output: { text: 'Ready.' },
              usage: { input_tokens: 110, output_tokens: 11, cached_tokens: 0, reasoning_tokens: 0 },
            },
            {
              output: { call: 'exec_command', arguments: { cmd: WAIT_COMMAND } },
              usage: { input_tokens: 1000, output_tokens: 200, cached_tokens: 0, reasoning_tokens: 0 },
            },
          ],
        },
      ]);
      const created = await createSession(server, cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Get ready. UNRECORDED-FIRST',
      });
      await waitForResults(server, cookie, created.id, 1, 60_000);
      const sessions = join(cliHomePath(server.sandboxRoot, created.id), 'codex', 'sessions');
      for (const name of readdirSync(sessions, { recursive: true, encoding: 'utf8' })) {
        if (!name.endsWith('.jsonl')) continue;
        const lines = readFileSync(join(sessions, name), 'utf8').split('\n');
        writeFileSync(
          join(sessions, name),
          lines.filter((l) => !l.includes('"token_usage_record"')).join('\n'),
        );
      }
      const posted = await asUser(server, cookie, 'POST', `/api/sessions/${created.id}/messages`, {
        content: 'Now wait.',
      });
      expect(posted.status, await posted.clone().text()).toBe(201);
      const waiting = () => runProcesses(created.id).some((p) => p.cmdline.includes('120000'));
      await expect.poll(waiting, { timeout: 60_000, interval: 100 }).toBe(true);
      const stop = await asUser(server, cookie, 'POST', `/api/sessions/${created.id}/stop`);
      expect(stop.status, await stop.clone().text()).toBe(200);
      const session = await waitForResults(server, cookie, created.id, 2, 30_000);
      const results = session.messages.filter((m) => m.type === 'result');
      expect(results.map((r) => r.usage)).toEqual([usage(110, 11, 0), usage(1000, 200, 0)]);
      expect(session.usage).toEqual(withUnknownCost(usage(1110, 211, 0), 2));
    },
  );
});
