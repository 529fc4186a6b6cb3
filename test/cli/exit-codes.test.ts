import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import {
  PASSWORD,
  cliEmail,
  cliIn,
  occupyPort,
  ok,
  readLockPid,
  readServerJson,
  seedOwner,
  useSandbox,
} from '../helpers/cli-extra.js';

const sandbox = useSandbox();

/** Each command with the first line of its usage text. */
const COMMANDS: Array<[string[], string]> = [
  [['serve'], 'Usage: sessiondesk serve '],
  [['user', 'create'], 'Usage: sessiondesk user create '],
  [['workspace', 'create'], 'Usage: sessiondesk workspace create '],
  [['member', 'add'], 'Usage: sessiondesk member add '],
  [['key', 'create'], 'Usage: sessiondesk key create '],
  [['key', 'list'], 'Usage: sessiondesk key list '],
  [['key', 'revoke'], 'Usage: sessiondesk key revoke '],
  [['export'], 'Usage: sessiondesk export '],
  [['import'], 'Usage: sessiondesk import '],
  [['backup'], 'Usage: sessiondesk backup '],
  [['restore'], 'Usage: sessiondesk restore '],
  [['doctor'], 'Usage: sessiondesk doctor '],
];

describe('--help', () => {
  it('prints each command’s usage on stdout and exits 0', async () => {
    const dataDir = sandbox.dataDir();
    const results = await Promise.all(
      COMMANDS.map(([command]) => runCli([...command, '--help', '--data-dir', dataDir])),
    );
    results.forEach((result, i) => {
      const [command, usage] = COMMANDS[i] as [string[], string];
      expect({ command, code: result.code, stderr: result.stderr }).toEqual({ command, code: 0, stderr: '' });
      expect(result.stdout.startsWith(usage)).toBe(true);
      expect(result.stdout).toContain('--data-dir');
    });
    // Asking for help touches no data, not even to create the database.
    expect(readdirSync(dataDir)).toEqual([]);
  }, 90_000);
});

describe('bad usage exits 2 with the message and the usage text on stderr', () => {
  it.each<[string, string[], RegExp, string]>([
    [
      'an unknown command',
      ['frobnicate', 'now'],
      /unknown command "frobnicate now"/u,
      'Usage: sessiondesk <command>',
    ],
    [
      'an unknown option',
      ['key', 'list', '--workspace', 'org_x', '--colour', 'red'],
      /--colour/u,
      'Usage: sessiondesk key list ',
    ],
    [
      'a missing required option',
      ['user', 'create', '--email', 'a@example.test', '--password', PASSWORD],
      /missing --name/u,
      'Usage: sessiondesk user create ',
    ],
    [
      'an invalid email',
      ['user', 'create', '--email', 'not-an-email', '--name', 'N', '--password', PASSWORD],
      /email must be an email address/u,
      'Usage: sessiondesk user create ',
    ],
    [
      'a password shorter than 8 characters',
      ['user', 'create', '--email', 'short@example.test', '--name', 'N', '--password', '1234567'],
      /password must be at least 8 characters/u,
      'Usage: sessiondesk user create ',
    ],
    [
      'a host that is not loopback',
      ['serve', '--host', '0.0.0.0', '--port', '0'],
      /--host 0\.0\.0\.0 is not a loopback address: a server other machines reach needs --database and --public-url/u,
      'Usage: sessiondesk serve ',
    ],
    [
      'a host that is not loopback, with a public URL but no team database',
      ['serve', '--host', '0.0.0.0', '--port', '0', '--public-url', 'https://team.example.com'],
      /needs --database and --public-url/u,
      'Usage: sessiondesk serve ',
    ],
    [
      'a public URL over plain http to another machine',
      ['serve', '--port', '0', '--public-url', 'http://team.example.com'],
      /the public URL must be https:\/\/HOST\[:PORT\] \(http:\/\/ only for 127\.0\.0\.1 or localhost\)/u,
      'Usage: sessiondesk serve ',
    ],
    [
      'a public URL with a path',
      ['serve', '--port', '0', '--public-url', 'https://example.com/sessiondesk'],
      /without a path, query or fragment: https:\/\/example\.com/u,
      'Usage: sessiondesk serve ',
    ],
    [
      'a trusted proxy that is not an address',
      ['serve', '--port', '0', '--trust-proxy', '10.0.0.1,nginx'],
      /--trust-proxy takes IP addresses, ranges \(ADDR\/BITS\) and "loopback", not "nginx"/u,
      'Usage: sessiondesk serve ',
    ],
    [
      'a trusted range too wide for its family',
      ['serve', '--port', '0', '--trust-proxy', '10.0.0.0/33'],
      /not "10\.0\.0\.0\/33"/u,
      'Usage: sessiondesk serve ',
    ],
  ])('%s', async (_name, args, message, usage) => {
    const dataDir = sandbox.dataDir();
    // No team database, on either pass: each of these is refused for its options alone (and one
    // would otherwise be given a database and a public URL, and start).
    const result = await runCli([...args, '--data-dir', dataDir], { SESSIONDESK_DATABASE_URL: '' });
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain(usage);
    // Refused before anything was opened or written.
    expect(readdirSync(dataDir)).toEqual([]);
  });
});

describe('runtime failures exit 1 with a message on stderr', () => {
  it('a duplicate email, and a key for an unknown workspace', async () => {
    const dataDir = sandbox.dataDir();
    const cli = cliIn(dataDir);
    const { email } = await seedOwner(dataDir);

    const duplicate = await cli(
      'user',
      'create',
      '--email',
      email.toUpperCase(),
      '--name',
      'Again',
      '--password',
      PASSWORD,
    );
    expect({ code: duplicate.code, stdout: duplicate.stdout }).toEqual({ code: 1, stdout: '' });
    expect(duplicate.stderr).toMatch(/^sessiondesk: .*\S/u);
    expect(duplicate.stderr).not.toContain('Usage:');
    expect(duplicate.stderr).not.toMatch(/\bat .*\.ts:\d+/u);

    const unknown = await cli('key', 'create', '--workspace', 'org_doesnotexist');
    expect({ code: unknown.code, stdout: unknown.stdout }).toEqual({ code: 1, stdout: '' });
    expect(unknown.stderr).toContain('org_doesnotexist');
    expect(unknown.stderr).not.toContain('Usage:');
  }, 90_000);

  it('serve on a port in use: one line naming the port, nothing left behind', async () => {
    const dataDir = sandbox.dataDir();
    // A directory that already has its database, so the only output is the error.
    await seedOwner(dataDir);
    const blocker = await occupyPort();
    sandbox.defer(blocker.close);

    const result = await runCli(['serve', '--port', String(blocker.port), '--data-dir', dataDir]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' });
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(String(blocker.port));
    expect(lines[0]).toMatch(/in use/u);
    expect(existsSync(join(dataDir, 'server.json'))).toBe(false);
    expect(existsSync(join(dataDir, 'admin.token'))).toBe(false);
    expect(existsSync(join(dataDir, 'sessiondesk.lock'))).toBe(false);
  }, 90_000);

  it('serve on a port in use with a new data directory: one line, and no directory is made', async () => {
    const dataDir = join(sandbox.dataDir(), 'not-yet');
    const blocker = await occupyPort();
    sandbox.defer(blocker.close);

    const result = await runCli(['serve', '--port', String(blocker.port), '--data-dir', dataDir]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' });
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(String(blocker.port));
    expect(lines[0]).toMatch(/in use/u);
    expect(existsSync(dataDir)).toBe(false);
  }, 90_000);

  it('a second serve on the same data directory names the first one’s pid and leaves it running', async () => {
    const dataDir = sandbox.dataDir();
    const first = await sandbox.serve(dataDir);
    const pid = String(first.child.pid);

    const second = await runCli(['serve', '--port', '0', '--data-dir', dataDir]);
    expect({ code: second.code, stdout: second.stdout }).toEqual({ code: 1, stdout: '' });
    expect(second.stderr).toMatch(new RegExp(`\\b${pid}\\b`, 'u'));
    expect(second.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(second.stderr).not.toContain('Usage:');

    expect(first.child.exitCode).toBeNull();
    expect(readServerJson(dataDir)).toMatchObject({ url: first.url, pid: first.child.pid });
    expect((await fetch(`${first.url}/api/openapi.json`)).status).toBe(200);
    // The first server's files were not touched, so the CLI still reaches it.
    await ok(
      cliIn(dataDir)('user', 'create', '--email', cliEmail('late'), '--name', 'Late', '--password', PASSWORD),
    );
    expect(readLockPid(dataDir)).toBe(first.child.pid);
    expect(await first.stop()).toBe(0);
  }, 90_000);
});
