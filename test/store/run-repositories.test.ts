import { rm } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { postgresApprovals } from '../../src-main/store-postgres/approvals.js';
import { postgresUsers, postgresWorkspaces } from '../../src-main/store-postgres/accounts.js';
import { postgresRuns } from '../../src-main/store-postgres/runs.js';
import { postgresSessionOrigins } from '../../src-main/store-postgres/session-origins.js';
import type { ApprovalOutcome, ApprovalRecord } from '../../src-main/store/approvals.js';
import type { AgentProcess } from '../../src-main/store/runs.js';
import type { SessionOrigin } from '../../src-main/store/session-origins.js';
import { storageOf } from '../../src-main/store/sqljs-storage.js';
import type { Repos } from '../../src-main/store/storage.js';
import { Store } from '../../src-main/store/store.js';
import { eachCallAWrite } from '../helpers/storage.js';
import { migratedPool, postgresTool, usePostgres } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';
import { tempDir } from '../helpers/server.js';

type RunRepos = Pick<Repos, 'users' | 'workspaces' | 'runs' | 'approvals' | 'sessionOrigins'>;

/** A session's origin as its row holds it: no repository reads the first push's time back alone. */
type StoredOrigin = SessionOrigin & { firstPushedAt: string };

interface Database {
  repos: RunRepos;
  /** A session: the row that queued runs, process groups, requests and origins point at. */
  addSession(id: string, workspaceId: string): Promise<void>;
  origin(sessionId: string): Promise<StoredOrigin | null>;
  close(): Promise<void>;
}

const AT = '2026-11-27T08:00:00.000Z';
const later = (minutes: number) => new Date(Date.parse(AT) + minutes * 60_000).toISOString();
const AUTHOR = 'usr_ada';
/** What each database says of a second row with the same key, and of a row whose session is not there. */
const TWICE = /UNIQUE constraint failed|duplicate key value/;
const NO_SUCH_SESSION = /FOREIGN KEY constraint failed|violates foreign key constraint/;

function request(
  id: string,
  sessionId: string,
  createdAt: string,
  extra: Partial<ApprovalRecord> = {},
): ApprovalRecord {
  return {
    id,
    workspaceId: sessionId === 'ses_4' ? 'org_b' : 'org_a',
    sessionId,
    agent: 'acp:gemini',
    createdAt,
    expiresAt: later(30),
    title: 'Run the tests',
    tool: { kind: 'execute', name: 'run_shell_command', input: { command: 'npm test' } },
    options: [
      { id: 'allow', kind: 'allow_once', label: 'Allow' },
      { id: 'reject', kind: 'reject_once', label: 'Reject' },
    ],
    ...extra,
  };
}

const bySession = (processes: AgentProcess[]) =>
  [...processes].sort((a, b) => a.sessionId.localeCompare(b.sessionId));

/**
 * The same questions to the repositories of runs on either database, with the same answers:
 * the run queue and agent process groups, agents' requests, and pushed sessions' origins.
 * Each test has a database of its own, with sessions 1 to 3 in org_a and 4 in org_b.
 */
function runsContract(open: () => Promise<Database>) {
  let db: Database;
  let repos: RunRepos;
  beforeEach(async () => {
    db = await open();
    repos = db.repos;
    await repos.users.insert({
      id: AUTHOR,
      email: 'ada@example.com',
      name: 'Ada',
      passwordHash: 'h',
      createdAt: AT,
    });
    await repos.workspaces.insert({ id: 'org_a', name: 'A', createdAt: AT });
    await repos.workspaces.insert({ id: 'org_b', name: 'B', createdAt: AT });
    for (const id of ['ses_1', 'ses_2', 'ses_3']) await db.addSession(id, 'org_a');
    await db.addSession('ses_4', 'org_b');
  });
  afterEach(async () => db.close());

  /** Decides a pending request, and reads it back with the outcome added. */
  async function decides(asked: ApprovalRecord, outcome: ApprovalOutcome) {
    expect(await repos.approvals.decide(asked.id, asked.sessionId, outcome)).toBe(true);
    expect(await repos.approvals.find(asked.id)).toStrictEqual({ ...asked, ...outcome });
  }

  it('queues runs first in line first, changes a prompt where it stands, and dequeues', async () => {
    expect(await repos.runs.queued()).toEqual([]);
    await repos.runs.enqueue({ sessionId: 'ses_2', mode: 'start' });
    await repos.runs.enqueue({
      sessionId: 'ses_1',
      mode: 'follow-up',
      prompt: 'and the docs',
      statusBefore: 'completed',
    });
    await repos.runs.enqueue({ sessionId: 'ses_3', mode: 'follow-up', prompt: '' });
    expect(await repos.runs.queued()).toStrictEqual([
      { sessionId: 'ses_2', mode: 'start' },
      { sessionId: 'ses_1', mode: 'follow-up', prompt: 'and the docs', statusBefore: 'completed' },
      { sessionId: 'ses_3', mode: 'follow-up', prompt: '' },
    ]);

    await repos.runs.setQueuedPrompt('ses_2', 'follow-up', 'first\n\nsecond ✓');
    await repos.runs.setQueuedPrompt('ses_4', 'follow-up', 'not queued');
    expect(await repos.runs.queued()).toStrictEqual([
      { sessionId: 'ses_2', mode: 'follow-up', prompt: 'first\n\nsecond ✓' },
      { sessionId: 'ses_1', mode: 'follow-up', prompt: 'and the docs', statusBefore: 'completed' },
      { sessionId: 'ses_3', mode: 'follow-up', prompt: '' },
    ]);

    await repos.runs.dequeue('ses_3');
    await repos.runs.dequeue('ses_3');
    await repos.runs.dequeue('ses_2');
    // Out of the queue and back, a session waits behind those still in it.
    await repos.runs.enqueue({ sessionId: 'ses_2', mode: 'start' });
    await repos.runs.enqueue({ sessionId: 'ses_4', mode: 'start' });
    expect((await repos.runs.queued()).map((run) => run.sessionId)).toEqual(['ses_1', 'ses_2', 'ses_4']);
  });

  it('refuses to queue a session twice or one that does not exist, and keeps the queue', async () => {
    await repos.runs.enqueue({ sessionId: 'ses_1', mode: 'start' });
    await expect(
      repos.runs.enqueue({ sessionId: 'ses_1', mode: 'follow-up', prompt: 'again' }),
    ).rejects.toThrow(TWICE);
    await expect(repos.runs.enqueue({ sessionId: 'ses_nobody', mode: 'start' })).rejects.toThrow(
      NO_SUCH_SESSION,
    );
    expect(await repos.runs.queued()).toStrictEqual([{ sessionId: 'ses_1', mode: 'start' }]);
  });

  it("keeps each run's process group, replaced by the session's next, until it is forgotten", async () => {
    expect(await repos.runs.processes()).toEqual([]);
    const leader = { pgid: 4_194_304, startTime: '18446744073709551615', bootId: 'c0ffee00-boot' };
    await repos.runs.recordProcess({ sessionId: 'ses_3', ...leader }, AT);
    await repos.runs.recordProcess({ sessionId: 'ses_1', pgid: 1 }, AT);
    // Neither database promises an order: a start after a crash ends every group it finds.
    expect(bySession(await repos.runs.processes())).toStrictEqual([
      { sessionId: 'ses_1', pgid: 1 },
      { sessionId: 'ses_3', ...leader },
    ]);

    await repos.runs.recordProcess({ sessionId: 'ses_3', pgid: 321 }, later(1));
    expect(bySession(await repos.runs.processes())).toStrictEqual([
      { sessionId: 'ses_1', pgid: 1 },
      { sessionId: 'ses_3', pgid: 321 },
    ]);

    await repos.runs.forgetProcess('ses_1');
    await repos.runs.forgetProcess('ses_1');
    expect(await repos.runs.processes()).toStrictEqual([{ sessionId: 'ses_3', pgid: 321 }]);
    await expect(repos.runs.recordProcess({ sessionId: 'ses_nobody', pgid: 7 }, AT)).rejects.toThrow(
      NO_SUCH_SESSION,
    );
  });

  it('keeps a request pending until it is decided, once', async () => {
    const asked = request('apr_1', 'ses_1', AT, { detail: 'npm test\n' });
    await repos.approvals.save(asked);
    expect(await repos.approvals.find('apr_1')).toStrictEqual(asked);
    expect(await repos.approvals.find('apr_nobody')).toBeNull();

    const rejected: ApprovalOutcome = {
      decidedAt: later(2),
      decision: 'reject_once',
      decidedBy: { kind: 'user', userId: AUTHOR, name: 'Ada' },
      optionId: 'reject',
      message: 'Not on main.\nUse a branch.',
    };
    await decides(asked, rejected);
    const late: ApprovalOutcome = {
      decidedAt: later(3),
      decision: 'cancelled',
      decidedBy: { kind: 'sessiondesk', reason: 'stopped' },
    };
    expect(await repos.approvals.decide('apr_1', 'ses_1', late)).toBe(false);
    expect(await repos.approvals.find('apr_1')).toStrictEqual({ ...asked, ...rejected });
    expect(await repos.approvals.decide('apr_nobody', 'ses_1', late)).toBe(false);

    const stopped = request('apr_2', 'ses_2', later(1));
    await repos.approvals.save(stopped);
    await decides(stopped, late);
    expect(await repos.approvals.pending('org_a')).toEqual([]);
  });

  it("lists pending requests oldest first, of a workspace or one session, and a session's record", async () => {
    await repos.approvals.save(request('apr_b', 'ses_1', later(2)));
    await repos.approvals.save(request('apr_a', 'ses_2', later(1)));
    // Two asked in the same millisecond, the later id first: listed in the order they were asked.
    await repos.approvals.save(request('apr_d', 'ses_1', later(3)));
    await repos.approvals.save(request('apr_c', 'ses_2', later(3)));
    await repos.approvals.save(request('apr_e', 'ses_4', AT));
    const decided = request('apr_f', 'ses_1', AT, {
      decidedAt: later(1),
      decision: 'allow_once',
      optionId: 'allow',
      decidedBy: { kind: 'apiKey', keyId: 'key_1', label: 'CI' },
    });
    await repos.approvals.save(decided);
    const ids = (found: ApprovalRecord[]) => found.map((approval) => approval.id);

    expect(ids(await repos.approvals.pending('org_a'))).toEqual(['apr_a', 'apr_b', 'apr_d', 'apr_c']);
    expect(ids(await repos.approvals.pending('org_a', 'ses_1'))).toEqual(['apr_b', 'apr_d']);
    expect(await repos.approvals.pending('org_a', 'ses_4')).toEqual([]);
    expect(await repos.approvals.pending('org_a', 'ses_3')).toEqual([]);
    expect(await repos.approvals.pending('org_nobody')).toEqual([]);
    expect(ids(await repos.approvals.allPending())).toEqual(['apr_e', 'apr_a', 'apr_b', 'apr_d', 'apr_c']);
    expect(await repos.approvals.ofSession('ses_1')).toStrictEqual([
      decided,
      request('apr_b', 'ses_1', later(2)),
      request('apr_d', 'ses_1', later(3)),
    ]);
    expect(await repos.approvals.ofSession('ses_3')).toEqual([]);
    expect(await repos.approvals.pending('org_b')).toStrictEqual([request('apr_e', 'ses_4', AT)]);
  });

  it('saves a request again over itself, as an import that completes a session does', async () => {
    await repos.approvals.save(request('apr_1', 'ses_1', AT, { detail: 'npm test' }));
    const imported = request('apr_1', 'ses_1', AT, {
      title: 'Run the tests (imported)',
      decidedAt: later(30),
      decision: 'expired',
      decidedBy: { kind: 'sessiondesk', reason: 'imported' },
    });
    await repos.approvals.save(imported);
    expect(await repos.approvals.find('apr_1')).toStrictEqual(imported);
    expect(await repos.approvals.ofSession('ses_1')).toStrictEqual([imported]);
    expect(await repos.approvals.allPending()).toEqual([]);
    await expect(repos.approvals.save(request('apr_2', 'ses_nobody', AT))).rejects.toThrow(NO_SUCH_SESSION);
  });

  it('carries what agents and people send as they sent it: empty words, any character inside JSON', async () => {
    const odd = request('apr_odd', 'ses_1', AT, {
      agent: 'acp:ünïcode-agent',
      title: '',
      detail: '',
      tool: {
        kind: 'other',
        name: '',
        input: { nul: 'a\u0000b', lone: '\ud800', emoji: '🚀', deep: [null, 1.5] },
      },
      options: [],
      decidedAt: later(1),
      decision: 'reject_always',
      decidedBy: { kind: 'user', userId: AUTHOR, name: '' },
      optionId: '',
      message: '',
    });
    await repos.approvals.save(odd);
    expect(await repos.approvals.find('apr_odd')).toStrictEqual(odd);
  });

  it('refuses to read a request saved decided without its decision (a row half made)', async () => {
    await repos.approvals.save(request('apr_half', 'ses_1', AT, { decidedAt: later(1) }));
    await expect(repos.approvals.find('apr_half')).rejects.toThrow(TypeError);
  });

  it('records where a pushed session came from and who pushed it first, once; every push says when', async () => {
    expect(await db.origin('ses_1')).toBeNull();
    expect(await repos.sessionOrigins.pusher('ses_1')).toBeNull();
    const laptop = {
      machine: 'laptop',
      authorName: 'Ada',
      authorEmail: 'ada@example.com',
      pushedAt: later(1),
    };
    const ada = { keyId: 'key_ada', userId: 'usr_ada' };
    await repos.sessionOrigins.record('ses_1', laptop, ada);
    expect(await db.origin('ses_1')).toStrictEqual({ ...laptop, firstPushedAt: later(1) });

    const desk = { machine: '', authorName: 'Ada L. ✓', authorEmail: 'ada@work.example', pushedAt: later(2) };
    await repos.sessionOrigins.record('ses_1', desk, { keyId: 'key_other', userId: null });
    await repos.sessionOrigins.record('ses_2', laptop, { keyId: 'key_admin', userId: null });
    expect(await db.origin('ses_1')).toStrictEqual({
      ...laptop,
      pushedAt: later(2),
      firstPushedAt: later(1),
    });
    expect(await repos.sessionOrigins.pusher('ses_1')).toStrictEqual(ada);
    expect(await db.origin('ses_2')).toStrictEqual({ ...laptop, firstPushedAt: later(1) });
    expect(await repos.sessionOrigins.pusher('ses_2')).toStrictEqual({ keyId: 'key_admin', userId: null });
    expect(await db.origin('ses_3')).toBeNull();
    await expect(repos.sessionOrigins.record('ses_nobody', laptop, ada)).rejects.toThrow(NO_SUCH_SESSION);
  });
}

describe('the repositories of runs on sql.js', () => {
  runsContract(async () => {
    const dir = tempDir('sessiondesk-runs-');
    const store = await Store.open({ dataDir: dir, clock: systemClock, logger: silentLogger });
    const storage = storageOf(store);
    return {
      repos: eachCallAWrite(storage),
      addSession: (id, workspaceId) =>
        storage.write((tx) =>
          tx.sessions.insert({
            id,
            workspaceId,
            authorId: AUTHOR,
            title: id,
            model: 'demo',
            createdAt: AT,
            baseBranch: 'main',
          }),
        ),
      async origin(sessionId) {
        const row = store.db.first(
          `SELECT machine, author_name, author_email, first_pushed_at, pushed_at FROM session_origins
           WHERE session_id = ?`,
          [sessionId],
        );
        if (!row) return null;
        const [machine, authorName, authorEmail, firstPushedAt, pushedAt] = row as string[];
        return { machine, authorName, authorEmail, pushedAt, firstPushedAt } as StoredOrigin;
      },
      async close() {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  });
});

describe('the repositories of runs on PostgreSQL', requireTools(postgresTool()), () => {
  const pg = usePostgres();
  runsContract(async () => {
    const sql = await migratedPool(await pg.freshDatabase());
    return {
      repos: {
        users: postgresUsers(sql),
        workspaces: postgresWorkspaces(sql),
        runs: postgresRuns(sql),
        approvals: postgresApprovals(sql),
        sessionOrigins: postgresSessionOrigins(sql),
      },
      // The session's row alone, as its repository writes one: what is tested here only points at it.
      async addSession(id, workspaceId) {
        await sql`INSERT INTO sessions (id, workspace_id, author_id, title, status, model, created_at, updated_at,
            base_branch)
          VALUES (${id}, ${workspaceId}, ${AUTHOR}, ${id}, 'active', 'demo', ${AT}, ${AT}, 'main')`;
      },
      async origin(sessionId) {
        const [row] = await sql<StoredOrigin[]>`SELECT machine, author_name AS "authorName",
            author_email AS "authorEmail", pushed_at AS "pushedAt", first_pushed_at AS "firstPushedAt"
          FROM session_origins WHERE session_id = ${sessionId}`;
        return row ? { ...row } : null;
      },
      close: () => sql.end(),
    };
  });
});
