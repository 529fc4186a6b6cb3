import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import {
  KEY_PATTERN,
  PASSWORD,
  cliEmail,
  cliIn,
  ok,
  readServerJson,
  expectSessionsStatus,
  signInAt,
  useSandbox,
  workspacesOf,
} from '../helpers/cli-extra.js';

const sandbox = useSandbox();

interface KeySummary {
  id: string;
  organizationId: string;
  label: string;
  prefix: string;
  createdAt: string;
  lastUsedAt?: string;
}

describe('admin commands without a server', () => {
  it('create a user, a workspace and a key, list it, revoke it', async () => {
    const dataDir = sandbox.dataDir();
    const cli = cliIn(dataDir);
    const email = cliEmail('ada');

    const userId = await ok(
      cli(
        'user',
        'create',
        '--email',
        email,
        '--name',
        'Ada',
        '--password',
        PASSWORD,
        '--image-url',
        'https://example.test/ada.png',
      ),
    );
    expect(userId).toMatch(/^usr_[A-Za-z0-9_-]+$/u);

    const org = await ok(cli('workspace', 'create', '--name', 'Analytical', '--owner', email));
    expect(org).toMatch(/^org_[A-Za-z0-9_-]+$/u);

    const created = await cli('key', 'create', '--workspace', org, '--name', 'ci runner');
    expect(created.code).toBe(0);
    // The key and nothing else: scripts do `KEY=$(sessiondesk key create ...)`.
    expect(created.stdout).toMatch(/^sdk_[^\n]*\n$/u);
    const key = created.stdout.slice(0, -1);
    expect(key).toMatch(KEY_PATTERN);

    const table = await ok(cli('key', 'list', '--workspace', org));
    const [header, ...rows] = table.split('\n');
    expect(header).toMatch(/^ID\s+PREFIX\s+LABEL\s+CREATED\s+LAST USED\s+CREATED BY$/u);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain('ci runner');
    // Made with the command line: no member made it.
    expect(rows[0]).toMatch(/never\s+\(command line\)$/u);
    expect(rows[0]).not.toContain(key);

    const keys = JSON.parse(await ok(cli('key', 'list', '--workspace', org, '--json'))) as KeySummary[];
    expect(keys).toHaveLength(1);
    const [summary] = keys as [KeySummary];
    expect(summary).toMatchObject({ organizationId: org, label: 'ci runner' });
    expect(summary.id).toMatch(/^key_/u);
    expect(key.startsWith(summary.prefix)).toBe(true);
    expect(summary.prefix.length).toBeGreaterThanOrEqual(8);
    expect(summary.prefix.length).toBeLessThan(key.length);
    expect(summary).not.toHaveProperty('canApprove');
    expect(JSON.stringify(keys)).not.toContain(key);
    expect(rows[0]).toContain(summary.id);
    expect(rows[0]).toContain(summary.prefix);

    expect(await ok(cli('key', 'revoke', '--workspace', org, '--id', summary.id))).toContain(summary.id);

    expect(await ok(cli('key', 'list', '--workspace', org))).toBe('No active API keys.');

    // A key that may decide what agents ask, as an owner makes one in the dashboard.
    await ok(cli('key', 'create', '--workspace', org, '--name', 'inbox', '--can-approve'));
    const inbox = JSON.parse(await ok(cli('key', 'list', '--workspace', org, '--json'))) as KeySummary[];
    expect(inbox).toMatchObject([{ label: 'inbox', canApprove: true }]);

    // Each command released the data directory when it finished.
    expect(existsSync(join(dataDir, 'sessiondesk.lock'))).toBe(false);
  }, 90_000);

  it('run at the same time on one directory: each waits its turn, and no write is lost', async () => {
    const dataDir = sandbox.dataDir();
    const cli = cliIn(dataDir);
    const emails = [cliEmail('race'), cliEmail('race'), cliEmail('race')];
    const results = await Promise.all(
      emails.map((email) =>
        cli('user', 'create', '--email', email, '--name', 'Racer', '--password', PASSWORD),
      ),
    );
    for (const result of results) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^usr_[A-Za-z0-9_-]+\n$/u);
    }
    for (const email of emails) {
      const workspace = await cli('workspace', 'create', '--name', 'Race', '--owner', email);
      expect({ email, code: workspace.code }).toEqual({ email, code: 0 });
    }
  }, 90_000);
});

describe('invitations and passwords on the command line', () => {
  it('invite an email without an account, withdraw it; an account made for it joins; set-password ends its sign-ins', async () => {
    const dataDir = sandbox.dataDir();
    const cli = cliIn(dataDir);
    const owner = cliEmail('owner');
    await ok(cli('user', 'create', '--email', owner, '--name', 'Owner', '--password', PASSWORD));
    const org = await ok(cli('workspace', 'create', '--name', 'Team', '--owner', owner));
    const invitee = cliEmail('invitee');

    // No server: on the data directory itself.
    expect(await ok(cli('member', 'add', '--workspace', org, '--email', invitee))).toBe(
      `${invitee} has no account yet: invited to ${org}. They join it when they first sign in ` +
        '(through the identity provider, or once an account with this email is made).',
    );
    const twice = await cli('member', 'add', '--workspace', org, '--email', invitee);
    expect(twice).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`${invitee} is already invited to ${org}`),
    });
    expect(await ok(cli('member', 'remove', '--workspace', org, '--email', invitee))).toBe(
      `Withdrew the invitation of ${invitee} to ${org}`,
    );
    const gone = await cli('member', 'remove', '--workspace', org, '--email', invitee);
    expect(gone).toMatchObject({ code: 1, stderr: expect.stringContaining(`No user with email ${invitee}`) });
    await ok(cli('member', 'add', '--workspace', org, '--email', invitee));

    // Through a running server: the account made for the email takes up its invitation.
    const serve = await sandbox.serve(dataDir);
    await ok(cli('user', 'create', '--email', invitee, '--name', 'Invitee', '--password', PASSWORD));
    const cookie = await signInAt(serve.url, invitee);
    expect(await workspacesOf(serve.url, cookie)).toEqual([org]);

    const newPassword = 'another horse battery';
    expect(await ok(cli('user', 'set-password', '--email', invitee, '--password', newPassword))).toBe(
      `Set the password of ${invitee}; its sign-ins were ended`,
    );
    expect((await fetch(`${serve.url}/api/auth/me`, { headers: { cookie } })).status).toBe(401);
    await signInAt(serve.url, invitee, newPassword);
    const short = await cli('user', 'set-password', '--email', invitee, '--password', 'short');
    expect(short).toMatchObject({ code: 2, stderr: expect.stringContaining('at least 8 characters') });
  }, 90_000);
});

describe('SESSIONDESK_DATA_DIR', () => {
  it('is the data directory when --data-dir is absent, for admin commands and serve', async () => {
    const dataDir = sandbox.dataDir();
    const env = { SESSIONDESK_DATA_DIR: dataDir };
    const email = cliEmail('env');

    // No server yet: the command opens the directory from the environment itself.
    await ok(runCli(['user', 'create', '--email', email, '--name', 'Env', '--password', PASSWORD], env));

    // --data-dir wins over the environment: the user is not in this other directory.
    const elsewhere = sandbox.dataDir();
    const wrongDir = await runCli(
      ['workspace', 'create', '--name', 'W', '--owner', email, '--data-dir', elsewhere],
      env,
    );
    expect(wrongDir.code).toBe(1);
    expect(wrongDir.stderr).toContain(email);

    const serve = await sandbox.serveWithEnv(['--port', '0'], env);
    expect(readServerJson(dataDir)).toMatchObject({ url: serve.url, pid: serve.child.pid });

    // With the server up, the environment leads the command to it.
    const org = await ok(runCli(['workspace', 'create', '--name', 'W', '--owner', email], env));
    const key = await ok(runCli(['key', 'create', '--workspace', org], env));
    expect(key).toMatch(KEY_PATTERN);
    await expectSessionsStatus(serve, key, 200);

    expect(await serve.stop()).toBe(0);
  }, 90_000);
});
