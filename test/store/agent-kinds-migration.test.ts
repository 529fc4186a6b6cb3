import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src-main/store/migrations.js';
import { loadSqlJs } from '../../src-main/store/sqljs.js';

const byName = (name: string) => {
  const migration = MIGRATIONS.find((m) => m.name.startsWith(name));
  if (!migration) throw new Error(`no migration "${name}"`);
  return migration;
};

describe('the migration to agent CLI kinds', () => {
  it('keeps workspace settings and allows the new kinds, and only known ones', async () => {
    const SQL = await loadSqlJs();
    const db = new SQL.Database();
    const target = byName('agent CLI kinds');
    // Every earlier migration's SQL (their data steps have nothing to move in an empty database).
    for (const m of MIGRATIONS.filter((x) => x.version < target.version))
      for (const sql of m.sql) db.run(sql);
    db.run("INSERT INTO workspaces (id, name, created_at) VALUES ('org_a', 'A', '2026-01-01T00:00:00.000Z')");
    db.run("INSERT INTO workspaces (id, name, created_at) VALUES ('org_b', 'B', '2026-01-01T00:00:00.000Z')");
    db.run(
      `INSERT INTO workspace_settings (workspace_id, agent, command, timeout_ms)
       VALUES ('org_a', 'command', '["my-agent","{prompt}"]', 60000)`,
    );
    expect(() =>
      db.run("INSERT INTO workspace_settings (workspace_id, agent) VALUES ('org_b', 'claude-code')"),
    ).toThrow(/CHECK/);

    for (const sql of target.sql) db.run(sql);

    expect(
      db.exec('SELECT workspace_id, agent, command, timeout_ms FROM workspace_settings')[0]!.values,
    ).toEqual([['org_a', 'command', '["my-agent","{prompt}"]', 60000]]);
    for (const kind of ['claude-code', 'codex', 'gemini']) {
      db.run(
        `INSERT INTO workspace_settings (workspace_id, agent) VALUES ('org_b', ?)
         ON CONFLICT (workspace_id) DO UPDATE SET agent = excluded.agent`,
        [kind],
      );
    }
    expect(() =>
      db.run("UPDATE workspace_settings SET agent = 'unknown' WHERE workspace_id = 'org_b'"),
    ).toThrow(/CHECK/);
    const columns = db.exec('PRAGMA table_info(sessions)')[0]!.values.map((r) => r[1]);
    expect(columns).toEqual(
      expect.arrayContaining(['agent_kind', 'conversation_id', 'conversation_kind', 'usage_cost_usd']),
    );
    db.close();
  });
});
