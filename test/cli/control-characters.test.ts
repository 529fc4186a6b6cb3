import { describe, expect, it } from 'vitest';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { Store } from '../../src-main/store/store.js';
import { cliIn, ok, seedOwner, useSandbox } from '../helpers/cli-extra.js';
import { asUser, seedWorkspace, startTestServer } from '../helpers/server.js';
import { sqljsOnly } from '../helpers/require-tools.js';

const sandbox = useSandbox();
/** What a hostile name would send to an administrator's terminal: a title change and red text. */
const ESCAPES = 'Acme\u001b]0;pwned\u0007\u001b[31m';

describe('names and labels with control characters', { timeout: 90_000 }, () => {
  it('are refused by the CLI and the API', async () => {
    const dataDir = sandbox.dataDir();
    const cli = cliIn(dataDir);
    const { email, org } = await seedOwner(dataDir);
    for (const args of [
      ['workspace', 'create', '--name', ESCAPES, '--owner', email],
      ['key', 'create', '--workspace', org, '--name', `ci${'\u001b[2J'}`],
      [
        'user',
        'create',
        '--email',
        'eve@example.test',
        '--name',
        `Eve${'\u202e'}gnp.exe`,
        '--password',
        'correct horse battery',
      ],
    ]) {
      const result = await cli(...args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain('must not contain control characters');
    }

    const server = await startTestServer();
    try {
      const owner = await seedWorkspace(server, 'owner');
      const workspace = await asUser(server, owner.user.cookie, 'POST', '/api/workspaces', { name: ESCAPES });
      expect(workspace.status).toBe(400);
      const key = await asUser(
        server,
        owner.user.cookie,
        'POST',
        `/api/workspaces/${owner.organizationId}/keys`,
        {
          label: 'deploy\u001b[8m',
        },
      );
      expect(key.status).toBe(400);
      expect(
        ((await key.json()) as { error: { details: Array<{ message: string }> } }).error.details[0]!.message,
      ).toContain('must not contain control characters');
    } finally {
      await server.dispose();
    }
  });

  it(
    'stored before they were refused, print escaped in the CLI tables',
    sqljsOnly('writes the sql.js store itself, as an older version would have'),
    async () => {
      const dataDir = sandbox.dataDir();
      const { org } = await seedOwner(dataDir);
      await ok(cliIn(dataDir)('key', 'create', '--workspace', org, '--name', 'deploy'));
      // An older version accepted them: put them in the store as it would have.
      const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
      await store.write(() => {
        store.db.run('UPDATE workspaces SET name = ? WHERE id = ?', [ESCAPES, org]);
        store.db.run('UPDATE api_keys SET label = ? WHERE workspace_id = ?', ['deploy\u001b[2J', org]);
      });
      await store.close();

      const workspaces = await ok(cliIn(dataDir)('workspace', 'list'));
      const keys = await ok(cliIn(dataDir)('key', 'list', '--workspace', org));
      // No control character reaches the terminal but the newlines between rows.
      const controls = (text: string) => [...text].filter((c) => c !== '\n' && /\p{Cc}/u.test(c));
      for (const table of [workspaces, keys]) expect(controls(table)).toEqual([]);
      expect(workspaces).toContain('Acme\\u{1b}]0;pwned\\u{7}\\u{1b}[31m');
      expect(keys).toContain('deploy\\u{1b}[2J');
    },
  );
});
