import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { detectOsSandbox } from '../../src-main/agents/sandbox/os-sandbox.js';
import type { Confinement } from '../../src-main/agents/types.js';
import { runProcess } from '../../src-main/agents/process/process-run.js';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import { defaultSandboxRoot } from '../../src-main/agents/sandbox/sandbox-root.js';
import {
  startScriptedAnthropicServer,
  type ScriptedConversation,
} from '../fixtures/agents/scripted-anthropic-server.mjs';
import { bash, getSession, toolOutputs, waitForResults } from '../helpers/agent-runs.js';
import { CLAUDE_CODE_VARIABLES, claudeCodeEnv } from '../helpers/claude-code-cli.js';
import { startServe } from '../helpers/cli.js';
import { requireTools } from '../helpers/require-tools.js';
import { runProcesses } from '../helpers/run-control.js';
import { seedDataDir } from '../helpers/seed.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  startTestServer,
  tempDir,
  type TestServer,
} from '../helpers/server.js';
import { agentCliTool, bubblewrapTool } from '../helpers/tools.js';

const claude = agentCliTool('claude');
const bin = claude.path;
const bwrap = bubblewrapTool();

const CLI_VARIABLES = CLAUDE_CODE_VARIABLES;

/** Polls until a process of the session runs `marker` (in its command line); returns its pid. */
async function processRunning(sessionId: string, marker: string): Promise<number> {
  let pid: number | undefined;
  await expect
    .poll(
      () => {
        pid = runProcesses(sessionId).find((p) => p.cmdline.includes(marker))?.pid;
        return pid !== undefined;
      },
      { timeout: 60_000, interval: 100 },
    )
    .toBe(true);
  return pid!;
}

const anyRunning = (sessionId: string, marker: string) =>
  runProcesses(sessionId).some((p) => p.cmdline.includes(marker));

describe(
  'agents in an operating-system sandbox (bubblewrap, real Claude Code)',
  requireTools(claude, bwrap),
  () => {
    const cleanups: (() => unknown)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    /** A test server whose workspace runs Claude Code; the script is made knowing the folders. */
    async function serverWithClaude(
      scriptFor: (folders: { dataDir: string; sandboxRoot: string }) => ScriptedConversation[],
      serverEnv: NodeJS.ProcessEnv = {},
    ): Promise<{ server: TestServer; cookie: string; organizationId: string }> {
      const home = mkdtempSync(join(tmpdir(), 'sandbox-home-'));
      cleanups.push(() => rmSync(home, { recursive: true, force: true }));
      const dataDir = tempDir();
      const model = await startScriptedAnthropicServer(
        scriptFor({ dataDir, sandboxRoot: defaultSandboxRoot(dataDir) }),
      );
      cleanups.push(() => model.close());
      const claudeEnv = claudeCodeEnv(home, model.url);
      const server = await startTestServer({
        dataDir,
        agentEnv: {
          PATH: process.env.PATH,
          HOME: home,
          SESSIONDESK_CLAUDE_BIN: bin!,
          ...Object.fromEntries(CLI_VARIABLES.map((name) => [name, claudeEnv[name]])),
          ...serverEnv,
        },
        agentEnvNames: CLI_VARIABLES,
      });
      cleanups.push(() => server.dispose());
      const owner = await seedWorkspace(server);
      const cookie = owner.user.cookie;
      const chosen = await asUser(server, cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, {
        agent: 'claude-code',
      });
      expect(chosen.status).toBe(200);
      expect(((await chosen.json()) as { sandbox: { isolation: string } }).sandbox.isolation).toBe('sandbox');
      return { server, cookie, organizationId: owner.organizationId };
    }

    it("hides the data directory, the other sessions and the user's files; /tmp is private; the session's folder is writable", async () => {
      const secret = `secret-${Date.now()}`;
      const marker = join(tmpdir(), `sandbox-private-tmp-${Date.now()}`);
      const { server, cookie, organizationId } = await serverWithClaude(({ dataDir, sandboxRoot }) => [
        {
          match: 'LOOK-AROUND',
          turns: [
            bash(`cat "${dataDir}/admin.token"; echo "cat:$?"; ls -A "${dataDir}" | wc -l`),
            bash(`ls -A "${sandboxRoot}"`),
            bash(`echo hidden > "${marker}"; echo made > made-here.txt; ls -A "$HOME"`),
            { blocks: [{ type: 'text', text: 'Looked around.' }] },
          ],
        },
      ]);
      writeFileSync(join(server.dataDir, 'admin.token'), secret);
      // Another session's folder, with a file of its own.
      const other = sandboxPath(server.sandboxRoot, 'ses_other');
      rmSync(other, { recursive: true, force: true });
      spawnSync('mkdir', ['-p', other]);
      writeFileSync(join(other, 'theirs.txt'), 'not yours');

      const created = await createSession(server, cookie, {
        organizationId,
        initialMessage: 'Look around. LOOK-AROUND',
      });
      const session = await waitForResults(server, cookie, created.id, 1, 120_000);
      expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
      expect(session.isolation).toBe('sandbox');
      const outputs = toolOutputs(session);
      expect(outputs.join('\n')).not.toContain(secret);
      expect(outputs[0]).toMatch(/No such file or directory[\s\S]*cat:1\s+0/u);
      expect(outputs[1]).not.toContain('ses_other');
      expect(existsSync(marker)).toBe(false);
      expect(readFileSync(join(sandboxPath(server.sandboxRoot, created.id), 'made-here.txt'), 'utf8')).toBe(
        'made\n',
      );
      // Home is empty: the CLI keeps its state in the session's own home, outside it.
      expect(outputs[2]).toBe('(Bash completed with no output)');
    }, 180_000);
  },
);

/** A tool starts a `sleep` in a process session of its own, then the run goes on working. */
const LINGERING_TOOL: ScriptedConversation[] = [
  {
    match: 'LEAVE-A-SLEEP',
    turns: [
      bash('setsid sleep 3017 > /dev/null 2>&1 < /dev/null & echo started'),
      bash('tail -f /dev/null'),
      { blocks: [{ type: 'text', text: 'Done waiting.' }] },
    ],
  },
];

describe('nothing a run started outlives it', requireTools(claude), () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** The environment of a `serve` whose agents run the real Claude Code on the scripted server. */
  async function claudeServeEnv(isolation: 'sandbox' | 'none'): Promise<NodeJS.ProcessEnv> {
    const home = mkdtempSync(join(tmpdir(), 'sandbox-home-'));
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    const model = await startScriptedAnthropicServer(LINGERING_TOOL);
    cleanups.push(() => model.close());
    const claudeEnv = claudeCodeEnv(home, model.url);
    return {
      HOME: home,
      SESSIONDESK_CLAUDE_BIN: bin!,
      SESSIONDESK_AGENT_ENV: CLI_VARIABLES.join(','),
      ...Object.fromEntries(CLI_VARIABLES.map((name) => [name, claudeEnv[name]])),
      ...(isolation === 'none' ? { SESSIONDESK_OS_SANDBOX: 'off' } : {}),
    };
  }

  async function startLingeringRun(url: string, seeded: Awaited<ReturnType<typeof seedDataDir>>) {
    const signIn = await fetch(`${url}/api/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: seeded.email, password: seeded.password }),
    });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const byUrl = { url, origin: url } as TestServer;
    const chosen = await asUser(byUrl, cookie, 'PUT', `/api/workspaces/${seeded.organizationId}/agent`, {
      agent: 'claude-code',
    });
    expect(chosen.status).toBe(200);
    const session = await createSession(byUrl, cookie, {
      organizationId: seeded.organizationId,
      initialMessage: 'Start a sleep and wait. LEAVE-A-SLEEP',
    });
    try {
      await processRunning(session.id, 'sleep 3017');
      await processRunning(session.id, 'tail -f /dev/null');
    } catch (err) {
      const seen = await getSession(byUrl, cookie, session.id);
      throw new Error(`the run did not start its tools:\n${JSON.stringify(seen.messages).slice(0, 3000)}`, {
        cause: err,
      });
    }
    return { cookie, id: session.id, byUrl };
  }

  /** A `serve` of a data directory of its own, with a run of the real Claude Code lingering in it. */
  async function serveWithLingeringRun(isolation: 'sandbox' | 'none') {
    const dataDir = tempDir('sessiondesk-linger-');
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    cleanups.push(() => rmSync(`${dataDir}-sandboxes`, { recursive: true, force: true }));
    const env = await claudeServeEnv(isolation);
    const seeded = await seedDataDir(dataDir);
    const server = await startServe(dataDir, ['--log-level', 'silent'], env);
    cleanups.push(() => server.kill());
    return { server, dataDir, env, ...(await startLingeringRun(server.url, seeded)) };
  }

  // The sandboxed case needs bubblewrap (and fails without it under CI); the other runs anywhere.
  const needs = (isolation: 'sandbox' | 'none') => ({
    ...(isolation === 'sandbox' ? requireTools(bwrap) : {}),
    timeout: 120_000,
  });

  for (const isolation of ['sandbox', 'none'] as const) {
    it(
      `a sleep a tool started in its own process session is gone within 10 s of Stop (isolation: ${isolation})`,
      needs(isolation),
      async () => {
        const { cookie, id, byUrl } = await serveWithLingeringRun(isolation);

        const stop = await asUser(byUrl, cookie, 'POST', `/api/sessions/${id}/stop`);
        expect(stop.status).toBe(200);
        const stoppedAt = Date.now();
        await expect.poll(() => anyRunning(id, 'sleep 3017'), { timeout: 10_000, interval: 100 }).toBe(false);
        expect(Date.now() - stoppedAt).toBeLessThan(10_000);
        const session = await getSession(byUrl, cookie, id);
        expect(session.isolation).toBe(isolation);
        expect(runProcesses(id)).toEqual([]);
      },
    );

    it(
      `after a SIGKILL of the server and a restart, nothing of the run is left (isolation: ${isolation})`,
      needs(isolation),
      async () => {
        const { server, dataDir, env, cookie, id } = await serveWithLingeringRun(isolation);

        await server.kill();
        if (isolation === 'sandbox') {
          // The sandbox ends with the server that started it, before any restart.
          await expect.poll(() => runProcesses(id), { timeout: 10_000, interval: 100 }).toEqual([]);
        }
        const restarted = await startServe(dataDir, ['--log-level', 'silent'], env);
        cleanups.push(() => restarted.kill());
        expect(runProcesses(id)).toEqual([]);
        const after = await getSession(
          { url: restarted.url, origin: restarted.url } as TestServer,
          cookie,
          id,
        );
        expect(after.status).toBe('failed');
      },
    );
  }
});

describe('what a run in the sandbox sees, folder by folder (real bubblewrap)', requireTools(bwrap), () => {
  /** Runs `sh -c script` as a run's program, in `cwd`, confined as given; returns its output. */
  async function inSandbox(
    script: string,
    cwd: string,
    rules: Confinement,
    env: NodeJS.ProcessEnv = {},
  ): Promise<string> {
    const sandbox = detectOsSandbox(process.env);
    const run = runProcess({
      program: 'sh',
      args: ['-c', script],
      cwd,
      env: { PATH: process.env.PATH, HOME: tmpdir(), ...env },
      stdin: '',
      timeoutMs: 30_000,
      signal: new AbortController().signal,
      confine: { sandbox, rules },
    });
    let out = '';
    run.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await run.ended;
    return out;
  }

  it("keeps the data directory hidden inside a person's folder the run works in", async () => {
    // A continuation of an imported session works in the person's own folder, which may hold
    // Session Desk's data directory (a CLI run in the home folder, say).
    const folder = mkdtempSync(join(tmpdir(), 'person-folder-'));
    try {
      const dataDir = join(folder, 'sessiondesk-data');
      spawnSync('mkdir', ['-p', dataDir]);
      writeFileSync(join(dataDir, 'admin.token'), 'the-admin-token');
      writeFileSync(join(folder, 'notes.md'), 'mine');
      const out = await inSandbox(
        'cat notes.md; echo; cat sessiondesk-data/admin.token; echo "rc=$?"; echo x > made.txt',
        folder,
        {
          writable: [folder],
          readable: [],
          hidden: [dataDir, defaultSandboxRoot(dataDir)],
        },
      );
      expect(out).toContain('mine');
      expect(out).not.toContain('the-admin-token');
      expect(out).toContain('rc=1');
      expect(readFileSync(join(folder, 'made.txt'), 'utf8')).toBe('x\n');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("gives a run whose user has a TMPDIR of their own the sandbox's private /tmp instead", async () => {
    // A TMPDIR such as macOS's /var/folders/… or a systemd user's /run/user/… is not in the sandbox.
    const own = mkdtempSync(join('/var/tmp', 'own-tmpdir-'));
    const folder = mkdtempSync(join(tmpdir(), 'session-folder-'));
    try {
      const out = await inSandbox(
        'echo "tmpdir=$TMPDIR"; f=$(mktemp) && echo "made=$f"; ls -A "$TMPDIR"',
        folder,
        { writable: [folder], readable: [], hidden: [] },
        { TMPDIR: own },
      );
      expect(out).toContain('tmpdir=/tmp\n');
      expect(out).toMatch(/made=\/tmp\/tmp\.\w+/);
      expect(readdirSync(own)).toEqual([]);
    } finally {
      rmSync(own, { recursive: true, force: true });
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
