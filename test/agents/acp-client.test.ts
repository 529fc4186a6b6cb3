import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import { getSession, toolOutputs, waitForResults } from '../helpers/agent-runs.js';
import { ACP_PROBE, runCli, setAcpProbe } from '../helpers/cli.js';
import { runProcesses, transcript } from '../helpers/run-control.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  startTestServer,
  withKey,
  type TestServer,
} from '../helpers/server.js';

/**
 * Session Desk as an ACP client, with an agent the administrator added
 * (`sessiondesk acp-agent set`): the session folder's files served, terminals run in the run's
 * sandbox and ended with it, anything else refused in the transcript, what it does not know kept
 * as notices, and a protocol version it does not speak refused clearly.
 */

describe('an ACP agent the administrator added', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer({ agentEnv: { PATH: process.env.PATH } });
    owner = await seedWorkspace(server);
  });
  afterAll(async () => server.dispose());

  const addProbe = async (...args: string[]) => {
    const set = await setAcpProbe(server.dataDir, ...args);
    expect(set.stderr).toBe('');
    expect(set.code).toBe(0);
  };

  const startProbe = async () => {
    const chosen = await asUser(
      server,
      owner.user.cookie,
      'PUT',
      `/api/workspaces/${owner.organizationId}/agent`,
      {
        agent: 'acp',
        acpAgent: 'probe',
      },
    );
    expect(chosen.status, await chosen.clone().text()).toBe(200);
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Probe the client.',
    });
    return created.id;
  };
  const runProbe = async () => {
    const id = await startProbe();
    return { id, session: await waitForResults(server, owner.user.cookie, id, 1, 30_000) };
  };

  it(
    'is served the session folder’s files and nothing else, each refusal in the transcript',
    { timeout: 60_000 },
    async () => {
      await addProbe();
      const listed = await runCli(['acp-agent', 'list', '--json', '--data-dir', server.dataDir]);
      expect(JSON.parse(listed.stdout)).toEqual({ probe: [process.execPath, ACP_PROBE] });
      const agents = (await (await asUser(server, owner.user.cookie, 'GET', '/api/agents')).json()) as {
        agents: { kind: string; acpAgent?: string; found: boolean; tested?: boolean }[];
      };
      expect(agents.agents).toContainEqual(
        expect.objectContaining({ kind: 'acp', acpAgent: 'probe', found: true, tested: false }),
      );
      // The registry's other agents are listed too, untested.
      expect(agents.agents).toContainEqual(
        expect.objectContaining({ kind: 'acp', acpAgent: 'kimi', tested: false }),
      );

      const { id, session } = await runProbe();
      expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
      expect(session).toMatchObject({ agent: 'acp', acpAgent: 'probe' });
      const folder = sandboxPath(server.sandboxRoot, id);
      expect(readFileSync(join(folder, 'inside.txt'), 'utf8')).toBe('From the probe\n');
      expect(existsSync(join(dirname(folder), 'outside.txt'))).toBe(false);
      const lines = transcript(session);
      expect(lines).toContain(
        'assistant: write inside: allowed; read inside: "From the probe\\n"; read outside: refused (-32602); write outside: refused (-32602)',
      );
      const refusals = lines.filter((line) => line.includes('Session Desk refused the agent'));
      expect(refusals).toHaveLength(2);
      expect(refusals[0]).toContain('/etc/hostname is outside the session');
      expect(lines.some((line) => line.includes('probe/unknown'))).toBe(true);
      // The list and search take `acp` and `acp:ID`.
      const sessionsOf = async (agent: string) => {
        const response = await withKey(server, owner.apiKey, 'GET', `/api/sessions?agent=${agent}`);
        expect(response.status, await response.clone().text()).toBe(200);
        return ((await response.json()) as { sessions: { id: string }[] }).sessions.map((row) => row.id);
      };
      expect(await sessionsOf('acp')).toContain(id);
      expect(await sessionsOf('acp:probe')).toContain(id);
      expect(await sessionsOf('acp:kimi')).toEqual([]);
      expect(await sessionsOf('gemini')).toEqual([]);
      expect(
        (await withKey(server, owner.apiKey, 'GET', '/api/sessions?agent=acp:Not%20an%20id')).status,
      ).toBe(400);
      const found = async (agent: string) => {
        const response = await withKey(server, owner.apiKey, 'GET', `/api/search?q=probe&agent=${agent}`);
        return ((await response.json()) as { hits: { sessionId: string }[] }).hits.map(
          (hit) => hit.sessionId,
        );
      };
      await expect.poll(() => found('acp:probe'), { timeout: 20_000 }).toContain(id);
      expect(await found('acp')).toContain(id);
      expect(await found('acp:kimi')).toEqual([]);
      // An update of a kind the SDK's schema lacks reaches the transcript as a notice, and the run
      // goes on (the answer above came after it).
      expect(lines.filter((line) => line.includes('(probe_unknown_kind)'))).toHaveLength(1);
    },
  );

  it(
    'runs the agent’s terminals in its sandbox, in the session’s folder, their output capped',
    { timeout: 90_000 },
    async () => {
      const outside = mkdtempSync(join(tmpdir(), 'acp-probe-outside-'));
      try {
        await addProbe('--terminals', outside);
        const { id, session } = await runProbe();
        expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
        expect(session.isolation).toBe('sandbox');
        const folder = sandboxPath(server.sandboxRoot, id);
        expect(readFileSync(join(folder, 'made.txt'), 'utf8')).toBe('made\n');
        expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
        const lines = transcript(session);
        const answer = lines.find((line) => line.startsWith('assistant: made:'));
        expect(answer?.split('; ')).toEqual([
          'assistant: made: exit 3, output "hello from the probe\\nto stderr\\n"',
          expect.stringMatching(/^outside: exit [1-9]\d*$/u),
          'limited: "€€" truncated true',
          `capped: ${1024 * 1024} truncated true`,
          'elsewhere: -32602',
          'disguised: -32602',
          'killed: exited true, status known',
          'terminal 17 refused',
          'elicitation: -32601',
        ]);
        // The command a tool call showed, with its output, as the call's result.
        const outputs = toolOutputs(session);
        expect(outputs).toContain(
          `$ sh -c 'printf "made\\n" > made.txt; echo "hello $PROBE_GREETING"; echo "to stderr" >&2; exit 3'\nhello from the probe\nto stderr\n[exit code 3]`,
        );
        // A terminal no tool call showed is shown on its own once released.
        expect(outputs).toContainEqual(
          expect.stringMatching(/^\$ sh -c 'echo escaped > .*\/escaped\.txt'\n.*\n\[exit code [1-9]/u),
        );
        expect(outputs).toContain("$ printf '0123456789€€€'\n[earlier output left out]\n€€\n[exit code 0]");
        expect(outputs).toContain('$ sleep 600\n[killed]');
        const refusals = lines.filter((line) => line.includes('Session Desk refused the agent'));
        expect(refusals).toEqual([
          expect.stringContaining("to run pwd in a terminal: /etc is outside the session's folder"),
          expect.stringContaining(
            "to run true in a terminal: SESSIONDESK_SESSION_ID is Session Desk's own variable",
          ),
          expect.stringContaining(`the run holds 16 terminals already`),
        ]);
        // Each unknown message is said once, though the agent sent it twice.
        expect(lines.filter((line) => line.includes('(probe_unknown_kind)'))).toHaveLength(1);
        expect(lines.filter((line) => line.includes('probe/unknown'))).toHaveLength(1);
        expect(lines.filter((line) => line.includes('elicitation/create'))).toHaveLength(1);
        expect(runProcesses(id)).toEqual([]);
      } finally {
        rmSync(outside, { recursive: true, force: true });
      }
    },
  );

  it('ends a command left running in a terminal when the run is stopped', { timeout: 60_000 }, async () => {
    await addProbe('--terminal-hang');
    const id = await startProbe();
    await expect
      .poll(() => runProcesses(id).some((p) => p.cmdline === 'sleep 600'), { timeout: 20_000 })
      .toBe(true);
    const stop = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${id}/stop`);
    expect(stop.status, await stop.clone().text()).toBe(200);
    await expect.poll(() => runProcesses(id), { timeout: 20_000 }).toEqual([]);
    await expect
      .poll(async () => toolOutputs(await getSession(server, owner.user.cookie, id)), { timeout: 20_000 })
      .toContain('$ sleep 600\n[killed]');
  });

  it(
    'records nothing of what a loaded session replays, even when the agent replays it after answering the load',
    { timeout: 60_000 },
    async () => {
      await addProbe('--late-replay', '100');
      const { id } = await runProbe();
      const posted = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${id}/messages`, {
        content: 'Again.',
      });
      expect(posted.status, await posted.clone().text()).toBe(201);
      const session = await waitForResults(server, owner.user.cookie, id, 2, 30_000);
      const lines = transcript(session);
      // Each run is a process of its own: its first prompt is its answer 1.
      expect(lines.filter((line) => line.startsWith('result: '))).toEqual([
        'result: Answer 1 of this process.',
        'result: Answer 1 of this process.',
      ]);
      expect(lines.filter((line) => line.includes('REPLAYED') || line.includes('Earlier.'))).toEqual([]);
      // It was loaded, not started afresh.
      expect(lines.filter((line) => line.includes('earlier session'))).toEqual([]);
    },
  );

  it('an agent speaking another protocol version fails its run saying so', { timeout: 60_000 }, async () => {
    await addProbe('--protocol', '2');
    const { session } = await runProbe();
    expect(session.status).toBe('failed');
    expect(session.messages.at(-1)).toMatchObject({
      type: 'result',
      result: expect.stringContaining(
        'speaks version 2 of the Agent Client Protocol; Session Desk speaks version 1',
      ),
    });
    const unset = await runCli(['acp-agent', 'unset', 'probe', '--data-dir', server.dataDir]);
    expect(unset.code).toBe(0);
    const listed = await runCli(['acp-agent', 'list', '--data-dir', server.dataDir]);
    expect(listed.stdout.trim()).toBe('No ACP agents added.');
  });
});
