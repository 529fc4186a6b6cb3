import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  KEY_PATTERN,
  PASSWORD,
  bogusKey,
  cliEmail,
  cliIn,
  ok,
  outputDrained,
  readLockPid,
  readServerJson,
  seedOwner,
  expectSessionsStatus,
  signInAt,
  useSandbox,
  waitFor,
  workspacesOf,
} from '../helpers/cli-extra.js';
import { launchCookie } from '../helpers/server.js';

const sandbox = useSandbox();

describe('admin commands while serve runs', () => {
  it('reach the running server, which sees every change at once, and the data survives a restart', async () => {
    const dataDir = sandbox.dataDir();
    const cli = cliIn(dataDir);
    const serve = await sandbox.serve(dataDir);
    const pid = serve.child.pid;

    expect(serve.stdout()).toContain(`Session Desk is running at ${serve.url}/?token=`);
    expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/u);
    const info = readServerJson(dataDir);
    expect(info).toMatchObject({ url: serve.url, host: '127.0.0.1', pid });
    expect(info.port).toBe(Number(new URL(serve.url).port));
    expect(statSync(join(dataDir, 'admin.token')).mode & 0o777).toBe(0o600);
    expect(readLockPid(dataDir)).toBe(pid);

    const memberEmail = cliEmail('member');
    const [owner] = await Promise.all([
      seedOwner(dataDir),
      ok(cli('user', 'create', '--email', memberEmail, '--name', 'Member', '--password', PASSWORD)),
    ]);
    // The users exist in the running server: they can sign in without a restart.
    const memberCookie = await signInAt(serve.url, memberEmail);
    expect(await workspacesOf(serve.url, memberCookie)).toEqual([]);

    const [revokedKey, keptKey] = await Promise.all([
      ok(cli('key', 'create', '--workspace', owner.org, '--name', 'to revoke')),
      ok(cli('key', 'create', '--workspace', owner.org, '--name', 'to keep')),
      ok(cli('member', 'add', '--workspace', owner.org, '--email', memberEmail)),
    ]);
    expect(revokedKey).toMatch(KEY_PATTERN);
    expect(keptKey).toMatch(KEY_PATTERN);

    expect(await expectSessionsStatus(serve, revokedKey, 200)).toMatchObject({
      sessions: [],
      stats: expect.any(Object),
    });
    await expectSessionsStatus(serve, keptKey, 200);
    expect(await workspacesOf(serve.url, memberCookie)).toEqual([owner.org]);

    const keys = JSON.parse(await ok(cli('key', 'list', '--workspace', owner.org, '--json'))) as Array<{
      id: string;
      label: string;
      lastUsedAt?: string;
    }>;
    expect(keys.map((k) => k.label).sort()).toEqual(['to keep', 'to revoke']);
    // Both were just used against the server that answers the listing.
    expect(keys.every((k) => typeof k.lastUsedAt === 'string')).toBe(true);
    const revokeId = keys.find((k) => k.label === 'to revoke')?.id ?? '';
    await ok(cli('key', 'revoke', '--workspace', owner.org, '--id', revokeId));
    await expectSessionsStatus(serve, revokedKey, 401);
    await expectSessionsStatus(serve, keptKey, 200);

    // The commands went through the server: it still runs and still holds the directory.
    expect(serve.child.exitCode).toBeNull();
    expect(readLockPid(dataDir)).toBe(pid);

    expect(await serve.stop()).toBe(0);
    expect(existsSync(join(dataDir, 'server.json'))).toBe(false);
    expect(existsSync(join(dataDir, 'admin.token'))).toBe(false);
    expect(existsSync(join(dataDir, 'sessiondesk.lock'))).toBe(false);

    // Without a server the command opens the directory and finds what the server stored.
    const afterStop = JSON.parse(await ok(cli('key', 'list', '--workspace', owner.org, '--json'))) as Array<{
      label: string;
    }>;
    expect(afterStop.map((k) => k.label)).toEqual(['to keep']);

    const again = await sandbox.serve(dataDir);
    expect(readServerJson(dataDir).pid).toBe(again.child.pid);
    await expectSessionsStatus(again, keptKey, 200);
    await expectSessionsStatus(again, revokedKey, 401);
    expect(await workspacesOf(again.url, await signInAt(again.url, memberEmail))).toEqual([owner.org]);
    expect(await workspacesOf(again.url, await signInAt(again.url, owner.email))).toEqual([owner.org]);
    expect(await again.stop()).toBe(0);
    expect(existsSync(join(dataDir, 'server.json'))).toBe(false);
  }, 120_000);
});

describe('serve killed without warning', () => {
  it('loses nothing it acknowledged, and the directory is usable again', async () => {
    const dataDir = sandbox.dataDir();
    const cli = cliIn(dataDir);
    const serve = await sandbox.serve(dataDir);
    const owner = await seedOwner(dataDir);
    const key = await ok(cli('key', 'create', '--workspace', owner.org, '--name', 'survivor'));
    await serve.kill();
    // SIGKILL: the files of the dead server are still there, naming a process that is gone.
    expect(readServerJson(dataDir).pid).toBe(serve.child.pid);

    const keys = JSON.parse(await ok(cli('key', 'list', '--workspace', owner.org, '--json'))) as Array<{
      label: string;
    }>;
    expect(keys.map((k) => k.label)).toEqual(['survivor']);

    const again = await sandbox.serve(dataDir);
    expect(readServerJson(dataDir).pid).toBe(again.child.pid);
    await expectSessionsStatus(again, key, 200);
    expect(await again.stop()).toBe(0);
  }, 90_000);
});

describe('the request log of serve', () => {
  it('never shows a key sent in the apiKey query parameter', async () => {
    const dataDir = sandbox.dataDir();
    const serve = await sandbox.serve(dataDir, ['--log-level', 'debug', '--log-format', 'json']);
    const owner = await seedOwner(dataDir);
    const realKey = await ok(cliIn(dataDir)('key', 'create', '--workspace', owner.org));
    const fakeKey = bogusKey();

    const good = await fetch(`${serve.url}/api/sessions?apiKey=${realKey}`);
    expect(good.status).toBe(200);
    const bad = await fetch(`${serve.url}/api/sessions?limit=5&apiKey=${fakeKey}`);
    expect(bad.status).toBe(401);

    const requestLines = () =>
      serve
        .stderr()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg?: string; url?: string });
    await waitFor(
      () => requestLines().filter((l) => l.url?.includes('apiKey=')).length >= 2,
      'both requests in the log',
    );

    expect(await serve.stop()).toBe(0);
    await outputDrained(serve.child);
    const output = serve.stdout() + serve.stderr();
    expect(output).not.toContain(realKey);
    expect(output).not.toContain(fakeKey);
    // Neither is any long piece of them (a key cut in two would still leak).
    expect(output).not.toContain(realKey.slice(12));
    expect(output).not.toContain(fakeKey.slice(12));

    const urls = requestLines().flatMap((l) => (l.url ? [l.url] : []));
    expect(urls).toContain('/api/sessions?apiKey=[redacted]');
    expect(urls).toContain('/api/sessions?limit=5&apiKey=[redacted]');
  }, 90_000);
});

describe('serve stopped the moment it prints its URL', () => {
  it('stops cleanly: a script may signal as soon as it reads the first line', async () => {
    const dataDir = sandbox.dataDir();
    // Each round is a race the server must win every time; a few rounds make a lost one show.
    for (let round = 0; round < 3; round += 1) {
      const serve = await sandbox.serve(dataDir);
      expect(await serve.stop(), `round ${round + 1}`).toBe(0);
      expect(existsSync(join(dataDir, 'sessiondesk.lock'))).toBe(false);
      expect(existsSync(join(dataDir, 'server.json'))).toBe(false);
    }
  }, 90_000);
});

describe('serve whose output is no longer read', () => {
  it('still stops cleanly, though it cannot say so', async () => {
    const dataDir = sandbox.dataDir();
    const serve = await sandbox.serve(dataDir);
    // As when the reader of a pipe (`| head`, a logger, a terminal) has gone away.
    serve.child.stderr?.destroy();
    serve.child.stdout?.destroy();
    expect(await serve.stop()).toBe(0);
    expect(existsSync(join(dataDir, 'sessiondesk.lock'))).toBe(false);
    expect(existsSync(join(dataDir, 'server.json'))).toBe(false);
  }, 60_000);
});

describe('the launch token serve prints', () => {
  it('is in the printed URL only, new at every start, and is what setup needs', async () => {
    const dataDir = sandbox.dataDir();
    const serve = await sandbox.serve(dataDir, ['--log-level', 'debug']);
    const token = serve.launchToken;
    // 256 random bits, base64url.
    expect(token).toMatch(/^[\w-]{43}$/u);
    const files = ['server.json', 'admin.token'].map((name) => readFileSync(join(dataDir, name), 'utf8'));
    for (const text of files) expect(text).not.toContain(token);

    const setup = (cookie?: string) =>
      fetch(`${serve.url}/api/setup`, {
        method: 'POST',
        headers: {
          origin: serve.url,
          'content-type': 'application/json',
          ...(cookie === undefined ? {} : { cookie }),
        },
        body: JSON.stringify({
          email: cliEmail('first'),
          name: 'First',
          password: PASSWORD,
          workspaceName: 'Mine',
        }),
      });
    const refused = await setup();
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('open the URL \\"sessiondesk serve\\" printed');
    // Opening the printed URL: the page is served, and its request is logged without the token.
    expect((await fetch(serve.launchUrl)).status).toBe(200);
    expect((await setup(await launchCookie(serve))).status).toBe(201);
    await waitFor(() => serve.stderr().includes('token=[redacted]'), 'the page request in the log');
    expect(await serve.stop()).toBe(0);
    await outputDrained(serve.child);
    expect(serve.stderr()).not.toContain(token);

    const again = await sandbox.serve(dataDir);
    expect(again.launchToken).toMatch(/^[\w-]{43}$/u);
    expect(again.launchToken).not.toBe(token);
    const stale = await fetch(`${again.url}/api/auth/launch`, {
      method: 'POST',
      headers: { origin: again.url, 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    expect(stale.status).toBe(403);
    expect(await again.stop()).toBe(0);
  }, 90_000);
});
