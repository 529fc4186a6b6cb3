import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentCheckSchema } from '../../src-shared/agent-check.js';
import { defaultSandboxRoot } from '../../src-main/agents/sandbox/sandbox-root.js';
import { writeScriptedOpencodeConfig } from '../helpers/agent-cli.js';
import { ACP_AGENTS_UNDER_TEST, acpAgentTool } from '../helpers/acp-runs.js';
import { runCli, startServe } from '../helpers/cli.js';
import { requireTools } from '../helpers/require-tools.js';
import { seedDataDir, withDataDirStorage } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { realCli } from '../helpers/real-cli-setup.js';
import { agentCliTool, bubblewrapTool } from '../helpers/tools.js';

/**
 * `sessiondesk agent check` as a person runs it: the real command, on a data directory that a
 * running server holds (the check runs in the server) or that none does (it runs in the
 * command), with the real Claude Code against its scripted model server, the real OpenCode (an
 * ACP agent) against a closed port, and no OpenCode at all.
 */

const opencode = acpAgentTool(ACP_AGENTS_UNDER_TEST.opencode!);
const claude = agentCliTool('claude');
/** What the scripted model answers the check's prompt. */
const CLAUDE_SCRIPT = [{ match: 'Reply with OK', turns: [{ blocks: [{ type: 'text', text: 'OK' }] }] }];
/** The agents' programs as a machine without OpenCode has them: Node.js and the system's. */
const WITHOUT_OPENCODE = `${dirname(process.execPath)}:/usr/bin:/bin`;

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('sessiondesk agent check', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A data directory whose workspace chose `settings`, and the person's home folder. */
  async function place(
    settings: { agent: 'demo' } | { agent: 'claude-code' } | { agent: 'acp'; acpAgent: string },
  ) {
    const root = tempDir('agent-check-cli-');
    const dataDir = join(root, 'data');
    const home = join(root, 'home');
    mkdirSync(home);
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    cleanups.push(() => rm(defaultSandboxRoot(dataDir), { recursive: true, force: true }));
    const seeded = await seedDataDir(dataDir);
    await withDataDirStorage(dataDir, (storage) =>
      storage.write((tx) => tx.workspaces.putSettings(seeded.organizationId, settings)),
    );
    return { dataDir, home, org: seeded.organizationId };
  }

  it('says how it is used, and a group alone is a usage error', async () => {
    const missing = await runCli(['agent', 'check']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing --workspace');
    expect(missing.stderr).toContain('Usage: sessiondesk agent check --workspace ORG');
    const group = await runCli(['agent', '--help']);
    expect(group.code).toBe(0);
    expect(group.stdout).toContain("agent check    Check a workspace's agent as a session would run it");
    const help = await runCli(['agent', 'check', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Exit code 0 when every step passed, 1 when one failed');
  });

  it('passes the demo agent, saying it is simulated', async () => {
    const { dataDir, org } = await place({ agent: 'demo' });
    const result = await runCli(['agent', 'check', '--workspace', org, '--data-dir', dataDir]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Demo agent (simulated), the agent of ${org}: ready`);
    expect(result.stdout).toMatch(/ {2}ok {4}Simulated {2}The demo agent is simulated/u);
  });

  it('fails for an unknown workspace, saying so', async () => {
    const { dataDir } = await place({ agent: 'demo' });
    const result = await runCli(['agent', 'check', '--workspace', 'org_nope', '--data-dir', dataDir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('There is no workspace org_nope.');
  });

  it('names the install command of an agent that is not installed (exit 1)', async () => {
    const { dataDir, home, org } = await place({ agent: 'acp', acpAgent: 'opencode' });
    const result = await runCli(['agent', 'check', '--workspace', org, '--data-dir', dataDir], {
      PATH: WITHOUT_OPENCODE,
      HOME: home,
      SESSIONDESK_OPENCODE_BIN: '',
    });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toContain(`OpenCode, the agent of ${org}: not ready`);
    expect(result.stdout).toMatch(/ {2}FAIL {2}Program {6}OpenCode \(opencode\) was not found/u);
    expect(result.stdout).toContain(
      'fix: Install it with `npm install -g opencode-ai`, or set SESSIONDESK_OPENCODE_BIN to its path.',
    );
    expect(result.stdout).toMatch(/ {2}FAIL {2}Test prompt {2}Not run: OpenCode's program is missing\./u);
  });

  describe('with the real Claude Code', requireTools(claude, bubblewrapTool()), () => {
    it(
      'through the server that holds the data directory: Claude Code answers (exit 0); --json',
      { timeout: 120_000 },
      async () => {
        const { dataDir, home, org } = await place({ agent: 'claude-code' });
        const cli = await realCli('claude-code', CLAUDE_SCRIPT, home);
        cleanups.push(() => cli.close());
        const env = {
          ...cli.env,
          SESSIONDESK_CLAUDE_BIN: cli.bin,
          SESSIONDESK_AGENT_ENV: cli.names.join(','),
        };
        const server = await startServe(dataDir, ['--log-level', 'warn'], env);
        cleanups.push(() => server.stop());

        const started = Date.now();
        const result = await runCli(['agent', 'check', '--workspace', org, '--data-dir', dataDir], env);
        expect(Date.now() - started).toBeLessThan(30_000);
        expect(result.code, result.stdout + result.stderr).toBe(0);
        expect(result.stdout).toContain(`Claude Code, the agent of ${org}: ready`);
        expect(result.stdout).toMatch(/ {2}ok {4}Program {6}\S+claude, version 2\.1\.\d+/u);
        expect(result.stdout).toContain('ANTHROPIC_API_KEY (environment)');
        expect(result.stdout).toMatch(/ {2}ok {4}Test prompt {2}Claude Code answered in [\d.]+ s: "OK"/u);

        const json = await runCli(
          ['agent', 'check', '--workspace', org, '--data-dir', dataDir, '--json'],
          env,
        );
        expect(json.code, json.stdout + json.stderr).toBe(0);
        const check = AgentCheckSchema.parse(JSON.parse(json.stdout));
        expect(check).toMatchObject({ ok: true, agent: 'Claude Code' });
        expect(check.steps.map((s) => [s.name, s.ok])).toEqual([
          ['program', true],
          ['credentials', true],
          ['prompt', true],
        ]);
      },
    );
  });

  describe('with the real OpenCode', requireTools(opencode, bubblewrapTool()), () => {
    it(
      'on the data directory alone, against a closed port: names that endpoint and what to do within 30 s (exit 1)',
      { timeout: 120_000 },
      async () => {
        const { dataDir, home, org } = await place({ agent: 'acp', acpAgent: 'opencode' });
        const endpoint = `http://127.0.0.1:${await closedPort()}/v1`;
        writeScriptedOpencodeConfig(join(home, '.config'), endpoint);
        const started = Date.now();
        const result = await runCli(['agent', 'check', '--workspace', org, '--data-dir', dataDir], {
          HOME: home,
          SESSIONDESK_OPENCODE_BIN: opencode.path!,
        });
        expect(Date.now() - started).toBeLessThan(30_000);
        expect(result.code, result.stdout + result.stderr).toBe(1);
        expect(result.stdout).toContain(`OpenCode, the agent of ${org}: not ready`);
        expect(result.stdout).toMatch(/ {2}ok {4}Program /u);
        expect(result.stdout).toMatch(/ {2}FAIL {2}Test prompt {2}/u);
        expect(result.stdout).toContain(
          `OpenCode cannot reach its model API at ${endpoint} (provider.scripted.options.baseURL in ~/.config/opencode/opencode.json)`,
        );
        expect(result.stdout).toContain(`endpoint: ${endpoint}`);
        expect(result.stdout).toContain(
          "fix: Check the model API's address (provider.scripted.options.baseURL in ~/.config/opencode/opencode.json)",
        );
      },
    );
  });
});
