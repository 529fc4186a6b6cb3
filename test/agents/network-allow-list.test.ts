import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeNamedCommands } from '../../src-main/agents/kinds/command/named-commands.js';
import type { SessionFull } from '../../src-shared/index.js';
import { startScriptedAnthropicServer } from '../fixtures/agents/scripted-anthropic-server.mjs';
import { getSession, waitForResults } from '../helpers/agent-runs.js';
import { CLAUDE_CODE_VARIABLES, claudeCodeEnv } from '../helpers/claude-code-cli.js';
import { realCli } from '../helpers/real-cli-setup.js';
import { requireTools } from '../helpers/require-tools.js';
import { agentPid, ended, runProcesses, WAITING_AGENT } from '../helpers/run-control.js';
import { asUser, createSession, seedWorkspace, startTestServer, type TestServer } from '../helpers/server.js';
import { agentCliTool, bubblewrapTool, curlTool } from '../helpers/tools.js';

const bwrap = bubblewrapTool();

const PROBE = join(import.meta.dirname, '../fixtures/network-probe-agent.mjs');
const LOOPBACK_PROBE = join(import.meta.dirname, '../fixtures/sandbox-loopback-probe-agent.mjs');

interface CurlRun {
  code: number | null;
  stdout: string;
  stderr: string;
}
interface Report {
  proxied: CurlRun;
  direct: CurlRun;
  tunnel: CurlRun;
  proxyEnv: Record<string, string | undefined>;
}

/** The probe's report: the text of the session's first assistant message. */
function reportOf(session: SessionFull): Report {
  for (const m of session.messages) {
    if (m.type !== 'assistant' || m.notice) continue;
    for (const block of m.message.content) if (block.type === 'text') return JSON.parse(block.text) as Report;
  }
  throw new Error(`no report in ${JSON.stringify(session.messages)}`);
}

describe("a workspace's network allow-list (bubblewrap, curl)", requireTools(bwrap, curlTool()), () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** An HTTP server on the host's loopback, answering with a text no one else would. */
  async function hostService(): Promise<{ url: string; answer: string }> {
    const answer = `hello from the host ${Date.now()}`;
    const server: Server = createServer((_req, res) => res.end(answer));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, answer };
  }

  /** A server whose workspace runs the probe with the given allow-list; one probe's session. */
  async function probeWith(
    allowedHosts: string[],
    url: string,
    probe = PROBE,
  ): Promise<{ session: SessionFull; server: TestServer }> {
    const server = await startTestServer({ agentEnv: { PATH: process.env.PATH } });
    cleanups.push(() => server.dispose());
    const owner = await seedWorkspace(server);
    await writeNamedCommands(server.dataDir, { probe: [process.execPath, probe, '{prompt}'] });
    const chosen = await asUser(
      server,
      owner.user.cookie,
      'PUT',
      `/api/workspaces/${owner.organizationId}/agent`,
      {
        agent: 'command',
        commandName: 'probe',
        allowedHosts,
      },
    );
    expect(chosen.status).toBe(200);
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: url,
    });
    const session = await waitForResults(server, owner.user.cookie, created.id, 1, 60_000);
    expect(session.isolation).toBe('sandbox');
    return { session, server };
  }

  it('reaches an allowed host through the proxy, and nothing directly', async () => {
    const service = await hostService();
    const { session } = await probeWith(['127.0.0.1'], service.url);
    expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
    const report = reportOf(session);
    expect(report.proxied).toMatchObject({ code: 0, stdout: service.answer });
    // Ignoring the proxy, 127.0.0.1 is the sandbox's own loopback: nothing listens there.
    expect(report.direct.code).not.toBe(0);
    expect(report.direct.stdout).not.toContain(service.answer);
    expect(report.direct.stderr).toMatch(/Failed to connect|Couldn't connect/u);
    expect(report.proxyEnv).toMatchObject({
      HTTP_PROXY: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/u),
      https_proxy: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/u),
      NO_PROXY: '',
    });
  }, 90_000);

  it("reaches a server of the agent's own on the sandbox's loopback, which the proxy never sees", async () => {
    const { session } = await probeWith(['example.invalid'], 'Call your own server', LOOPBACK_PROBE);
    expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
    const report = reportOf(session) as unknown as {
      answer: string;
      proxied: CurlRun;
      tunnel: CurlRun;
    };
    // Through the proxy variables, as OpenCode calls its own server: served inside, not refused.
    expect(report.proxied).toMatchObject({ code: 0, stdout: report.answer });
    expect(report.tunnel).toMatchObject({ code: 0, stdout: report.answer });
    expect(JSON.stringify(session.messages)).not.toContain('Session Desk refused the connection');
  }, 90_000);

  it('refuses a host the list leaves out, saying which and why', async () => {
    const service = await hostService();
    const { session } = await probeWith(['example.invalid'], service.url);
    const report = reportOf(session);
    // Plain http: the proxy's 403 answer is what curl printed.
    expect(report.proxied.stdout).not.toContain(service.answer);
    expect(report.proxied.stdout).toContain('Session Desk refused the connection to 127.0.0.1:');
    expect(report.proxied.stdout).toContain('network allow-list (Settings › Agent › Network');
    // https: the CONNECT tunnel is refused.
    expect(report.tunnel.code).not.toBe(0);
    expect(report.tunnel.stderr).toMatch(/403/u);
    expect(report.direct.code).not.toBe(0);
    expect(report.direct.stdout).not.toContain(service.answer);
  }, 90_000);

  it('Stop ends the program behind the bridge, its tools, the bridge and the proxy', async () => {
    const server = await startTestServer({ agentEnv: { PATH: process.env.PATH } });
    cleanups.push(() => server.dispose());
    const owner = await seedWorkspace(server);
    await writeNamedCommands(server.dataDir, { wait: WAITING_AGENT });
    const chosen = await asUser(
      server,
      owner.user.cookie,
      'PUT',
      `/api/workspaces/${owner.organizationId}/agent`,
      {
        agent: 'command',
        commandName: 'wait',
        allowedHosts: ['127.0.0.1'],
      },
    );
    expect(chosen.status).toBe(200);
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Wait behind the bridge.',
    });
    const child = await agentPid(server.sandboxRoot, created.id, 'child');
    // The bridge's command line names the proxy's socket, in the proxy's private folder.
    const bridge = runProcesses(created.id).find((p) => p.cmdline.includes('Session Desk network bridge'));
    const socket = /(\S+\/sessiondesk-net-[^/\s]+\/run-\d+\.sock)/u.exec(bridge?.cmdline ?? '')?.[1];
    expect(socket).toBeDefined();
    expect(statSync(dirname(socket!)).mode & 0o777).toBe(0o700);

    const stop = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${created.id}/stop`);
    expect(stop.status).toBe(200);
    await expect.poll(() => runProcesses(created.id), { timeout: 10_000, interval: 100 }).toEqual([]);
    expect(ended(child)).toBe(true);
    expect(existsSync(dirname(socket!))).toBe(false);
    expect((await getSession(server, owner.user.cookie, created.id)).status).not.toBe('active');
  }, 90_000);

  it('leaves the network open without a list', async () => {
    const service = await hostService();
    const server = await startTestServer({ agentEnv: { PATH: process.env.PATH } });
    cleanups.push(() => server.dispose());
    const owner = await seedWorkspace(server);
    await writeNamedCommands(server.dataDir, { probe: [process.execPath, PROBE, '{prompt}'] });
    const chosen = await asUser(
      server,
      owner.user.cookie,
      'PUT',
      `/api/workspaces/${owner.organizationId}/agent`,
      {
        agent: 'command',
        commandName: 'probe',
      },
    );
    expect(chosen.status).toBe(200);
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: service.url,
    });
    const report = reportOf(await waitForResults(server, owner.user.cookie, created.id, 1, 60_000));
    expect(report.direct).toMatchObject({ code: 0, stdout: service.answer });
    expect(report.proxyEnv.HTTP_PROXY).toBeUndefined();
  }, 90_000);
});

const claude = agentCliTool('claude');

const CLI_VARIABLES = CLAUDE_CODE_VARIABLES;

describe("the real Claude Code behind a workspace's network allow-list", requireTools(bwrap, claude), () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** One session of Claude Code against the scripted model server on 127.0.0.1. */
  async function claudeTurn(allowedHosts: string[]): Promise<{ session: SessionFull; requests: number }> {
    const home = mkdtempSync(join(tmpdir(), 'network-home-'));
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    const model = await startScriptedAnthropicServer([
      { match: 'SAY-HELLO', turns: [{ blocks: [{ type: 'text', text: 'Hello through the proxy.' }] }] },
    ]);
    cleanups.push(() => model.close());
    const claudeEnv = claudeCodeEnv(home, model.url);
    const server = await startTestServer({
      agentEnv: {
        PATH: process.env.PATH,
        HOME: home,
        SESSIONDESK_CLAUDE_BIN: claude.path!,
        ...Object.fromEntries(CLI_VARIABLES.map((name) => [name, claudeEnv[name]])),
      },
      agentEnvNames: CLI_VARIABLES,
    });
    cleanups.push(() => server.dispose());
    const owner = await seedWorkspace(server);
    const chosen = await asUser(
      server,
      owner.user.cookie,
      'PUT',
      `/api/workspaces/${owner.organizationId}/agent`,
      {
        agent: 'claude-code',
        allowedHosts,
      },
    );
    expect(chosen.status).toBe(200);
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Say hello. SAY-HELLO',
    });
    const session = await waitForResults(server, owner.user.cookie, created.id, 1, 150_000);
    expect(session.isolation).toBe('sandbox');
    return { session, requests: model.requests.length };
  }

  it('completes a turn when the model server is allowed', async () => {
    const { session, requests } = await claudeTurn(['127.0.0.1']);
    expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
    expect(JSON.stringify(session.messages)).toContain('Hello through the proxy.');
    expect(requests).toBeGreaterThan(0);
  }, 180_000);

  it('fails, naming the refused host, when the list leaves the model server out', async () => {
    const { session, requests } = await claudeTurn(['api.anthropic.com']);
    expect(session.status).toBe('failed');
    expect(requests).toBe(0);
    const result = session.messages.at(-1);
    expect(result?.type === 'result' && result.result).toMatch(
      /403 Session Desk refused the connection to 127\.0\.0\.1:\d+: it is not in this workspace's network allow-list/u,
    );
  }, 180_000);
});

/**
 * Each other real CLI, one turn against its scripted model server on 127.0.0.1. `givesUp`: a
 * refused model request ends its run (Gemini CLI retries a failed request for minutes).
 */
const OTHER_CLIS = [
  {
    name: 'Codex',
    kind: 'codex' as const,
    bin: 'SESSIONDESK_CODEX_BIN',
    script: [{ match: 'SAY-HELLO', turns: [{ output: { text: 'Hello through the proxy.' } }] }],
    givesUp: true,
  },
  {
    name: 'Gemini CLI',
    kind: 'gemini' as const,
    bin: 'SESSIONDESK_GEMINI_BIN',
    script: [{ match: 'SAY-HELLO', turns: [{ parts: [{ text: 'Hello through the proxy.' }] }] }],
    givesUp: false,
  },
];

/** Session Desk's own word on each refused connection, whatever the CLI made of the refusals. */
function refusalNotices(session: SessionFull): string[] {
  return session.messages.flatMap((m) =>
    m.type === 'assistant' && m.notice === 'info'
      ? m.message.content.flatMap((b) =>
          b.type === 'text' && b.text.startsWith('Session Desk refused') ? [b.text] : [],
        )
      : [],
  );
}

describe.each(OTHER_CLIS)(
  "the real $name behind a workspace's network allow-list",
  ({ kind, bin, script, givesUp }) => {
    const needs = () => ({ ...requireTools(bwrap, agentCliTool(kind)), timeout: 180_000 });
    const cleanups: (() => unknown)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    /** A session of the CLI, started in a workspace with this list. */
    async function started(allowedHosts: string[]) {
      const home = mkdtempSync(join(tmpdir(), `network-${kind}-home-`));
      cleanups.push(() => rmSync(home, { recursive: true, force: true }));
      const cli = await realCli(kind, script, home);
      cleanups.push(() => cli.close());
      const server = await startTestServer({
        agentEnv: { PATH: process.env.PATH, ...cli.env, [bin]: cli.bin },
        agentEnvNames: cli.names,
      });
      cleanups.push(() => server.dispose());
      const owner = await seedWorkspace(server);
      const cookie = owner.user.cookie;
      const chosen = await asUser(server, cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, {
        agent: kind,
        allowedHosts,
      });
      expect(chosen.status).toBe(200);
      const { id } = await createSession(server, cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Say hello. SAY-HELLO',
      });
      return { cli, server, cookie, id };
    }

    it('completes a turn when the model server is allowed', needs(), async () => {
      const { cli, server, cookie, id } = await started(['127.0.0.1']);
      const session = await waitForResults(server, cookie, id, 1, 150_000);
      expect(session.isolation).toBe('sandbox');
      expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
      expect(JSON.stringify(session.messages)).toContain('Hello through the proxy.');
      // The CLI's own other traffic (its telemetry, updates) may be refused: the model's is not.
      const refusals = refusalNotices(session);
      expect(refusals.filter((text) => text.includes('127.0.0.1'))).toEqual([]);
      expect(cli.requests.length).toBeGreaterThan(0);
    });

    it(
      'says which host was refused, and why, when the list leaves the model server out',
      needs(),
      async () => {
        const { cli, server, cookie, id } = await started(['example.invalid']);
        await expect
          .poll(async () => refusalNotices(await getSession(server, cookie, id)), { timeout: 120_000 })
          .toContainEqual(
            expect.stringMatching(
              /^Session Desk refused the connection to 127\.0\.0\.1:\d+: it is not in this workspace's network allow-list \(Settings › Agent › Network/u,
            ),
          );
        if (givesUp) {
          const session = await waitForResults(server, cookie, id, 1, 150_000);
          expect(session.status).toBe('failed');
        } else {
          const stop = await asUser(server, cookie, 'POST', `/api/sessions/${id}/stop`);
          expect(stop.status).toBe(200);
          // Still retrying: it was going on until stopped.
          const session = await waitForResults(server, cookie, id, 1, 30_000);
          expect(session.messages.at(-1)).toMatchObject({ type: 'result', stopped: true });
          expect(JSON.stringify(session.messages)).not.toContain('Hello through the proxy.');
        }
        expect(cli.requests).toEqual([]);
      },
    );
  },
);
