import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src-main/store/migrations.js';
import { loadSqlJs } from '../../src-main/store/sqljs.js';

const target = MIGRATIONS.find((m) => m.name === 'history sources of any CLI the API knows')!;

describe('the migration to history sources of any CLI', () => {
  it("keeps every source and every file's progress, and takes a kind the table did not list", async () => {
    const SQL = await loadSqlJs();
    const db = new SQL.Database();
    // As the store opens it: a source dropped with files referring to it would fail.
    db.run('PRAGMA foreign_keys = ON');
    for (const m of MIGRATIONS.filter((x) => x.version < target.version))
      for (const sql of m.sql) db.run(sql);
    const at = '2026-01-01T00:00:00.000Z';
    db.run(`INSERT INTO workspaces (id, name, created_at) VALUES ('org_a', 'A', '${at}')`);
    db.run(
      `INSERT INTO users (id, email, name, password_hash, created_at) VALUES ('user_a', 'a@example.test', 'A', 'x', '${at}')`,
    );
    db.run(
      `INSERT INTO history_sources (id, workspace_id, kind, root_dir, author_id, paused, session_count,
         message_count, last_import_at, created_at)
       VALUES ('src_a', 'org_a', 'gemini', '/home/a/.gemini', 'user_a', 1, 2, 7, '${at}', '${at}')`,
    );
    db.run(
      `INSERT INTO history_files (source_id, path, byte_offset, fingerprint, size, mtime_ms, parser_state)
       VALUES ('src_a', '/home/a/.gemini/tmp/p/chats/session-1.jsonl', 120, 'f1', 120, 1000, '{"runOpen":true}')`,
    );
    const kindOf =
      "INSERT INTO history_sources (id, workspace_id, kind, root_dir, author_id, created_at) VALUES ('src_q', 'org_a', 'qwen-code', '/home/a/.qwen', 'user_a', '')";
    expect(() => db.run(kindOf)).toThrow(/CHECK/);

    for (const sql of target.sql) db.run(sql);

    expect(db.exec('SELECT * FROM history_sources')[0]!.values).toEqual([
      ['src_a', 'org_a', 'gemini', '/home/a/.gemini', 'user_a', 1, 2, 7, at, at],
    ]);
    expect(db.exec('SELECT * FROM history_files')[0]!.values).toEqual([
      [
        'src_a',
        '/home/a/.gemini/tmp/p/chats/session-1.jsonl',
        null,
        120,
        'f1',
        120,
        1000,
        '{"runOpen":true}',
      ],
    ]);
    db.run(kindOf);
    // The files still refer to their source, and the index the import reads by is there.
    expect(() =>
      db.run(
        "INSERT INTO history_files (source_id, path, byte_offset, fingerprint, size, mtime_ms) VALUES ('src_none', '/x', 0, 'f', 0, 0)",
      ),
    ).toThrow(/FOREIGN KEY/);
    expect(
      db.exec("SELECT name FROM sqlite_master WHERE name = 'history_files_by_session'")[0]!.values,
    ).toEqual([['history_files_by_session']]);
    db.close();
  });
});
