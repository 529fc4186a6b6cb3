import { readsOf } from '../../src-main/store/sqljs-storage.js';
import { spawn } from 'node:child_process';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { readAllMessages, readMessagePage } from '../../src-main/sessions/transcript-reads.js';
import { applyMigration, MIGRATIONS } from '../../src-main/store/migrations.js';
import { createRepositories } from '../../src-main/store/repositories.js';
import { loadSqlJs, SqlJsDb } from '../../src-main/store/sqljs.js';
import { installSnapshot } from '../../src-main/store/load-state.js';
import { Store } from '../../src-main/store/store.js';
import { transcriptPath } from '../../src-main/store/transcripts.js';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const at = (n: number) => new Date(Date.UTC(2026, 9, 1, 8, 0, 0, 0) + n * 1000).toISOString();
const id = (kind: string, n: number) => `${kind}_${String(n).padStart(22, 'A')}`;

interface OldSession {
  id: string;
  bodies: string[];
  /** Who wrote each message (null: the agent). */
  authors: (string | null)[];
  times: string[];
}

/**
 * A database as an earlier version wrote it: the migrations up to `version` only, then
 * rows in that version's tables (message bodies inside SQLite), as the data directory's
 * first snapshot.
 */
async function oldDataDir(
  version: number,
  sessions: number,
  messagesEach: number,
): Promise<{ sessions: OldSession[]; bytes: Uint8Array }> {
  const SQL = await loadSqlJs();
  const db = new SqlJsDb(new SQL.Database());
  const made: OldSession[] = [];
  db.recordWrite(() => {
    for (const migration of MIGRATIONS.filter((m) => m.version <= version)) {
      applyMigration(db, migration, at(0));
    }
    const users = [id('usr', 1), id('usr', 2)];
    users.forEach((userId, i) =>
      db.run('INSERT INTO users (id, email, name, password_hash, created_at) VALUES (?, ?, ?, ?, ?)', [
        userId,
        `person${i}@example.test`,
        `Person ${i}`,
        'scrypt$unused',
        at(0),
      ]),
    );
    db.run('INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)', [id('org', 1), 'Lab', at(0)]);
    for (const userId of users) {
      db.run('INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES (?, ?, ?, ?)', [
        id('org', 1),
        userId,
        userId === users[0] ? 'owner' : 'member',
        at(0),
      ]);
    }
    for (let s = 0; s < sessions; s += 1) {
      const session: OldSession = { id: id('ses', s), bodies: [], authors: [], times: [] };
      for (let m = 0; m < messagesEach; m += 1) {
        const author = m === 0 ? users[0]! : m % 17 === 0 ? users[1]! : null;
        const body =
          author !== null
            ? JSON.stringify({ type: 'user', message: { content: `Prompt ${s}.${m}: look again` } })
            : JSON.stringify({
                type: 'assistant',
                message: {
                  content: [
                    { type: 'thinking', thinking: `Considering step ${m}` },
                    {
                      type: 'tool_result',
                      tool_use_id: `toolu_${m}`,
                      content: 'x'.repeat(500 + m),
                      is_error: false,
                    },
                  ],
                },
              });
        session.bodies.push(body);
        session.authors.push(author);
        session.times.push(at(s * 100 + m));
      }
      db.run(
        `INSERT INTO sessions (id, workspace_id, author_id, title, status, model, created_at, updated_at,
           base_branch, first_message, message_count, first_preview, last_preview)
         VALUES (?, ?, ?, ?, 'completed', 'claude-opus-4-6', ?, ?, 'main', ?, ?, ?, ?)`,
        [
          session.id,
          id('org', 1),
          users[0]!,
          `Session ${s}`,
          session.times[0]!,
          session.times.at(-1)!,
          `Prompt ${s}.0: look again`,
          messagesEach,
          'Prompt',
          'Done',
        ],
      );
      session.bodies.forEach((body, m) => {
        db.run(
          `INSERT INTO messages (session_id, seq, workspace_id, type, author_id, body, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
          [
            session.id,
            m + 1,
            id('org', 1),
            (JSON.parse(body) as { type: string }).type,
            session.authors[m] ?? null,
            body,
            session.times[m]!,
          ],
        );
      });
      made.push(session);
    }
  });
  const bytes = db.export();
  db.close();
  return { sessions: made, bytes };
}

async function install(bytes: Uint8Array): Promise<string> {
  const dir = tempDir('sessiondesk-migrate-');
  dirs.push(dir);
  await installSnapshot(dir, bytes, at(0));
  return dir;
}

/** Every session holds exactly the messages it had, each once, with its time and author. */
async function expectMoved(dir: string, sessions: OldSession[]): Promise<void> {
  const store = await Store.open({ dataDir: dir, clock: systemClock, logger: silentLogger });
  try {
    const repos = createRepositories(store.db);
    expect(store.db.first("SELECT 1 FROM sqlite_master WHERE name = 'messages'")).toBeNull();
    expect(store.db.first('PRAGMA integrity_check')?.[0]).toBe('ok');
    for (const session of sessions) {
      const row = repos.sessions.find(session.id)!;
      expect(row.messageCount).toBe(session.bodies.length);
      expect(statSync(transcriptPath(dir, session.id)).size).toBe(row.transcriptBytes);
      expect(await readAllMessages(readsOf(store), session.id)).toEqual(
        session.bodies.map((b) => JSON.parse(b) as unknown),
      );
      const authors = repos.sessions.promptAuthors(session.id);
      session.authors.forEach((author, m) => expect(authors.get(m + 1) ?? null).toBe(author));
      const page = await readMessagePage(readsOf(store), row, 0, 1000, Infinity);
      expect(page.createdAtMs.map((ms) => new Date(ms).toISOString())).toEqual(session.times);
    }
  } finally {
    await store.close();
  }
}

describe('moving messages out of an older database', () => {
  for (const version of [1, 2, 3]) {
    it(`opens a data directory at schema version ${version} and moves every message into transcripts`, async () => {
      const { sessions, bytes } = await oldDataDir(version, 12, 70);
      const dir = await install(bytes);
      await expectMoved(dir, sessions);
      // Opening again changes nothing.
      await expectMoved(dir, sessions);
    });
  }

  it('survives SIGKILL at any point of the move: nothing lost, nothing doubled', async () => {
    const { sessions, bytes } = await oldDataDir(3, 400, 20);
    const dir = await install(bytes);
    // Three rounds are killed as their progress passes 20%, 40% and 50% of what was left
    // to move (mid-write, as often as not); a fourth finishes the move.
    const killedAt: string[] = [];
    for (const percent of [20, 40, 50]) {
      const child = spawn(
        process.execPath,
        [join(ROOT, 'bin/run-ts.js'), 'test/fixtures/open-store.ts', dir],
        { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      const reached = new Promise<void>((resolve) => {
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          const shown = [...stderr.matchAll(/\((\d+)%\)/gu)].map((m) => Number(m[1]));
          if (shown.some((p) => p >= percent)) resolve();
        });
      });
      await Promise.race([reached, exited]);
      child.kill('SIGKILL');
      await exited;
      killedAt.push(stderr.trim().split('\n').at(-1) ?? '');
    }
    expect(killedAt.every((line) => / of \d+ sessions \(\d+%\)$/u.test(line))).toBe(true);
    expect(readdirSync(dir).some((n) => n.startsWith('journal-'))).toBe(true);
    await expectMoved(dir, sessions);
  }, 120_000);
});
