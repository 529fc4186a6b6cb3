import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src-main/store/migrations.js';
import { loadSqlJs } from '../../src-main/store/sqljs.js';

describe('the migration to history sources of any kind', () => {
  it('keeps the sources and the files read from them, and takes a kind added later', async () => {
    const SQL = await loadSqlJs();
    const db = new SQL.Database();
    // As the store runs it: foreign keys checked, the migration one write.
    db.run('PRAGMA foreign_keys = ON');
    const target = MIGRATIONS.find((m) => m.name === 'history sources of any kind the app knows')!;
    for (const m of MIGRATIONS.filter((x) => x.version < target.version))
      for (const sql of m.sql) db.run(sql);
    const at = '2026-01-01T00:00:00.000Z';
    db.run(`INSERT INTO workspaces (id, name, created_at) VALUES ('org_a', 'A', '${at}')`);
    db.run(
      `INSERT INTO users (id, email, name, password_hash, created_at) VALUES ('u_a', 'a@x.test', 'A', 'h', '${at}')`,
    );
    db.run(
      `INSERT INTO history_sources (id, workspace_id, kind, root_dir, author_id, session_count, created_at)
       VALUES ('hsrc_a', 'org_a', 'gemini', '/home/a/.gemini', 'u_a', 3, '${at}')`,
    );
    db.run(
      `INSERT INTO history_files (source_id, path, byte_offset, fingerprint, size, mtime_ms)
       VALUES ('hsrc_a', '/home/a/.gemini/tmp/p/chats/session-1.jsonl', 10, 'f', 10, 1)`,
    );
    const insertOpencode = () =>
      db.run(
        `INSERT INTO history_sources (id, workspace_id, kind, root_dir, author_id, created_at)
         VALUES ('hsrc_b', 'org_a', 'opencode', '/home/a/.local/share/opencode', 'u_a', '${at}')`,
      );
    expect(insertOpencode).toThrow(/CHECK/);

    db.run('BEGIN IMMEDIATE');
    for (const sql of target.sql) db.run(sql);
    db.run('COMMIT');

    insertOpencode();
    expect(db.exec('SELECT id, kind, session_count FROM history_sources ORDER BY id')[0]!.values).toEqual([
      ['hsrc_a', 'gemini', 3],
      ['hsrc_b', 'opencode', 0],
    ]);
    expect(db.exec('SELECT source_id, byte_offset FROM history_files')[0]!.values).toEqual([['hsrc_a', 10]]);
    expect(db.exec('PRAGMA foreign_key_check')).toEqual([]);
    const schema = String(
      db.exec("SELECT sql FROM sqlite_master WHERE name = 'history_files'")[0]!.values[0]![0],
    );
    expect(schema).toContain('REFERENCES "history_sources"(id)');
    // The files still belong to a source that must be there.
    expect(() =>
      db.run(
        `INSERT INTO history_files (source_id, path, byte_offset, fingerprint, size, mtime_ms)
         VALUES ('hsrc_none', '/x', 0, 'f', 0, 0)`,
      ),
    ).toThrow(/FOREIGN KEY/);
    db.close();
  });
});
