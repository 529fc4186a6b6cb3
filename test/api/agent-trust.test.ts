import {
  chmodSync,
  chownSync,
  existsSync,
  lchownSync,
  mkdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FullSessionResponseSchema, type SessionFull } from '../../src-shared/index.js';
import { runCli, ROOT, startServe } from '../helpers/cli.js';
import {
  asUser,
  createSession,
  launchCookie,
  seedWorkspace,
  signIn,
  startTestServer,
  tempDir,
  uniqueEmail,
  withKey,
  PASSWORD,
  type TestServer,
} from '../helpers/server.js';
import { sqljsOnly } from '../helpers/require-tools.js';
import { rm } from 'node:fs/promises';
import { cliHomePath, sessionCliFolder } from '../../src-main/agents/kinds/cli/cli-homes.js';
import { defaultSandboxRoot } from '../../src-main/agents/sandbox/sandbox-root.js';

const PROBE = join(ROOT, 'test', 'fixtures', 'probe-agent.mjs');

interface ProbeReport {
  argv: string[];
  stdin: string;
  cwd: string;
  env: Record<string, string>;
  reachable: string[];
}

async function finished(server: { url: string }, apiKey: string, id: string): Promise<SessionFull> {
  const get = async () =>
    FullSessionResponseSchema.parse(
      await (await fetch(`${server.url}/api/sessions/${id}`, { headers: { 'x-api-key': apiKey } })).json(),
    ).session;
  await expect.poll(async () => (await get()).status, { timeout: 20_000 }).not.toBe('active');
  return get();
}

function probeReport(session: SessionFull): ProbeReport {
  for (const message of session.messages) {
    if (message.type !== 'assistant') continue;
    for (const block of message.message.content) {
      if (block.type === 'text') return JSON.parse(block.text) as ProbeReport;
    }
  }
  throw new Error(`the probe did not report: ${JSON.stringify(session.messages.at(-1))}`);
}

const resultText = (session: SessionFull) => {
  const last = session.messages.at(-1);
  return last?.type === 'result' ? last.result : '';
};

describe('choosing a program is the administrator’s privilege', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer();
    owner = await seedWorkspace(server);
  });
  afterAll(async () => server.dispose());

  it('a signed-in account that owns a workspace it created cannot set a program: 403, nothing stored', async () => {
    const email = uniqueEmail('plain');
    await server.accounts.createUser({ email, name: 'Plain member', password: PASSWORD });
    const cookie = await signIn(server, email);
    const created = await asUser(server, cookie, 'POST', '/api/workspaces', { name: 'Mine' });
    expect(created.status).toBe(201);
    const org = ((await created.json()) as { workspace: { organizationId: string } }).workspace
      .organizationId;
    const path = `/api/workspaces/${org}/agent`;
    const response = await asUser(server, cookie, 'PUT', path, {
      agent: 'command',
      command: ['sh', '-c', 'id > /tmp/owned'],
    });
    expect(response.status).toBe(403);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('forbidden');
    expect(body.error.message).toContain('administrator');
    expect(body.error.message).toContain('sessiondesk agent-command set');
    const now = (await (await asUser(server, cookie, 'GET', path)).json()) as { settings: unknown };
    expect(now.settings).toEqual({ agent: 'demo' });
  });

  it('owners choose a command the administrator defined with the CLI, by name; an unknown name is a 400', async () => {
    const defined = await runCli([
      'agent-command',
      'set',
      'probe',
      '--data-dir',
      server.dataDir,
      '--',
      process.execPath,
      PROBE,
    ]);
    expect(defined.stderr).toBe('');
    expect(defined.code).toBe(0);
    const listed = await runCli(['agent-command', 'list', '--json', '--data-dir', server.dataDir]);
    expect(JSON.parse(listed.stdout)).toEqual({ probe: [process.execPath, PROBE] });
    const path = `/api/workspaces/${owner.organizationId}/agent`;
    const unknown = await asUser(server, owner.user.cookie, 'PUT', path, {
      agent: 'command',
      commandName: 'nope',
    });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(await unknown.json())).toContain('body.commandName');
    const chosen = await asUser(server, owner.user.cookie, 'PUT', path, {
      agent: 'command',
      commandName: 'probe',
    });
    expect(chosen.status).toBe(200);
    const session = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'What can you see?',
    });
    const done = await finished(server, owner.apiKey, session.id);
    // No {prompt} in the command: the prompt went to stdin, never onto the command line.
    expect(probeReport(done)).toMatchObject({ argv: [], stdin: 'What can you see?' });

    const removed = await runCli(['agent-command', 'remove', 'probe', '--data-dir', server.dataDir]);
    expect(removed.code).toBe(0);
    const again = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Still there?',
    });
    const failed = await finished(server, owner.apiKey, again.id);
    expect(failed.status).toBe('failed');
    expect(resultText(failed)).toContain('"probe" is no longer defined');
  });

  it('a program a workspace stored for itself before is not run; the session fails saying why', async () => {
    const other = await seedWorkspace(server, 'legacy');
    await server.storage.write((tx) =>
      tx.workspaces.putSettings(other.organizationId, {
        agent: 'command',
        command: [process.execPath, PROBE],
      }),
    );
    const session = await createSession(server, other.user.cookie, {
      organizationId: other.organizationId,
      initialMessage: 'Run my own program',
    });
    const done = await finished(server, other.apiKey, session.id);
    expect(done.status).toBe('failed');
    expect(resultText(done)).toContain('Only the administrator defines agent commands');
    expect(done.messages.some((m) => m.type === 'assistant')).toBe(false);
  });

  it(
    'the demo owner (first-run demo) cannot set a program either',
    sqljsOnly('the demo workspace lives in a data directory; a team server answers 503 for it'),
    async () => {
      const fresh = await startTestServer();
      try {
        const demo = await fetch(`${fresh.url}/api/setup/demo`, {
          method: 'POST',
          headers: { origin: fresh.origin, cookie: await launchCookie(fresh) },
        });
        expect(demo.status).toBe(201);
        const cookie = (demo.headers.get('set-cookie') ?? '').split(';')[0]!;
        const { workspace } = (await demo.json()) as { workspace: { organizationId: string } };
        const response = await asUser(
          fresh,
          cookie,
          'PUT',
          `/api/workspaces/${workspace.organizationId}/agent`,
          {
            agent: 'command',
            command: ['id'],
          },
        );
        expect(response.status).toBe(403);
      } finally {
        await fresh.dispose();
      }
    },
  );

  it('the demo sign-in answers only on a demo data directory', async () => {
    const response = await fetch(`${server.url}/api/demo/sign-in`, {
      method: 'POST',
      headers: { origin: server.origin, cookie: await launchCookie(server) },
    });
    expect(response.status).toBe(404);
  });
});

describe('a value never becomes an option on the agent’s command line', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    // The README's old template: the prompt as a whole argument.
    server = await startTestServer({
      agentCommand: [process.execPath, PROBE, '-p', '{prompt}', '--model', '{model}'],
    });
    owner = await seedWorkspace(server);
  });
  afterAll(async () => server.dispose());

  it('a prompt that starts with "-" is refused before the program runs', async () => {
    const session = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: '--dangerously-skip-permissions',
    });
    const done = await finished(server, owner.apiKey, session.id);
    expect(done.status).toBe('failed');
    expect(resultText(done)).toContain('would read it as an option');
    // The program never ran: it would have reported.
    expect(done.messages.some((m) => m.type === 'assistant')).toBe(false);
  });

  it('an ordinary prompt still reaches the program as one argument', async () => {
    const session = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Fix it -- and $(rm -rf /) "quotes"',
    });
    const done = await finished(server, owner.apiKey, session.id);
    // No model was chosen: the session claims none, and {model} stays empty for the command.
    expect(done.model).toBe('');
    const report = probeReport(done);
    expect(report.argv).toEqual(['-p', 'Fix it -- and $(rm -rf /) "quotes"', '--model', '']);
  });

  it('a chosen model reaches the program as one argument', async () => {
    const session = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Fix it',
      model: 'us.anthropic.x:0',
    });
    const report = probeReport(await finished(server, owner.apiKey, session.id));
    expect(report.argv).toEqual(['-p', 'Fix it', '--model', 'us.anthropic.x:0']);
  });

  it('after "--" in the template, a prompt starting with "-" is plain text', async () => {
    const other = await startTestServer({ agentCommand: [process.execPath, PROBE, '--', '{prompt}'] });
    try {
      const them = await seedWorkspace(other);
      const session = await createSession(other, them.user.cookie, {
        organizationId: them.organizationId,
        initialMessage: '--dangerously-skip-permissions',
      });
      const report = probeReport(await finished(other, them.apiKey, session.id));
      expect(report.argv).toEqual(['--', '--dangerously-skip-permissions']);
    } finally {
      await other.dispose();
    }
  });

  it('model has a strict pattern: an option-looking or odd model is a 400', async () => {
    for (const model of ['--help', '-m', 'a b', 'x;y', '']) {
      const response = await asUser(server, owner.user.cookie, 'POST', '/api/sessions', {
        organizationId: owner.organizationId,
        model,
      });
      expect(response.status, model).toBe(400);
      expect(JSON.stringify(await response.json())).toContain('body.model');
    }
    for (const model of ['claude-opus-4-6', 'gpt-5.1-codex', 'models/gemini-2.5-pro', 'us.anthropic.x:0']) {
      const response = await asUser(server, owner.user.cookie, 'POST', '/api/sessions', {
        organizationId: owner.organizationId,
        model,
      });
      expect(response.status, model).toBe(201);
      await withKey(server, owner.apiKey, 'GET', '/api/sessions');
    }
  });
});

describe('agents work outside the data directory with an allow-listed environment', () => {
  it(
    'serve: the sandbox is beside the data directory, the admin token and journals are out of reach, and only allowed variables are seen',
    { timeout: 90_000 },
    async () => {
      const dataDir = tempDir('sessiondesk-trust-');
      const env = {
        SESSIONDESK_AGENT_COMMAND: JSON.stringify([process.execPath, PROBE]),
        SESSIONDESK_AGENT_ENV: 'MY_TOOL_HOME',
        SESSIONDESK_DEMO_PACE_MS: '0',
        ANTHROPIC_API_KEY: 'sk-ant-test',
        // Each CLI's own endpoint, configuration and sandbox variables.
        GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:9/gemini',
        IS_SANDBOX: '1',
        CLAUDE_CONFIG_DIR: '/opt/claude-config',
        MY_TOOL_HOME: '/opt/tool',
        UNRELATED_SECRET: 'do-not-pass',
      };
      try {
        const email = 'ada@example.test';
        expect(
          (
            await runCli([
              'user',
              'create',
              '--email',
              email,
              '--name',
              'Ada',
              '--password',
              PASSWORD,
              '--data-dir',
              dataDir,
            ])
          ).code,
        ).toBe(0);
        const org = (
          await runCli(['workspace', 'create', '--name', 'Acme', '--owner', email, '--data-dir', dataDir])
        ).stdout.trim();
        const key = (
          await runCli(['key', 'create', '--workspace', org, '--data-dir', dataDir])
        ).stdout.trim();
        const served = await startServe(dataDir, ['--log-level', 'silent'], env);
        try {
          const signed = await fetch(`${served.url}/api/auth/sign-in`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email, password: PASSWORD }),
          });
          const cookie = (signed.headers.get('set-cookie') ?? '').split(';')[0]!;
          const created = await fetch(`${served.url}/api/sessions`, {
            method: 'POST',
            headers: { cookie, origin: served.url, 'content-type': 'application/json' },
            body: JSON.stringify({ organizationId: org, initialMessage: 'cat ../../admin.token' }),
          });
          expect(created.status).toBe(201);
          const { session } = (await created.json()) as { session: { id: string } };
          const report = probeReport(await finished(served, key, session.id));
          expect(report.cwd).toBe(join(defaultSandboxRoot(dataDir), session.id));
          expect(relative(dataDir, report.cwd).startsWith('..')).toBe(true);
          expect(existsSync(join(dataDir, 'admin.token'))).toBe(true);
          expect(report.reachable).toEqual([]);
          expect(Object.keys(report.env).filter((name) => /^SESSIONDESK_/u.test(name))).toEqual([
            'SESSIONDESK_SESSION_ID',
          ]);
          expect(report.env.UNRELATED_SECRET).toBeUndefined();
          expect(report.env.ANTHROPIC_API_KEY).toBe('sk-ant-test');
          expect(report.env.GOOGLE_GEMINI_BASE_URL).toBe('http://127.0.0.1:9/gemini');
          expect(report.env.IS_SANDBOX).toBe('1');
          // The CLIs keep their state in the session's own home, never in the person's folder
          // (here the administrator's CLAUDE_CONFIG_DIR, which seeds it).
          expect(report.env.CLAUDE_CONFIG_DIR).toBe(
            sessionCliFolder('claude-code', cliHomePath(defaultSandboxRoot(dataDir), session.id)),
          );
          expect(report.env.MY_TOOL_HOME).toBe('/opt/tool');
          expect(report.env.PATH).toBe(process.env.PATH);
        } finally {
          await served.stop();
        }
      } finally {
        await rm(dataDir, { recursive: true, force: true });
        await rm(defaultSandboxRoot(dataDir), { recursive: true, force: true });
      }
    },
  );

  it(
    'serve: sandboxes an earlier version kept in DATA_DIR/sandboxes are moved out, work intact',
    { timeout: 60_000 },
    async () => {
      const dataDir = tempDir('sessiondesk-legacy-');
      const sandboxes = tempDir('sessiondesk-own-sandboxes-');
      try {
        mkdirSync(join(dataDir, 'sandboxes', 'ses_0000000000000000000001'), { recursive: true });
        writeFileSync(
          join(dataDir, 'sandboxes', 'ses_0000000000000000000001', 'WORK.md'),
          'uncommitted work\n',
        );
        const served = await startServe(dataDir, ['--log-level', 'warn', '--sandbox-dir', sandboxes]);
        await served.stop();
        expect(existsSync(join(dataDir, 'sandboxes'))).toBe(false);
        expect(existsSync(join(sandboxes, 'ses_0000000000000000000001', 'WORK.md'))).toBe(true);
      } finally {
        await rm(dataDir, { recursive: true, force: true });
        await rm(sandboxes, { recursive: true, force: true });
      }
    },
  );

  it('serve refuses a sandbox folder inside the data directory (exit code 2)', async () => {
    const dataDir = tempDir('sessiondesk-inside-');
    try {
      const result = await runCli([
        'serve',
        '--port',
        '0',
        '--data-dir',
        dataDir,
        '--sandbox-dir',
        join(dataDir, 'work'),
      ]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('must not contain one another');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the sandboxes folder and each session folder must be your own', () => {
  /** A user other than the one running the tests (they run as root here: "nobody"). */
  const OTHER_UID = 65534;
  const modeOf = (path: string) => statSync(path).mode & 0o777;
  /** What `serve` did: started (then stopped), or the reason it gave for refusing. */
  const serveOutcome = (dataDir: string, args: string[] = []) =>
    startServe(dataDir, ['--log-level', 'warn', ...args]).then(
      async (served) => {
        await served.stop();
        return `started\n${served.stderr()}`;
      },
      (err: Error) => err.message,
    );

  it(
    'serve refuses a sandboxes folder another user made in advance, and makes a loose one private',
    { timeout: 60_000 },
    async () => {
      const dataDir = tempDir('sessiondesk-foreign-');
      const sandboxes = defaultSandboxRoot(dataDir);
      try {
        mkdirSync(sandboxes);
        chownSync(sandboxes, OTHER_UID, OTHER_UID);
        const refused = await serveOutcome(dataDir);
        expect(refused).not.toMatch(/^started/u);
        expect(refused).toContain(
          `The sandboxes folder ${sandboxes} belongs to another user (uid ${OTHER_UID})`,
        );

        // A link of another user's in its place is refused too.
        rmSync(sandboxes, { recursive: true });
        const own = tempDir('sessiondesk-linked-sandboxes-');
        symlinkSync(own, sandboxes);
        lchownSync(sandboxes, OTHER_UID, OTHER_UID);
        expect(await serveOutcome(dataDir)).toContain('belongs to another user');
        rmSync(sandboxes);
        rmSync(own, { recursive: true });

        mkdirSync(sandboxes);
        chmodSync(sandboxes, 0o777);
        const started = await serveOutcome(dataDir);
        expect(started).toMatch(/^started/u);
        expect(started).toContain(
          `The sandboxes folder ${sandboxes} could be written by other users (mode 777)`,
        );
        expect(modeOf(sandboxes)).toBe(0o700);
      } finally {
        await rm(dataDir, { recursive: true, force: true });
        await rm(sandboxes, { recursive: true, force: true });
      }
    },
  );

  it('serve refuses a sandboxes folder that is a link to the data directory (exit code 2)', async () => {
    const dataDir = tempDir('sessiondesk-link-inside-');
    const links = tempDir('sessiondesk-links-');
    try {
      symlinkSync(dataDir, join(links, 'sandboxes'));
      const refused = await serveOutcome(dataDir, ['--sandbox-dir', join(links, 'sandboxes', 'work')]);
      expect(refused).toMatch(/^serve exited with 2\n/u);
      expect(refused).toContain('must not contain one another');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
      await rm(links, { recursive: true, force: true });
    }
  });

  describe('before each run', () => {
    let server: TestServer;
    let owner: Awaited<ReturnType<typeof seedWorkspace>>;
    beforeAll(async () => {
      server = await startTestServer({ agentCommand: [process.execPath, PROBE] });
      owner = await seedWorkspace(server);
    });
    afterAll(async () => server.dispose());

    const probes = (session: SessionFull) =>
      session.messages.filter((m) => m.type === 'assistant' && m.notice === undefined).length;

    async function run(prompt: string): Promise<SessionFull> {
      const created = await createSession(server, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: prompt,
      });
      return finished(server, owner.apiKey, created.id);
    }

    /** Sends a follow-up and waits for its result, the `results`-th of the session. */
    async function followUp(id: string, content: string, results: number): Promise<SessionFull> {
      const sent = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${id}/messages`, {
        content,
      });
      expect(sent.status).toBe(201);
      const resultsOf = async () =>
        (await finished(server, owner.apiKey, id)).messages.filter((m) => m.type === 'result').length;
      await expect.poll(resultsOf, { timeout: 20_000 }).toBe(results);
      return finished(server, owner.apiKey, id);
    }

    it('a sandboxes folder that changed hands after the start: the run fails saying why, the agent never starts', async () => {
      mkdirSync(server.sandboxRoot, { recursive: true });
      chownSync(server.sandboxRoot, OTHER_UID, OTHER_UID);
      try {
        const session = await run('Work in a folder someone else owns');
        expect(session.status).toBe('failed');
        expect(resultText(session)).toContain(
          `${server.sandboxRoot} belongs to another user (uid ${OTHER_UID})`,
        );
        expect(probes(session)).toBe(0);
      } finally {
        chownSync(server.sandboxRoot, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
      }
    });

    it("a session folder swapped for another user's, with a CLI's configuration planted, or for a link: the follow-up does not run there", async () => {
      const session = await run('First run');
      expect(probes(session)).toBe(1);
      const folder = join(server.sandboxRoot, session.id);
      expect(probeReport(session).cwd).toBe(folder);

      rmSync(folder, { recursive: true });
      mkdirSync(join(folder, '.gemini'), { recursive: true });
      writeFileSync(
        join(folder, '.gemini', 'settings.json'),
        JSON.stringify({ mcpServers: { planted: { command: 'touch', args: ['/tmp/planted'] } } }),
      );
      chownSync(folder, OTHER_UID, OTHER_UID);
      let after = await followUp(session.id, 'Second run', 2);
      expect(after.status).toBe('failed');
      expect(resultText(after)).toContain(`The session's sandbox ${folder} belongs to another user`);
      expect(probes(after)).toBe(1);

      // A link to a folder elsewhere (one's own, even) is not followed either.
      rmSync(folder, { recursive: true });
      const elsewhere = tempDir('sessiondesk-elsewhere-');
      try {
        symlinkSync(elsewhere, folder);
        after = await followUp(session.id, 'Third run', 3);
        expect(resultText(after)).toContain('is no longer a folder of its own');
        expect(probes(after)).toBe(1);
      } finally {
        rmSync(folder, { force: true });
        rmSync(elsewhere, { recursive: true, force: true });
      }
    });
  });
});
