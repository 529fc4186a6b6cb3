import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.js';
import { PASSWORD, cliEmail, cliIn, ok, seedOwner, signInAt, useSandbox } from '../helpers/cli-extra.js';
import { sqljsOnly } from '../helpers/require-tools.js';

const sandbox = useSandbox();
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe("finding one's way on the command line", () => {
  it('--version prints the version', async () => {
    for (const flag of ['--version', '-V', '-v']) {
      const result = await runCli([flag]);
      expect(result).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    }
  });

  it('a mistyped command or option is met with what was probably meant', async () => {
    const command = await runCli(['servee']);
    expect(command.code).toBe(2);
    expect(command.stderr).toMatch(
      /^sessiondesk: unknown command "servee" \(did you mean "sessiondesk serve"\?\)/u,
    );
    const option = await runCli(['serve', '--prot', '5000']);
    expect(option.code).toBe(2);
    expect(option.stderr).toMatch(/^sessiondesk: unknown option --prot \(did you mean --port\?\)/u);
    const group = await runCli(['kye', 'list']);
    expect(group.stderr).toMatch(/did you mean "sessiondesk key list"\?/u);
    // Nothing near: no guess.
    const far = await runCli(['frobnicate']);
    expect(far.stderr).toMatch(/^sessiondesk: unknown command "frobnicate"\n/u);
  });

  it('every command and every group answers --help', async () => {
    const commands = [
      'serve',
      'user create',
      'user list',
      'user set-password',
      'workspace create',
      'workspace list',
      'member add',
      'member remove',
      'key create',
      'key list',
      'key revoke',
      'export',
      'import',
      'backup',
      'restore',
      'doctor',
      'push',
    ];
    for (const command of commands) {
      const result = await runCli([...command.split(' '), '--help']);
      expect(result.code, command).toBe(0);
      expect(result.stdout, command).toContain(`Usage: sessiondesk ${command}`);
    }
    for (const group of ['user', 'workspace', 'member', 'key']) {
      const help = await runCli([group, '--help']);
      expect(help.code, group).toBe(0);
      expect(help.stdout).toContain(`Usage: sessiondesk ${group} <command>`);
      expect(help.stderr).toBe('');
      const bare = await runCli([group]);
      expect(bare.code, group).toBe(2);
      expect(bare.stderr).toContain(`"${group}" needs a command`);
    }
    const key = await runCli(['key', '--help']);
    for (const sub of ['key create', 'key list', 'key revoke']) expect(key.stdout).toContain(sub);
  }, 180_000);

  it('a port that is not a number says so', async () => {
    const abc = await runCli(['serve', '--port', 'abc', '--data-dir', sandbox.dataDir()]);
    expect(abc.code).toBe(2);
    expect(abc.stderr).toContain('--port must be a number, not "abc"');
    const big = await runCli(['serve', '--port', '70000', '--data-dir', sandbox.dataDir()]);
    expect(big.code).toBe(2);
    expect(big.stderr).toContain('--port must be 0 to 65535, not 70000');
  });
});

describe('user list, workspace list and member remove', () => {
  async function exercise(dataDir: string) {
    const cli = cliIn(dataDir);
    const owner = await seedOwner(dataDir);
    const member = cliEmail('member');
    await ok(cli('user', 'create', '--email', member, '--name', 'Mem Ber', '--password', PASSWORD));
    await ok(cli('member', 'add', '--workspace', owner.org, '--email', member));

    const users = JSON.parse(await ok(cli('user', 'list', '--json'))) as Array<{
      email: string;
      workspaces: number;
    }>;
    expect(users.map((u) => [u.email, u.workspaces])).toEqual([
      [owner.email, 1],
      [member, 1],
    ]);
    const table = await ok(cli('user', 'list'));
    expect(table.split('\n')[0]).toMatch(/^ID\s+EMAIL\s+NAME\s+WORKSPACES\s+CREATED$/u);
    expect(table).toContain('Mem Ber');

    const workspaces = JSON.parse(await ok(cli('workspace', 'list', '--json'))) as Array<{
      organizationId: string;
      owners: string[];
      members: number;
      sessions: number;
    }>;
    expect(workspaces).toEqual([
      expect.objectContaining({ organizationId: owner.org, owners: [owner.email], members: 2, sessions: 0 }),
    ]);
    expect(await ok(cli('workspace', 'list'))).toContain(owner.org);

    expect(await ok(cli('member', 'remove', '--workspace', owner.org, '--email', member.toUpperCase()))).toBe(
      `${member} is no longer a member of ${owner.org}`,
    );
    const again = await cli('member', 'remove', '--workspace', owner.org, '--email', member);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('not a member');
    const last = await cli('member', 'remove', '--workspace', owner.org, '--email', owner.email);
    expect(last.code).toBe(1);
    expect(last.stderr).toContain('last owner');
    const missing = await cli('member', 'remove', '--workspace', owner.org);
    expect(missing.code).toBe(2);
    return { owner, member };
  }

  it('work on a data directory', async () => {
    await exercise(sandbox.dataDir());
  }, 180_000);

  it('work through a running server, which sees the removal at once', async () => {
    const dataDir = sandbox.dataDir();
    const serve = await sandbox.serve(dataDir);
    const { owner, member } = await exercise(dataDir);
    const cookie = await signInAt(serve.url, member);
    const response = await fetch(`${serve.url}/api/sessions?organizationId=${owner.org}`, {
      headers: { cookie },
    });
    expect(response.status).toBe(403);
  }, 180_000);
});

describe('what serve prints', () => {
  it(
    'by default: a readable banner, no request log, and how to begin',
    {
      timeout: 60_000,
      ...sqljsOnly(
        "a desktop's banner names its data directory; a team server's names its database (team-server.test.ts)",
      ),
    },
    async () => {
      const dataDir = sandbox.dataDir();
      const serve = await sandbox.serve(dataDir);
      await expect.poll(() => serve.stdout()).toContain('Stop with Ctrl+C.');
      const lines = serve.stdout().split('\n');
      expect(lines[0]).toBe(`Session Desk is running at ${serve.url}/?token=${serve.launchToken}`);
      expect(lines[1]).toBe(`Data directory: ${dataDir}`);
      expect(lines[2]).toBe(
        'No account yet: open the URL (with its token) to create the owner account and a first workspace.',
      );
      expect(lines[3]).toBe(
        'Logging sessions, sign-ins, refused requests and errors to stderr (every request: --log-level debug). Stop with Ctrl+C.',
      );
      for (let i = 0; i < 5; i += 1) expect((await fetch(`${serve.url}/api/setup`)).status).toBe(200);
      expect(await serve.stop()).toBe(0);
      expect(serve.stderr()).not.toMatch(/^\{/mu);
      expect(serve.stderr()).not.toContain('migration');
    },
  );

  it('with --log-level debug --log-format json: every request as a JSON line', async () => {
    const serve = await sandbox.serve(sandbox.dataDir(), ['--log-level', 'debug', '--log-format', 'json']);
    expect((await fetch(`${serve.url}/api/setup`)).status).toBe(200);
    await expect
      .poll(
        () =>
          serve
            .stderr()
            .split('\n')
            .filter((l) => l.startsWith('{') && l.includes('/api/setup')).length,
      )
      .toBeGreaterThan(0);
  }, 60_000);

  it('once an account exists, says to sign in', async () => {
    const dataDir = sandbox.dataDir();
    await seedOwner(dataDir);
    const serve = await sandbox.serve(dataDir);
    await expect.poll(() => serve.stdout()).toContain('Sign in at the URL with your account');
    expect(serve.stdout()).not.toContain('create the owner account');
  }, 60_000);
});
