import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliHomePath, sessionCliFolder } from '../../src-main/agents/kinds/cli/cli-homes.js';
import type { AgentKindInfo } from '../../src-shared/accounts.js';
import {
  startScriptedAnthropicServer,
  type ScriptedConversation,
} from '../fixtures/agents/scripted-anthropic-server.mjs';
import { bash, toolOutputs, waitForResults } from '../helpers/agent-runs.js';
import { CLAUDE_CODE_VARIABLES, claudeCodeEnv } from '../helpers/claude-code-cli.js';
import { requireTools } from '../helpers/require-tools.js';
import { agentCliTool, bubblewrapTool } from '../helpers/tools.js';
import { ROOT } from '../helpers/cli.js';
import { asUser, createSession, seedWorkspace, startTestServer, tempDir } from '../helpers/server.js';

const claudeTool = agentCliTool('claude');
const claude = claudeTool.path;
const bwrap = bubblewrapTool();

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const say = (text: string) => ({ blocks: [{ type: 'text' as const, text }] });

/** The person's home: Claude Code signed in, with settings and a conversation of their own. */
function personHome(): string {
  const home = tempDir('cli-home-person-');
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  mkdirSync(join(home, '.claude', 'projects', '-work-other'), { recursive: true });
  writeFileSync(
    join(home, '.claude', '.credentials.json'),
    '{"claudeAiOauth":{"accessToken":"person-token"}}',
  );
  writeFileSync(join(home, '.claude', 'settings.json'), '{"theme":"dark"}');
  writeFileSync(
    join(home, '.claude', 'projects', '-work-other', 'other.jsonl'),
    '{"type":"user","message":{"content":"OTHER-CONVERSATION-TEXT"}}\n',
  );
  writeFileSync(
    join(home, '.claude.json'),
    JSON.stringify({ primaryApiKey: 'pk-person', mcpServers: { mine: { command: 'my-mcp' } } }),
  );
  return home;
}

describe(
  "a session's agent CLIs keep their state in a home of its own",
  requireTools(claudeTool, bwrap),
  () => {
    async function serverWithClaude(home: string, script: (sandboxRoot: string) => ScriptedConversation[]) {
      const dataDir = tempDir();
      const sandboxRoot = `${dataDir}-sandboxes`;
      const model = await startScriptedAnthropicServer(script(sandboxRoot));
      cleanups.push(() => model.close());
      const claudeEnv = claudeCodeEnv(home, model.url);
      const server = await startTestServer({
        dataDir,
        agentEnv: {
          PATH: process.env.PATH,
          HOME: home,
          SESSIONDESK_CLAUDE_BIN: claude!,
          ...Object.fromEntries(CLAUDE_CODE_VARIABLES.map((name) => [name, claudeEnv[name]])),
        },
        agentEnvNames: CLAUDE_CODE_VARIABLES,
      });
      cleanups.push(() => server.dispose());
      expect(server.sandboxRoot).toBe(sandboxRoot);
      const owner = await seedWorkspace(server);
      const put = await asUser(
        server,
        owner.user.cookie,
        'PUT',
        `/api/workspaces/${owner.organizationId}/agent`,
        {
          agent: 'claude-code',
        },
      );
      expect(put.status).toBe(200);
      return { server, owner, model };
    }

    it("seeds the credentials, never writes the person's folder, drops what a run planted, and shows no other session's home", async () => {
      const home = personHome();
      const { server, owner } = await serverWithClaude(home, (sandboxRoot) => [
        {
          match: 'FIRST-SESSION',
          turns: [
            bash('cat "$CLAUDE_CONFIG_DIR/.credentials.json"; echo; echo "home=$HOME"'),
            bash(
              `echo '{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"touch /tmp/planted"}]}]}}' > "$CLAUDE_CONFIG_DIR/settings.json"; ` +
                `echo planted > "${home}/.claude/settings.json"; echo "person-write:$?"; ` +
                `cat "${home}/.claude/projects/-work-other/other.jsonl"; echo "person-read:$?"`,
            ),
            say('Planted.'),
            // The follow-up resumes the same conversation, from the session's home.
            bash('ls -A "$CLAUDE_CONFIG_DIR"'),
            say('Looked again.'),
          ],
        },
        {
          match: 'SECOND-SESSION',
          turns: [
            bash(`ls -A "${sandboxRoot}/.cli-homes"; ls -A "${sandboxRoot}/.cli-homes/"*`),
            say('Listed.'),
          ],
        },
      ]);
      const cookie = owner.user.cookie;
      const first = await createSession(server, cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Look. FIRST-SESSION',
      });
      let session = await waitForResults(server, cookie, first.id, 1, 120_000);
      expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
      const [credentials, planted] = toolOutputs(session);
      expect(credentials).toContain('"accessToken":"person-token"');
      // HOME is an empty folder of the sandbox's own, not the person's.
      expect(credentials).toContain(`home=${home}`);
      expect(planted).toMatch(/person-write:[1-9]/u);
      expect(planted).toMatch(/person-read:[1-9]/u);
      expect(planted).not.toContain('OTHER-CONVERSATION-TEXT');

      // The person's own files are as they were.
      expect(readFileSync(join(home, '.claude', 'settings.json'), 'utf8')).toBe('{"theme":"dark"}');
      const own = sessionCliFolder('claude-code', cliHomePath(server.sandboxRoot, first.id));
      expect(readFileSync(join(own, '.credentials.json'), 'utf8')).toContain('person-token');
      const globalConfig = JSON.parse(readFileSync(join(own, '.claude.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      expect(globalConfig.primaryApiKey).toBe('pk-person');
      expect(globalConfig.mcpServers).toBeUndefined();
      // What the run planted is in the session's home until the next run starts, never after.
      expect(existsSync(join(own, 'settings.json'))).toBe(true);

      const followUp = await asUser(server, cookie, 'POST', `/api/sessions/${first.id}/messages`, {
        content: 'Look again',
      });
      expect(followUp.status).toBe(201);
      session = await waitForResults(server, cookie, first.id, 2, 120_000);
      expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
      const listing = toolOutputs(session)[2]!.split('\n');
      expect(listing).toContain('.credentials.json');
      expect(listing).toContain('projects');
      expect(listing).not.toContain('settings.json');

      const second = await createSession(server, cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'List. SECOND-SESSION',
      });
      const other = await waitForResults(server, cookie, second.id, 1, 120_000);
      const [homes] = toolOutputs(other);
      expect(homes).toContain(second.id);
      expect(homes).not.toContain(first.id);
    }, 300_000);

    it("resumes a conversation an earlier version kept in the person's folder from a copy, leaving the person's file as it was", async () => {
      const home = personHome();
      const { server, owner, model } = await serverWithClaude(home, () => [
        { match: 'EARLIER-VERSION', turns: [say('Noted: teal.'), say('You said teal.')] },
      ]);
      const cookie = owner.user.cookie;
      const created = await createSession(server, cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Remember teal. EARLIER-VERSION',
      });
      await waitForResults(server, cookie, created.id, 1, 120_000);
      // As an earlier version left it: the conversation in the person's folder, no session home.
      const own = cliHomePath(server.sandboxRoot, created.id);
      const projects = join(sessionCliFolder('claude-code', own), 'projects');
      const [project] = readdirSync(projects);
      const [file] = readdirSync(join(projects, project!)).filter((name) => name.endsWith('.jsonl'));
      const theirs = join(home, '.claude', 'projects', project!, file!);
      mkdirSync(join(theirs, '..'), { recursive: true });
      cpSync(join(projects, project!, file!), theirs);
      rmSync(own, { recursive: true });
      const before = readFileSync(theirs, 'utf8');

      const sent = await asUser(server, cookie, 'POST', `/api/sessions/${created.id}/messages`, {
        content: 'Which colour?',
      });
      expect(sent.status).toBe(201);
      const session = await waitForResults(server, cookie, created.id, 2, 120_000);
      expect(session.status, JSON.stringify(session.messages.at(-1))).toBe('completed');
      const asked = model.requests.find((r) => JSON.stringify(r.body).includes('Which colour?'));
      expect(JSON.stringify(asked?.body)).toContain('Noted: teal.');
      expect(readFileSync(join(projects, project!, file!), 'utf8')).toContain('Which colour?');
      expect(readFileSync(theirs, 'utf8')).toBe(before);
    }, 300_000);
  },
);

describe('the programs Session Desk runs', requireTools(bwrap), () => {
  /** A program that, asked its version, copies the admin token to `marker`, then answers. */
  function versionProgram(path: string, dataDir: string, marker: string): void {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(
      path,
      `#!/bin/sh\ncat "${dataDir}/admin.token" > "${marker}" 2>&1\necho "9.9.9 (Claude Code)"\n`,
    );
    chmodSync(path, 0o755);
  }

  /** GET /api/agents of a server whose agents' environment `setUp` makes, knowing its folders. */
  async function agentsOf(setUp: (dataDir: string, sandboxRoot: string) => NodeJS.ProcessEnv) {
    const dataDir = tempDir();
    const env = setUp(dataDir, `${dataDir}-sandboxes`);
    const server = await startTestServer({ dataDir, agentEnv: { PATH: process.env.PATH, ...env } });
    cleanups.push(() => server.dispose());
    writeFileSync(join(dataDir, 'admin.token'), 'the-admin-token');
    const owner = await seedWorkspace(server);
    const response = await asUser(server, owner.user.cookie, 'GET', '/api/agents');
    expect(response.status).toBe(200);
    const { agents } = (await response.json()) as { agents: AgentKindInfo[] };
    return { server, owner, claude: agents.find((a) => a.kind === 'claude-code')! };
  }

  it("asks a CLI's version inside the sandbox: what the program does then stays there", async () => {
    const home = tempDir('cli-home-person-');
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    // Claude Code's "local" install lies in its own state folder.
    const program = join(home, '.claude', 'local', 'claude');
    const marker = join(home, 'version-marker');
    const { claude: info } = await agentsOf((dataDir) => {
      versionProgram(program, dataDir, marker);
      return { HOME: home, SESSIONDESK_CLAUDE_BIN: program };
    });
    expect(info).toMatchObject({ found: true, path: program, version: '9.9.9' });
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses a CLI program that lies where agents write', async () => {
    const home = tempDir('cli-home-person-');
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    const marker = join(home, 'version-marker');
    let program = '';
    const {
      server,
      owner,
      claude: info,
    } = await agentsOf((dataDir, sandboxRoot) => {
      program = join(sandboxRoot, 'ses_planted', 'claude');
      versionProgram(program, dataDir, marker);
      return { HOME: home, SESSIONDESK_CLAUDE_BIN: program };
    });
    expect(info.found).toBe(false);
    expect(info.problem).toContain('never runs a program an agent could have replaced');
    expect(existsSync(marker)).toBe(false);
    const chosen = await asUser(
      server,
      owner.user.cookie,
      'PUT',
      `/api/workspaces/${owner.organizationId}/agent`,
      {
        agent: 'claude-code',
      },
    );
    expect(chosen.status).toBe(400);
    expect(((await chosen.json()) as { error: { message: string } }).error.message).toContain(program);
  });
});

describe("what of the person's home a run's program sees", requireTools(bwrap), () => {
  it('a CLI installed in ~/node_modules and a PATH folder ~/X/bin bring neither the home nor ~/X', async () => {
    const home = tempDir('cli-home-person-');
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    writeFileSync(join(home, 'secret.txt'), 'HOME-SECRET');
    mkdirSync(join(home, '.cargo', 'bin'), { recursive: true });
    writeFileSync(join(home, '.cargo', 'credentials.toml'), 'CARGO-SECRET');
    writeFileSync(join(home, '.cargo', 'bin', 'tool'), 'a tool');
    const agent = join(home, 'node_modules', 'look-agent', 'look-agent.mjs');
    mkdirSync(join(agent, '..'), { recursive: true });
    cpSync(join(ROOT, 'test', 'fixtures', 'look-agent.mjs'), agent);
    const server = await startTestServer({
      agentCommand: [agent],
      agentEnv: { PATH: `${join(home, '.cargo', 'bin')}:${process.env.PATH}`, HOME: home },
    });
    cleanups.push(() => server.dispose());
    const owner = await seedWorkspace(server);
    const paths = [
      join(home, 'secret.txt'),
      join(home, '.cargo', 'credentials.toml'),
      join(home, '.cargo', 'bin', 'tool'),
      agent,
    ];
    const created = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: JSON.stringify(paths),
    });
    const session = await waitForResults(server, owner.user.cookie, created.id, 1, 60_000);
    expect(session.isolation).toBe('sandbox');
    const report = session.messages.flatMap((m) =>
      m.type === 'assistant' ? m.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])) : [],
    )[0];
    expect(JSON.parse(report!)).toEqual({
      [paths[0]!]: 'ENOENT',
      [paths[1]!]: 'ENOENT',
      [paths[2]!]: 'a tool',
      [paths[3]!]: readFileSync(join(ROOT, 'test', 'fixtures', 'look-agent.mjs'), 'utf8'),
    });
  });
});
