// Sessions a team server on PostgreSQL receives: pushed by `sessiondesk push` from a real
// desktop data directory, and imported by `sessiondesk import` through the server's own data
// directory; the real CLI, a real `serve --database` process, a real cluster.
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { FullSessionResponseSchema, ListSessionsResponseSchema } from '../../src-shared/sessions.js';
import { connect } from '../../src-main/store-postgres/connect.js';
import { runCli } from '../helpers/cli.js';
import { useSandbox } from '../helpers/cli-extra.js';
import {
  answer,
  desktopDataDir,
  EMAIL,
  exportText,
  prompt,
  putLocal,
  type LocalSession,
} from '../helpers/desktop-sessions.js';
import { postgresTool, usePostgres } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';
import { firstOwner, send } from '../helpers/team-server.js';

const id = (n: number) => `ses_teamdb${String(n).padStart(16, '0')}`;

describe(
  'a team server on PostgreSQL receiving sessions',
  { ...requireTools(postgresTool()), timeout: 180_000 },
  () => {
    const pg = usePostgres();
    const sandbox = useSandbox();

    it('pushed: brings each session once, then only new messages, attributed to the key’s member and showing where from', async () => {
      const database = await pg.freshDatabase();
      const serve = await sandbox.serveWithEnv(
        ['--port', '0', '--data-dir', sandbox.dataDir(), '--database', database],
        {},
      );
      const { cookie, organizationId } = await firstOwner(serve);
      const newKey = async (body: { label: string; pushOnly?: boolean }) => {
        const response = await send(serve.url, `/api/workspaces/${organizationId}/keys`, {
          method: 'POST',
          cookie,
          body,
        });
        expect(response.status, await response.clone().text()).toBe(201);
        return ((await response.json()) as { key: { key: string } }).key.key;
      };
      const pushKey = await newKey({ label: 'desk', pushOnly: true });
      const readKey = await newKey({ label: 'read' });

      const first: LocalSession = {
        id: id(1),
        messages: [prompt('Fix the build'), answer('Done: 2 files.')],
      };
      const second: LocalSession = {
        id: id(2),
        messages: [prompt('Add a test'), answer('Added.'), prompt('Thanks'), answer('Welcome.')],
      };
      const local = await desktopDataDir(sandbox.dataDir(), [first, second]);
      const push = () => runCli(['push', '--to', serve.url, '--key', pushKey, '--data-dir', local.dataDir]);
      const held = async (sessionId: string) => {
        const response = await send(
          serve.url,
          `/api/sessions/${sessionId}?organizationId=${organizationId}`,
          {
            key: readKey,
          },
        );
        expect(response.status, await response.clone().text()).toBe(200);
        return FullSessionResponseSchema.parse(await response.json()).session;
      };

      const pushed = await push();
      expect(pushed.stderr).toBe('');
      expect(pushed.code).toBe(0);
      expect(pushed.stdout).toContain('pushed 2 sessions (6 new messages)');
      for (const session of [first, second]) {
        const there = await held(session.id);
        expect(there.messages).toEqual(session.messages);
        expect(there.status).toBe('completed');
        // The lead made the key in the dashboard: what it pushes is the lead's; the desktop's
        // author (no account here) shows as where the session came from.
        expect(there.author.name).toBe('Lead');
        expect(there.pushedFrom).toEqual({
          machine: hostname(),
          author: { name: 'Ada Desk', email: EMAIL },
          pushedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/u),
        });
      }
      // Kept in the team's database, where every server process reads it.
      const sql = await connect(database);
      try {
        const rows = await sql<Array<{ id: string; message_count: number }>>`
        SELECT id, message_count FROM sessions ORDER BY id`;
        expect(rows.map((r) => [r.id, r.message_count])).toEqual([
          [first.id, 2],
          [second.id, 4],
        ]);
      } finally {
        await sql.end();
      }

      const again = await push();
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('pushed 0 sessions (0 new messages)');
      expect(again.stdout).toContain('2 already there');

      const grown = { ...second, messages: [...second.messages, prompt('One more'), answer('Sure.')] };
      await putLocal(local.dataDir, local.organizationId, [grown]);
      const third = await push();
      expect(third.code).toBe(0);
      expect(third.stdout).toContain('pushed 1 session (2 new messages)');
      expect((await held(second.id)).messages).toEqual(grown.messages);
      expect((await held(first.id)).messages).toEqual(first.messages);

      // The push-only key may push and nothing else.
      const list = await send(serve.url, `/api/sessions?organizationId=${organizationId}`, { key: pushKey });
      expect(list.status).toBe(403);
      expect(await list.text()).toMatch(/may only push a desktop's sessions/u);
      const one = await send(serve.url, `/api/sessions/${first.id}?organizationId=${organizationId}`, {
        key: pushKey,
      });
      expect(one.status).toBe(403);
      expect(await serve.stop()).toBe(0);
    });

    it('imported: takes an export through its data directory or straight into its database (--database), once, giving authors without an account to the owner', async () => {
      const database = await pg.freshDatabase();
      const dataDir = sandbox.dataDir();
      const serve = await sandbox.serveWithEnv(
        ['--port', '0', '--data-dir', dataDir, '--database', database],
        {},
      );
      const { cookie, organizationId } = await firstOwner(serve);
      const sessions: LocalSession[] = [
        { id: id(3), messages: [prompt('Port the parser'), answer('Ported.')] },
        { id: id(4), messages: [prompt('Tidy up'), answer('Tidied.'), prompt('Thanks')], status: 'active' },
      ];
      const exported = exportText(organizationId, sessions);
      const importIt = () =>
        runCli(['import', '--workspace', organizationId, '--data-dir', dataDir], {}, exported);

      const imported = await importIt();
      expect(imported.stderr).toBe('');
      expect(imported.code).toBe(0);
      expect(imported.stdout).toContain('imported 2 sessions (5 messages)');
      expect(imported.stdout).toContain(`workspace owner lead@example.com: ${EMAIL} (2)`);
      for (const session of sessions) {
        const response = await send(
          serve.url,
          `/api/sessions/${session.id}?organizationId=${organizationId}`,
          {
            cookie,
          },
        );
        expect(response.status, await response.clone().text()).toBe(200);
        const there = FullSessionResponseSchema.parse(await response.json()).session;
        expect(there.messages).toEqual(session.messages);
        expect(there.status).toBe(session.status ?? 'completed');
        expect(there.author.name).toBe('Lead');
        expect(there.pushedFrom).toBeUndefined();
      }

      const again = await importIt();
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('imported 0 sessions (0 messages), 2 already present');

      // Straight into the database (`--database`, no data directory), the same import.
      const more: LocalSession[] = [{ id: id(5), messages: [prompt('Add a test'), answer('Added.')] }];
      const direct = await runCli(
        ['import', '--workspace', organizationId, '--database', database],
        {},
        exportText(organizationId, [...sessions, ...more]),
      );
      expect(direct.stderr).toBe('');
      expect(direct.stdout).toContain('imported 1 session (2 messages), 2 already present');
      const listed = await send(serve.url, `/api/sessions?organizationId=${organizationId}`, { cookie });
      expect(
        ListSessionsResponseSchema.parse(await listed.json())
          .sessions.map((s) => s.id)
          .sort(),
      ).toEqual([id(3), id(4), id(5)].sort());
      const unknown = await runCli(
        ['import', '--workspace', 'org_nope', '--database', database],
        {},
        exported,
      );
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('org_nope');
      expect(await serve.stop()).toBe(0);
    });
  },
);
