import { configDefaults, defineConfig } from 'vitest/config';
import { findPostgres } from './test/helpers/postgres-cluster.js';
import { IN_CI } from './test/helpers/tools.js';
import base from './vitest.config.js';

/**
 * Not on PostgreSQL yet: a team server answers 503 for these features. Shorten the list as they
 * arrive there.
 */
const NOT_ON_POSTGRES_YET = [
  // The desktop's search index itself (SQLite FTS5 in search.db: its writer thread, catch-up,
  // piece starts and limits); a team server's index is tested by search-postgres*.test.ts.
  'test/api/search-indexing.test.ts',
  'test/api/search-limits.test.ts',
  'test/api/search-pieces.test.ts',
  'test/api/search-writer.test.ts',
  // These compare both databases themselves, each starting the cluster it needs.
  'test/api/search-postgres*.test.ts',
  // The administrator's import of history files (POST /api/admin/history/import), which it drives.
  'test/api/history-fuzz.test.ts',
];

/**
 * What runs on PostgreSQL too: the API tests, and the real agent CLIs' runs (Claude Code, Codex,
 * Gemini CLI, and the ACP agents) with their stops, follow-ups, reviews and approvals, which write a
 * session as a team server's agents do.
 */
const ON_POSTGRES_TOO = [
  'test/api/**/*.test.ts',
  'test/agents/real-cli-runs.test.ts',
  'test/agents/claude-code-journey.test.ts',
  'test/agents/claude-code-approvals.test.ts',
  'test/agents/codex-approvals.test.ts',
  'test/agents/acp-*-runs.test.ts',
  'test/agents/acp-approvals.test.ts',
  'test/agents/approval-rules-runs.test.ts',
  // A review sent to Claude Code, Codex and OpenCode as one follow-up.
  'test/agents/review-runs.test.ts',
  // The demo agent's clone, its changes and its requests, written as on a team server.
  'test/agents/demo-agent-work.test.ts',
  // The command line and `serve` as processes, each over the team database of its data
  // directory (test/helpers/cli.ts passes it as SESSIONDESK_DATABASE_URL). Not here: what a
  // team database refuses by design (history import, backup, restore, doctor --repair, the
  // demo) or is about a data directory's own files (import-crash, data-commands), the desktop
  // side of a push (push), the npx launcher's stop, and the team-server tests, which start
  // their own PostgreSQL beside sql.js in the first pass.
  'test/cli/{admin-channel,admin-commands,control-characters,exit-codes,hardening}.test.ts',
  'test/cli/{no-data-dir-left,second-serve,serve,serve-background,serve-log,serve-max-runs}.test.ts',
  'test/cli/{sign-in-memory,startup-clients,usability,agent-check,workspace-agent}.test.ts',
];

/**
 * Without PostgreSQL this pass is skipped, saying so, as test/helpers/require-tools.ts skips a
 * test whose tool is missing; under CI, which installs it (.ci/run), it fails.
 */
const postgres = findPostgres();
if ('missing' in postgres) {
  const why = `the API tests on PostgreSQL need PostgreSQL 15+: ${postgres.missing}`;
  if (IN_CI) throw new Error(`missing under CI, where every tool must be installed (.ci/run): ${why}`);
  console.warn(`Skipping tests: ${why}`);
}

/**
 * The API tests and the real agents' runs again, each test server over PostgreSQL as `serve --database` runs it (one
 * throw-away cluster for the run, a fresh database per server). `npm test` runs this after the
 * sql.js pass.
 */
export default defineConfig({
  test: {
    ...base.test,
    include: 'missing' in postgres ? [] : [...ON_POSTGRES_TOO],
    passWithNoTests: 'missing' in postgres,
    exclude: [...configDefaults.exclude, ...NOT_ON_POSTGRES_YET],
    env: { SESSIONDESK_TEST_DATABASE: 'postgres' },
    globalSetup: 'missing' in postgres ? [] : ['test/helpers/postgres-global-setup.ts'],
    reporters: ['default', ['json', { outputFile: 'test-results/vitest-postgres.json' }]],
  },
});
