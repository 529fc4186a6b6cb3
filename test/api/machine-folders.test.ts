import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { seedImported } from '../helpers/imported.js';
import { asUser, seedWorkspace, startTestServer, tempDir, type TestServer } from '../helpers/server.js';

/**
 * What of the machine an account reaches: only the administrator (the account created first)
 * adds a folder as a history source or sends an agent into a person's own folder, and then only
 * into the folder confirmed, never the home, the whole disk, Session Desk's data or a CLI's own
 * folder.
 */
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function twoOwners(): Promise<{
  server: TestServer;
  home: string;
  admin: Awaited<ReturnType<typeof seedWorkspace>>;
  other: Awaited<ReturnType<typeof seedWorkspace>>;
}> {
  const home = tempDir('machine-folders-home-');
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  const server = await startTestServer({ agentEnv: { PATH: process.env.PATH, HOME: home } });
  cleanups.push(() => server.dispose());
  const admin = await seedWorkspace(server, 'admin');
  const other = await seedWorkspace(server, 'other');
  return { server, home, admin, other };
}

const messageOf = async (response: Response) =>
  ((await response.json()) as { error: { message: string } }).error.message;

describe('folders of the machine', () => {
  it(
    'only the administrator adds a history source; another owner is refused and is offered none',
    { timeout: 90_000 },
    async () => {
      const { server, home, admin, other } = await twoOwners();
      const administrator = async (actor: typeof admin) =>
        (
          (await (await asUser(server, actor.user.cookie, 'GET', '/api/auth/me')).json()) as {
            administrator: boolean;
          }
        ).administrator;
      expect(await administrator(admin)).toBe(true);
      expect(await administrator(other)).toBe(false);
      const root = join(home, 'codex-history');
      cpSync(join(ROOT, 'test', 'fixtures', 'history', 'codex', '0.169.0', 'plain-answer'), root, {
        recursive: true,
      });
      // The other owner names the person's home as a CLI folder, as an attack would.
      const refused = await asUser(
        server,
        other.user.cookie,
        'POST',
        `/api/workspaces/${other.organizationId}/history-sources`,
        { kind: 'codex', rootDir: root },
      );
      expect(refused.status).toBe(403);
      expect(await messageOf(refused)).toContain('Only the administrator');
      const listed = await asUser(
        server,
        other.user.cookie,
        'GET',
        `/api/workspaces/${other.organizationId}/history-sources`,
      );
      expect(((await listed.json()) as { sources: unknown[]; found: unknown[] }).found).toEqual([]);
      const sessions = await asUser(
        server,
        other.user.cookie,
        'GET',
        `/api/sessions?organizationId=${other.organizationId}`,
      );
      expect(((await sessions.json()) as { sessions: unknown[] }).sessions).toEqual([]);

      const added = await asUser(
        server,
        admin.user.cookie,
        'POST',
        `/api/workspaces/${admin.organizationId}/history-sources`,
        { kind: 'codex', rootDir: root },
      );
      expect(added.status).toBe(201);
    },
  );

  it(
    "an agent goes into a person's folder only for the administrator, only into the folder confirmed, never a folder too wide",
    { timeout: 90_000 },
    async () => {
      const { server, home, admin, other } = await twoOwners();
      const work = join(home, 'work', 'widgets');
      mkdirSync(work, { recursive: true });
      const send = (actor: typeof admin, id: string, body: Record<string, unknown>) =>
        asUser(server, actor.user.cookie, 'POST', `/api/sessions/${id}/messages`, {
          content: 'Go on',
          ...body,
        });

      const theirs = await seedImported(server, other, work);
      const notAdministrator = await send(other, theirs, { continueIn: 'original', continueFolder: work });
      expect(notAdministrator.status).toBe(403);
      expect(await messageOf(notAdministrator)).toContain('Only the administrator');

      const mine = await seedImported(server, admin, work);
      const unconfirmed = await send(admin, mine, { continueIn: 'original' });
      expect(unconfirmed.status).toBe(400);
      expect(await messageOf(unconfirmed)).toContain(JSON.stringify(work));
      const another = await send(admin, mine, { continueIn: 'original', continueFolder: join(home, 'work') });
      expect(another.status).toBe(409);
      expect(await messageOf(another)).toContain('is not the one this session runs in');
      const misplaced = await send(admin, mine, { continueIn: 'sandbox', continueFolder: work });
      expect(misplaced.status).toBe(400);

      mkdirSync(join(home, '.claude', 'projects'), { recursive: true });
      const tooWide: [string, RegExp][] = [
        ['/', /the root of the file system/u],
        [home, /your home folder or holds it/u],
        [dirname(home), /your home folder or holds it/u],
        [join(home, '.claude', 'projects'), /lies in Claude Code's own folder/u],
        [server.dataDir, /lies in Session Desk's data directory/u],
      ];
      for (const [folder, why] of tooWide) {
        const id = await seedImported(server, admin, folder);
        const refused = await send(admin, id, { continueIn: 'original', continueFolder: folder });
        expect(refused.status, folder).toBe(409);
        expect(await messageOf(refused), folder).toMatch(why);
      }
    },
  );
});
