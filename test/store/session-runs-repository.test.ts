import { beforeAll, describe, expect, it } from 'vitest';
import type { AgentKind } from '../../src-shared/constants.js';
import type { Usage } from '../../src-shared/sessions.js';
import { createPostgresStorage } from '../../src-main/store-postgres/storage.js';
import { storageOf } from '../../src-main/store/sqljs-storage.js';
import type { Storage } from '../../src-main/store/storage.js';
import { postgresTool, useMigratedPool } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';
import { addAdasSession, useSqlJsStore } from '../helpers/storage.js';

const AT = '2026-11-27T08:00:00.000Z';
const later = (minutes: number) => new Date(Date.parse(AT) + minutes * 60_000).toISOString();
const usage = (input: number, costUsd?: number): Usage => ({
  inputTokens: input,
  outputTokens: 1,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  ...(costUsd === undefined ? {} : { costUsd }),
});
const run = (kind: AgentKind, endedAt: string, runUsage: Usage, conversationId?: string, model?: string) => ({
  kind,
  endedAt,
  usage: runUsage,
  ...(conversationId === undefined ? {} : { conversationId }),
  ...(model === undefined ? {} : { model }),
});

/**
 * Recorded in an order that is none of the ones asked about: the last to end first, and the
 * runs that ended at the same instant against the order of what they hold.
 */
const recorded = [
  run('codex', later(5), usage(1, 0.1), 'a'),
  run('claude-code', later(5), usage(9, 0.2), 'a'),
  run('claude-code', later(5), usage(3, 0.2), 'a'),
  run('claude-code', later(5), usage(3), 'a', 'made-up-model'),
  run('claude-code', later(5), usage(3, 0.3), 'Z'),
  run('claude-code', later(5), usage(3, 0.3)),
  run('gemini', later(2), usage(7, 0.4), 'q'),
];

/**
 * A session's runs read on either database come in one order: the order they ended, and runs
 * that ended at the same instant by what they hold, text compared as bytes ('Z' before 'a'),
 * an absent conversation or cost first. PostgreSQL keeps no order of insertion; this order is
 * what makes a session's export the same on both.
 */
function runsContract(open: () => Promise<Storage>) {
  let storage: Storage;
  beforeAll(async () => {
    storage = await open();
    await storage.write(async (tx) => {
      await addAdasSession(tx, { id: 'ses_runs', title: 'Runs', model: 'claude-sonnet-4-5', createdAt: AT });
      for (const one of recorded) await tx.sessions.recordRun('ses_runs', 'org_a', one);
    });
  });

  it('lists the runs in the order they ended, ties by what they hold, as an export holds them', async () => {
    const unknown = { runs: 1, models: ['made-up-model'] };
    expect(await storage.repos.sessions.runs('ses_runs')).toEqual([
      { kind: 'gemini', conversationId: 'q', endedAt: later(2), usage: usage(7, 0.4) },
      { kind: 'claude-code', endedAt: later(5), usage: usage(3, 0.3) },
      { kind: 'claude-code', conversationId: 'Z', endedAt: later(5), usage: usage(3, 0.3) },
      {
        kind: 'claude-code',
        conversationId: 'a',
        endedAt: later(5),
        usage: { ...usage(3), costUnknown: unknown },
      },
      { kind: 'claude-code', conversationId: 'a', endedAt: later(5), usage: usage(3, 0.2) },
      { kind: 'claude-code', conversationId: 'a', endedAt: later(5), usage: usage(9, 0.2) },
      { kind: 'codex', conversationId: 'a', endedAt: later(5), usage: usage(1, 0.1) },
    ]);
  });

  it('lists none for a session without runs or one that is not there', async () => {
    await storage.write((tx) =>
      tx.sessions.insert({
        id: 'ses_none',
        workspaceId: 'org_a',
        authorId: 'usr_ada',
        title: 'None',
        model: 'claude-sonnet-4-5',
        createdAt: AT,
        baseBranch: 'main',
      }),
    );
    expect(await storage.repos.sessions.runs('ses_none')).toEqual([]);
    expect(await storage.repos.sessions.runs('ses_missing')).toEqual([]);
  });
}

describe("a session's runs on sql.js", () => {
  const sqljs = useSqlJsStore('sessiondesk-session-runs-');
  runsContract(async () => storageOf(await sqljs.open()));
});

describe("a session's runs on PostgreSQL", requireTools(postgresTool()), () => {
  const pg = useMigratedPool();
  runsContract(async () => createPostgresStorage(await pg.open()));
});
