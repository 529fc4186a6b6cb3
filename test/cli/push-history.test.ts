// History imported by `sessiondesk history import` with no server running, then pushed: a
// session whose file went quiet goes to the team server as the follower would have settled
// it, never as still going on.
import { cpSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Stats } from '../../src-shared/sessions.js';
import { ROOT, runCli } from '../helpers/cli.js';
import { historyImportIn, ok, seedOwner, useSandbox } from '../helpers/cli-extra.js';
import { seedWorkspace, startTestServer, withKey, type TestServer } from '../helpers/server.js';

const sandbox = useSandbox();
const teams: TestServer[] = [];
afterEach(async () => {
  for (const team of teams.splice(0)) await team.dispose();
});

/** A file written a minute ago or less is a session going on (the follower's rule). */
const ACTIVE = { SESSIONDESK_HISTORY_ACTIVE_WITHIN_MS: '60000' };

/** A copy of a recorded Claude Code session whose file was just written, as one going on. */
function claudeRoot(): { root: string; files: string[] } {
  const root = join(sandbox.dataDir(), 'claude');
  cpSync(join(ROOT, 'test', 'fixtures', 'history', 'claude-code', '2.1.330', 'plain-answer'), root, {
    recursive: true,
  });
  const files = (function walk(dir: string): string[] {
    return readdirSync(dir).flatMap((name) =>
      statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : [join(dir, name)],
    );
  })(root);
  const now = new Date();
  for (const file of files) utimesSync(file, now, now);
  return { root, files };
}

/** Its files last written an hour ago: the session ended then. */
function quiet(files: string[]): void {
  const anHourAgo = new Date(Date.now() - 3_600_000);
  for (const file of files) utimesSync(file, anHourAgo, anHourAgo);
}

async function team() {
  const server = await startTestServer();
  teams.push(server);
  const owner = await seedWorkspace(server, 'team');
  const pushKey = await server.accounts.createKey({ organizationId: owner.organizationId, pushOnly: true });
  return { server, owner, pushKey: pushKey.key };
}

/** The team's sessions and stats, as a member's key reads them. */
async function teamList(server: TestServer, apiKey: string) {
  const response = await withKey(server, apiKey, 'GET', '/api/sessions');
  expect(response.status).toBe(200);
  return (await response.json()) as { sessions: { id: string; status: string }[]; stats: Stats };
}

/** The desktop's sessions as its export has them. */
async function localStatuses(dataDir: string, org: string): Promise<string[]> {
  const text = await ok(runCli(['export', '--workspace', org, '--data-dir', dataDir]));
  return text
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; status?: string })
    .filter((record) => record.type === 'session')
    .map((record) => record.status!);
}

describe('history imported with no server running, then pushed', () => {
  it('a session whose file went quiet is pushed settled, and one pushed while going on is settled on the team server by the next push', async () => {
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const { root, files } = claudeRoot();
    await ok(historyImportIn(dataDir, sandbox.dataDir(), ACTIVE)('--workspace', org, '--claude-dir', root));
    expect(await localStatuses(dataDir, org)).toEqual(['active']);
    const { server, owner, pushKey } = await team();
    const push = () => runCli(['push', '--to', server.url, '--key', pushKey, '--data-dir', dataDir], ACTIVE);

    // Its file was written a moment ago: it is going on, here as on the team server.
    const first = await push();
    expect(first.code, first.stderr).toBe(0);
    let listed = await teamList(server, owner.apiKey);
    expect(listed.sessions.map((s) => s.status)).toEqual(['active']);
    expect(listed.stats.humansPromptingNow).toBe(1);

    // Its CLI wrote nothing since: a running server's follower would have settled it. No
    // server ran; the push does what it would have done, and sends the status alone.
    quiet(files);
    const second = await push();
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('pushed 1 session (0 new messages)');
    listed = await teamList(server, owner.apiKey);
    expect(listed.sessions.map((s) => s.status)).toEqual(['completed']);
    expect(listed.stats.humansPromptingNow).toBe(0);
    expect(await localStatuses(dataDir, org)).toEqual(['completed']);

    const third = await push();
    expect(third.stdout).toContain('pushed 0 sessions (0 new messages)');
  }, 120_000);

  it('imported while going on and pushed only after it ended: it arrives completed', async () => {
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const { root, files } = claudeRoot();
    await ok(historyImportIn(dataDir, sandbox.dataDir(), ACTIVE)('--workspace', org, '--claude-dir', root));
    quiet(files);
    const { server, owner, pushKey } = await team();
    const pushed = await runCli(
      ['push', '--to', server.url, '--key', pushKey, '--data-dir', dataDir],
      ACTIVE,
    );
    expect(pushed.code, pushed.stderr).toBe(0);
    const listed = await teamList(server, owner.apiKey);
    expect(listed.sessions.map((s) => s.status)).toEqual(['completed']);
    expect(listed.stats.humansPromptingNow).toBe(0);
  }, 120_000);
});
