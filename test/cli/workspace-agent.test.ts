import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { PASSWORD, cliEmail, cliIn, ok, signInAt, useSandbox } from '../helpers/cli-extra.js';
import { requireTools } from '../helpers/require-tools.js';
import { agentCliTool } from '../helpers/tools.js';

const sandbox = useSandbox();

/** A data directory with one user, and `workspace create` for them with `args` and `env`. */
async function withOwner() {
  const dataDir = sandbox.dataDir();
  const email = cliEmail('owner');
  await ok(cliIn(dataDir)('user', 'create', '--email', email, '--name', 'Owner', '--password', PASSWORD));
  const create = (args: string[] = [], env: NodeJS.ProcessEnv = {}) =>
    runCli(['workspace', 'create', '--name', 'Team', '--owner', email, ...args, '--data-dir', dataDir], env);
  return { dataDir, email, create };
}

/** The workspace's agent as the dashboard reads it from a server on the data directory. */
async function agentOf(dataDir: string, email: string, org: string) {
  const serve = await sandbox.serve(dataDir);
  const cookie = await signInAt(serve.url, email);
  const response = await fetch(`${serve.url}/api/workspaces/${org}/agent`, { headers: { cookie } });
  expect(response.status).toBe(200);
  return {
    serve,
    cookie,
    agent: (await response.json()) as { settings: { agent: string; acpAgent?: string }; source: string },
  };
}

describe('workspace create says which agent the workspace runs', () => {
  it('without --agent: the demo agent, said on stderr; stdout is the organizationId alone', async () => {
    const { dataDir, email, create } = await withOwner();
    const made = await create();
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^org_[\w-]{22}\n$/u);
    expect(made.stderr).toBe(
      'sessiondesk: The workspace "Team" runs the demo agent, which only simulates work, until an owner ' +
        'chooses an agent in Settings, then Agent (or give --agent claude-code, codex, gemini, or acp with --acp-agent ID).\n',
    );
    const { agent } = await agentOf(dataDir, email, made.stdout.trim());
    expect(agent).toMatchObject({ settings: { agent: 'demo' }, source: 'default' });
  }, 90_000);

  it('--agent demo, through the server that holds the data directory', async () => {
    const { dataDir, email, create } = await withOwner();
    const serve = await sandbox.serve(dataDir);
    const made = await create(['--agent', 'demo']);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toBe(
      'sessiondesk: The workspace "Team" runs the demo agent, which only simulates work.\n',
    );
    const cookie = await signInAt(serve.url, email);
    const response = await fetch(`${serve.url}/api/workspaces/${made.stdout.trim()}/agent`, {
      headers: { cookie },
    });
    expect(await response.json()).toMatchObject({ settings: { agent: 'demo' }, source: 'workspace' });
  }, 90_000);

  describe('an agent CLI', requireTools(agentCliTool('claude')), () => {
    it('--agent claude-code, found where the server would find it', async () => {
      const { dataDir, email, create } = await withOwner();
      const env = { SESSIONDESK_CLAUDE_BIN: agentCliTool('claude').path! };
      const made = await create(['--agent', 'claude-code'], env);
      expect(made.code, made.stderr).toBe(0);
      expect(made.stderr).toBe('sessiondesk: The workspace "Team" runs Claude Code.\n');
      const { agent } = await agentOf(dataDir, email, made.stdout.trim());
      expect(agent).toMatchObject({ settings: { agent: 'claude-code' }, source: 'workspace' });
    }, 90_000);
  });

  it('refuses what the server refuses, in its words, and makes no workspace', async () => {
    const { dataDir, email, create } = await withOwner();
    const missing = { SESSIONDESK_CLAUDE_BIN: join(dataDir, 'no-such-claude') };
    const notInstalled = await create(['--agent', 'claude-code'], missing);
    const noId = await create(['--agent', 'acp']);
    const unknownId = await create(['--agent', 'acp', '--acp-agent', 'no-such-agent']);
    const idAlone = await create(['--acp-agent', 'opencode']);
    for (const refused of [notInstalled, noId, unknownId, idAlone]) {
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stdout).toBe('');
    }
    // A kind that needs a program chosen, or none at all: a mistake in the command line.
    for (const kind of ['command', 'claude']) {
      const wrong = await create(['--agent', kind]);
      expect(wrong.code, kind).toBe(2);
      expect(wrong.stderr).toContain('Usage: sessiondesk workspace create');
    }

    // The server's own answers to the same choices, for a workspace made without one.
    const made = await create();
    const { cookie, serve } = await agentOf(dataDir, email, made.stdout.trim());
    const put = async (body: object) => {
      const response = await fetch(`${serve.url}/api/workspaces/${made.stdout.trim()}/agent`, {
        method: 'PUT',
        headers: { cookie, origin: serve.url, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(400);
      return `sessiondesk: ${((await response.json()) as { error: { message: string } }).error.message}\n`;
    };
    expect(noId.stderr).toBe(await put({ agent: 'acp' }));
    expect(unknownId.stderr).toBe(await put({ agent: 'acp', acpAgent: 'no-such-agent' }));
    expect(idAlone.stderr).toBe(await put({ agent: 'demo', acpAgent: 'opencode' }));
    expect(notInstalled.stderr).toMatch(/^sessiondesk: SESSIONDESK_CLAUDE_BIN names .*no-such-claude/u);
    // Only the workspace made without an agent exists.
    const workspaces = await ok(cliIn(dataDir)('workspace', 'list', '--json'));
    expect((JSON.parse(workspaces) as unknown[]).length).toBe(1);
  }, 120_000);
});
