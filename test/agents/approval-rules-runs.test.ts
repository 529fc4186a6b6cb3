import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import type { Approval, ApprovalRule } from '../../src-shared/index.js';
import {
  decide,
  firstRequest,
  getApproval,
  pendingApprovals,
  transcriptDecisions,
} from '../helpers/approvals.js';
import { bash, waitForResults } from '../helpers/agent-runs.js';
import { ACP_AGENTS_UNDER_TEST, acpAgentTool } from '../helpers/acp-runs.js';
import { setAcpProbe } from '../helpers/cli.js';
import { useCleanups } from '../helpers/cleanups.js';
import { transcript } from '../helpers/run-control.js';
import { realCli, type RealCliKind } from '../helpers/real-cli-setup.js';
import { requireTools } from '../helpers/require-tools.js';
import { asUser, createSession, seedWorkspace, startTestServer, tempDir } from '../helpers/server.js';
import { agentCliTool } from '../helpers/tools.js';

/**
 * Approval rules deciding what real agents ask, against their scripted model servers, in a
 * workspace that otherwise lets agents act: reads and edits allowed, deletions rejected,
 * commands asked. Only the command reaches the inbox; the agent hears of the rejection; the
 * transcript says which rule decided each request.
 */

const cleanup = useCleanups();
const LONG = { timeout: 180_000 };

const RULES: ApprovalRule[] = [
  { kind: 'read', decision: 'allow' },
  { kind: 'edit', decision: 'allow' },
  { kind: 'delete', decision: 'reject' },
  { kind: 'execute', pattern: 'rm *', decision: 'reject' },
  { kind: 'execute', decision: 'ask' },
];
const REJECTED = "This workspace's approval rules reject this request";

/**
 * The session folder a model request names (agents tell their model the folder they work in):
 * the agents' file tools want absolute paths.
 */
function folderIn(body: unknown, sandboxRoot: string): string {
  const escaped = sandboxRoot.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
  const found = new RegExp(`${escaped}/[\\w-]+`, 'u').exec(JSON.stringify(body))?.[0];
  if (!found) throw new Error('the model request names no session folder');
  return found;
}

/**
 * A server whose workspace runs `agent` with the rules, and a session started on `prompt`;
 * `script` gets the sandboxes' root once the server has one.
 */
const BIN_VARIABLES: Record<RealCliKind, string> = {
  'claude-code': 'SESSIONDESK_CLAUDE_BIN',
  codex: 'SESSIONDESK_CODEX_BIN',
  gemini: 'SESSIONDESK_GEMINI_BIN',
};

async function rulesServer(
  kind: RealCliKind,
  script: (root: () => string) => unknown[],
  agent: Record<string, unknown>,
  prompt: string,
  moreEnv: NodeJS.ProcessEnv = {},
) {
  let root = '';
  const cli = await realCli(
    kind,
    script(() => root),
    tempDir(`rules-${kind}-home-`),
  );
  cleanup(() => cli.close());
  const server = await startTestServer({
    agentEnv: { PATH: process.env.PATH, ...cli.env, [BIN_VARIABLES[kind]]: cli.bin, ...moreEnv },
    agentEnvNames: cli.names,
  });
  cleanup(() => server.dispose());
  root = server.sandboxRoot;
  const owner = await seedWorkspace(server);
  const cookie = owner.user.cookie;
  const put = await asUser(server, cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, {
    ...agent,
    approvalRules: RULES,
  });
  expect(put.status, await put.clone().text()).toBe(200);
  const created = await createSession(server, cookie, {
    organizationId: owner.organizationId,
    initialMessage: prompt,
  });
  const folder = sandboxPath(server.sandboxRoot, created.id);
  return { server, owner, cookie, sessionId: created.id, folder, cli };
}

/** Waits for the one request that reaches the inbox: it must be the command the rules ask about. */
async function onlyTheCommand(
  setup: Awaited<ReturnType<typeof rulesServer>>,
  command: string,
): Promise<Approval> {
  const { server, owner, cookie, sessionId } = setup;
  const asked = await firstRequest(server, cookie, owner.organizationId, sessionId);
  expect(asked.tool).toMatchObject({ kind: 'execute', command });
  expect((await pendingApprovals(server, cookie, owner.organizationId, sessionId)).map((a) => a.id)).toEqual([
    asked.id,
  ]);
  return asked;
}

const claude = agentCliTool('claude');

describe('approval rules with Claude Code', requireTools(claude), () => {
  it('its read and write are allowed by rules, its rm rejected by one, its command asked', LONG, async () => {
    const setup = await rulesServer(
      'claude-code',
      (root) => [
        {
          match: 'RULES',
          turns: [
            {
              blocks: [{ type: 'tool_use' as const, name: 'Read', input: { file_path: '/etc/hostname' } }],
            },
            (body: unknown) => ({
              blocks: [
                {
                  type: 'tool_use' as const,
                  name: 'Write',
                  input: { file_path: join(folderIn(body, root()), 'NOTES.md'), content: 'First line\n' },
                },
              ],
            }),
            bash('rm NOTES.md'),
            bash('echo done > out.txt'),
            { blocks: [{ type: 'text' as const, text: 'Finished.' }] },
          ],
        },
      ],
      { agent: 'claude-code' },
      'Write, remove, then run. RULES',
    );
    const { server, cookie, sessionId, folder, cli } = setup;
    const command = await onlyTheCommand(setup, 'echo done > out.txt');
    // Before the command asked: the notes were written (allowed), and not removed (rejected).
    expect(existsSync(join(folder, 'NOTES.md'))).toBe(true);
    expect(JSON.stringify(cli.requests.map((r) => r.body))).toContain(REJECTED);
    await decide(server, cookie, command.id, { decision: 'allow_once' });

    const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
    expect(session.messages.at(-1)).toMatchObject({ type: 'result', result: 'Finished.' });
    expect(existsSync(join(folder, 'out.txt'))).toBe(true);
    expect(existsSync(join(folder, 'NOTES.md'))).toBe(true);
    const [read, write, remove, run] = transcriptDecisions(session);
    expect(read).toMatchObject({ decision: 'allow_once', decidedBy: { kind: 'rule', index: 0 } });
    expect(write).toMatchObject({ decision: 'allow_once', decidedBy: { kind: 'rule', index: 1 } });
    expect(remove).toMatchObject({ decision: 'reject_once', decidedBy: { kind: 'rule', index: 3 } });
    expect(run).toMatchObject({ decision: 'allow_once', decidedBy: { kind: 'user' } });
    expect(await getApproval(server, cookie, remove!.id)).toMatchObject({
      agent: 'claude-code',
      title: 'rm NOTES.md',
      tool: { kind: 'execute', name: 'Bash', command: 'rm NOTES.md' },
      decidedBy: { kind: 'rule', index: 3, rule: RULES[3] },
    });
    expect((await getApproval(server, cookie, write!.id)).tool).toMatchObject({
      kind: 'edit',
      name: 'Write',
      paths: ['NOTES.md'],
    });
    // A read outside the session's folder is matched by its absolute path.
    expect((await getApproval(server, cookie, read!.id)).tool).toMatchObject({
      kind: 'read',
      name: 'Read',
      paths: ['/etc/hostname'],
    });
  });
});

const gemini = agentCliTool('gemini');

describe('approval rules with an ACP agent (Gemini CLI)', requireTools(gemini), () => {
  it('its write is allowed by a rule, its rm rejected by one, its command asked', LONG, async () => {
    const setup = await rulesServer(
      'gemini',
      () => [
        {
          match: 'RULES',
          turns: [
            { parts: [{ call: 'write_file', args: { file_path: 'NOTES.md', content: 'First line\n' } }] },
            {
              parts: [{ call: 'run_shell_command', args: { command: 'rm NOTES.md', description: 'Remove' } }],
            },
            {
              parts: [
                { call: 'run_shell_command', args: { command: 'echo done > out.txt', description: 'Write' } },
              ],
            },
            { parts: [{ text: 'Finished.' }] },
            { parts: [{ text: 'Finished.' }] },
          ],
        },
      ],
      { agent: 'acp', acpAgent: 'gemini' },
      'Write, remove, then run. RULES',
    );
    const { server, cookie, sessionId, folder, cli } = setup;
    const command = await onlyTheCommand(setup, 'echo done > out.txt');
    expect(existsSync(join(folder, 'NOTES.md'))).toBe(true);
    expect(JSON.stringify(cli.requests.map((r) => r.body))).toMatch(/rm NOTES\.md/u);
    await decide(server, cookie, command.id, { decision: 'allow_once' });

    const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
    expect(existsSync(join(folder, 'out.txt'))).toBe(true);
    expect(existsSync(join(folder, 'NOTES.md'))).toBe(true);
    const [write, remove, run] = transcriptDecisions(session);
    expect(write).toMatchObject({ decision: 'allow_once', decidedBy: { kind: 'rule', index: 1 } });
    expect(remove).toMatchObject({ decidedBy: { kind: 'rule', index: 3 } });
    expect(remove?.decision.startsWith('reject_')).toBe(true);
    expect(run).toMatchObject({ decidedBy: { kind: 'user' } });
    expect((await getApproval(server, cookie, write!.id)).tool).toMatchObject({
      kind: 'edit',
      paths: ['NOTES.md'],
    });
  });
});

const codexAcp = acpAgentTool(ACP_AGENTS_UNDER_TEST.codex!);
const codex = agentCliTool('codex');

describe('approval rules with Codex (through its ACP adapter)', requireTools(codex, codexAcp), () => {
  it('its patch is allowed by a rule, its rm rejected by one, its command asked', LONG, async () => {
    const setup = await rulesServer(
      'codex',
      () => [
        {
          match: 'RULES',
          turns: [
            {
              output: {
                custom: 'apply_patch',
                input: '*** Begin Patch\n*** Add File: NOTES.md\n+First line\n*** End Patch\n',
              },
            },
            { output: { call: 'exec_command', arguments: { cmd: 'rm NOTES.md' } } },
            { output: { call: 'exec_command', arguments: { cmd: 'echo done > out.txt' } } },
            { output: { text: 'Finished.' } },
          ],
        },
      ],
      { agent: 'acp', acpAgent: 'codex' },
      'Write, remove, then run. RULES',
      { SESSIONDESK_CODEX_ACP_BIN: codexAcp.path ?? '' },
    );
    const { server, cookie, sessionId, folder, cli } = setup;
    const command = await onlyTheCommand(setup, 'echo done > out.txt');
    expect(existsSync(join(folder, 'NOTES.md'))).toBe(true);
    // Codex ended its turn at the rejection: it was told so, with the rule's words.
    expect(JSON.stringify(cli.requests.map((r) => r.body))).toContain(REJECTED);
    await decide(server, cookie, command.id, { decision: 'allow_once' });

    const session = await waitForResults(server, cookie, sessionId, 1, 90_000);
    expect(existsSync(join(folder, 'out.txt'))).toBe(true);
    expect(existsSync(join(folder, 'NOTES.md'))).toBe(true);
    const [write, remove, run] = transcriptDecisions(session);
    expect(write).toMatchObject({ decision: 'allow_once', decidedBy: { kind: 'rule', index: 1 } });
    expect(remove).toMatchObject({ decision: 'reject_once', decidedBy: { kind: 'rule', index: 3 } });
    expect(run).toMatchObject({ decidedBy: { kind: 'user' } });
    expect((await getApproval(server, cookie, write!.id)).tool).toMatchObject({
      kind: 'edit',
      paths: ['NOTES.md'],
    });
    expect((await getApproval(server, cookie, remove!.id)).tool).toMatchObject({
      kind: 'execute',
      command: 'rm NOTES.md',
    });
  });
});

describe('approval rules with an ACP agent whose words say otherwise than its calls', () => {
  it("the call's kind and input decide, never its title; an allow needs every path", LONG, async () => {
    const server = await startTestServer({ agentEnv: { PATH: process.env.PATH } });
    cleanup(() => server.dispose());
    const set = await setAcpProbe(server.dataDir, '--ask-kinds');
    expect(set.code, set.stderr).toBe(0);
    const owner = await seedWorkspace(server);
    const cookie = owner.user.cookie;
    const rules: ApprovalRule[] = [
      { kind: 'read', decision: 'allow' },
      { kind: 'delete', decision: 'reject' },
      { kind: 'execute', pattern: 'rm *', decision: 'reject' },
      { kind: 'edit', pattern: 'src/**', decision: 'allow' },
      { kind: 'execute', decision: 'ask' },
    ];
    const put = await asUser(server, cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, {
      agent: 'acp',
      acpAgent: 'probe',
      approvals: 'ask',
      approvalRules: rules,
    });
    expect(put.status, await put.clone().text()).toBe(200);
    const { id } = await createSession(server, cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Ask.',
    });

    // The edit of a file outside the folder is not allowed by `src/**`: `approvals` asks.
    const edit = await firstRequest(server, cookie, owner.organizationId, id, 30_000);
    expect(edit.tool).toMatchObject({
      kind: 'edit',
      paths: ['src/a.ts', `${dirname(sandboxPath(server.sandboxRoot, id))}/outside.ts`],
    });
    await decide(server, cookie, edit.id, { decision: 'reject_once' });
    const listing = await firstRequest(server, cookie, owner.organizationId, id, 30_000);
    expect(listing.tool).toMatchObject({ kind: 'execute', command: 'ls -la' });
    await decide(server, cookie, listing.id, { decision: 'allow_once' });

    const session = await waitForResults(server, cookie, id, 1, 30_000);
    expect(transcript(session)).toContain(
      'assistant: read: probe-allow; delete: probe-reject; execute: probe-reject; edit: probe-reject; execute: probe-allow',
    );
    expect(
      transcriptDecisions(session).map((d) =>
        d.decidedBy.kind === 'rule' ? d.decidedBy.index : d.decidedBy.kind,
      ),
    ).toEqual([0, 1, 2, 'user', 'user']);
  });
});
