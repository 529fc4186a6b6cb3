// A team server on PostgreSQL exporting a workspace: through the running `serve --database`
// process's data directory, straight from its database (--database), and back into a desktop's
// data directory; the real CLI, a real server process, a real cluster.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { useSandbox } from '../helpers/cli-extra.js';
import {
  answer,
  desktopDataDir,
  EMAIL,
  exportText,
  prompt,
  type LocalSession,
} from '../helpers/desktop-sessions.js';
import { postgresTool, usePostgres } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';
import { firstOwner } from '../helpers/team-server.js';

const id = (n: number) => `ses_teamex${String(n).padStart(16, '0')}`;

type Line = Record<string, unknown> & { type: string };
const linesOf = (ndjson: string): Line[] =>
  ndjson
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Line);

/** An export's sessions and messages, without who wrote them (an import gives them to its owner). */
function withoutAuthors(ndjson: string): Line[] {
  return linesOf(ndjson)
    .filter((line) => line.type !== 'sessiondesk.export' && line.type !== 'end')
    .map(({ author: _author, authorEmail: _email, ...rest }) => rest as Line);
}

describe(
  'a team server on PostgreSQL exporting a workspace',
  { ...requireTools(postgresTool()), timeout: 240_000 },
  () => {
    const pg = usePostgres();
    const sandbox = useSandbox();

    it('exports through its data directory and from its database alike, and the export imports into a desktop as it was', async () => {
      const database = await pg.freshDatabase();
      const dataDir = sandbox.dataDir();
      const serve = await sandbox.serveWithEnv(
        ['--port', '0', '--data-dir', dataDir, '--database', database],
        {},
      );
      const { organizationId } = await firstOwner(serve);
      const sessions: LocalSession[] = [
        { id: id(1), messages: [prompt('Port the parser'), answer('Ported.')] },
        { id: id(2), messages: [prompt('Tidy up'), answer('Tidied.'), prompt('Thanks')], status: 'active' },
        { id: id(3), messages: [prompt('Add “a test” ✓'), answer('Added.')] },
      ];
      const imported = await runCli(
        ['import', '--workspace', organizationId, '--data-dir', dataDir],
        {},
        exportText(organizationId, sessions),
      );
      expect(imported.stderr).toBe('');
      expect(imported.stdout).toContain('imported 3 sessions (7 messages)');

      // Through the running server: its data directory is the way to it.
      const viaServer = await runCli(['export', '--workspace', organizationId, '--data-dir', dataDir]);
      expect(viaServer.stderr).toBe('');
      expect(viaServer.code).toBe(0);
      const [header, ...rest] = linesOf(viaServer.stdout);
      expect(header).toMatchObject({ type: 'sessiondesk.export', organizationId, sessionCount: 3 });
      expect(rest.filter((line) => line.type === 'session').map((line) => line.id)).toEqual(
        sessions
          .map((s) => s.id)
          .sort()
          .reverse(),
      );
      expect(rest.filter((line) => line.type === 'message')).toHaveLength(7);
      expect(rest.at(-1)).toEqual({ type: 'end', sessionCount: 3 });

      // Straight from the database, while the server runs: the same export but for its time.
      const file = join(sandbox.dataDir(), 'team.ndjson');
      const direct = await runCli([
        'export',
        '--workspace',
        organizationId,
        '--database',
        database,
        '--output',
        file,
      ]);
      expect(direct.stderr).toBe('');
      expect(direct.code).toBe(0);
      expect(direct.stdout).toContain(`Exported ${organizationId} to ${file}`);
      const fromDatabase = readFileSync(file, 'utf8');
      const afterHeader = (text: string) => text.slice(text.indexOf('\n') + 1);
      expect(afterHeader(fromDatabase)).toBe(afterHeader(viaServer.stdout));
      expect({ ...linesOf(fromDatabase)[0], exportedAt: 'x' }).toEqual({ ...header, exportedAt: 'x' });

      const json = await runCli([
        'export',
        '--workspace',
        organizationId,
        '--format',
        'json',
        '--database',
        database,
      ]);
      expect(json.code).toBe(0);
      const document = JSON.parse(json.stdout) as { sessions: Array<{ id: string; messages: unknown[] }> };
      expect(document.sessions.map((s) => [s.id, s.messages.length])).toEqual([
        [id(3), 2],
        [id(2), 3],
        [id(1), 2],
      ]);

      const unknown = await runCli(['export', '--workspace', 'org_nope', '--database', database]);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('org_nope');
      expect(unknown.stdout).toBe('');

      // The round trip: into a fresh desktop data directory, and out of it again.
      const desktop = await desktopDataDir(sandbox.dataDir(), []);
      const intoDesktop = await runCli([
        'import',
        '--workspace',
        desktop.organizationId,
        '--input',
        file,
        '--data-dir',
        desktop.dataDir,
      ]);
      expect(intoDesktop.stderr).toBe('');
      expect(intoDesktop.stdout).toContain('imported 3 sessions (7 messages)');
      expect(intoDesktop.stdout).toContain(`workspace owner ${EMAIL}: lead@example.com (3)`);
      const again = await runCli([
        'export',
        '--workspace',
        desktop.organizationId,
        '--data-dir',
        desktop.dataDir,
      ]);
      expect(again.code).toBe(0);
      expect(withoutAuthors(again.stdout)).toEqual(withoutAuthors(fromDatabase));
      expect(withoutAuthors(again.stdout).length).toBeGreaterThan(10);
      expect(await serve.stop()).toBe(0);
    });
  },
);
