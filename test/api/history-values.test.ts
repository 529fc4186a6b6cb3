// Values another program wrote, through the real server: a followed file's times in a CLI's
// own ISO form, and rows stored out of the API's form (by an older version) in a list of many.
import { cpSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { SessionSummaryResponseSchema } from '../../src-shared/session-summary.js';
import { ListSessionsResponseSchema, type SessionSummary } from '../../src-shared/sessions.js';
import { newId } from '../../src-main/accounts/secrets.js';
import { filesUnder, HISTORY_FIXTURES } from '../helpers/hostile-history.js';
import {
  addHistorySource,
  seedWorkspace,
  startTestServer,
  tempDir,
  withKey,
  type TestServer,
} from '../helpers/server.js';
import { until } from '../helpers/until.js';
import { useCleanups } from '../helpers/cleanups.js';

const cleanup = useCleanups();

async function serverWithLog(): Promise<{ server: TestServer; log: () => string }> {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const server = await startTestServer({ log: { level: 'info', stream } });
  cleanup(() => server.dispose());
  return { server, log: () => text };
}

async function list(server: TestServer, key: string, org: string): Promise<SessionSummary[]> {
  const response = await withKey(server, key, 'GET', `/api/sessions?organizationId=${org}`);
  expect(response.status).toBe(200);
  return ListSessionsResponseSchema.parse(await response.json()).sessions;
}

describe("values from another program's files", () => {
  it("a followed Claude Code file's times with microseconds are stored in the API's form: its summary answers", async () => {
    const { server } = await serverWithLog();
    const owner = await seedWorkspace(server);
    const folder = tempDir('history-values-');
    cleanup(() => rmSync(folder, { recursive: true, force: true }));
    const root = join(folder, 'claude');
    cpSync(join(HISTORY_FIXTURES, 'claude-code', '2.1.330', 'plain-answer'), root, { recursive: true });
    const [file] = filesUnder(root, /\.jsonl$/u);
    // As Claude Code has been seen to write them: six fractional digits.
    writeFileSync(
      file!,
      readFileSync(file!, 'utf8').replace(/"timestamp":"([^".]+)\.(\d{3})Z"/gu, '"timestamp":"$1.$2088Z"'),
    );
    expect(readFileSync(file!, 'utf8')).toMatch(/"timestamp":"[^"]+\.\d{6}Z"/u);
    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(file!, anHourAgo, anHourAgo);
    await addHistorySource(server, owner.user.cookie, owner.organizationId, {
      kind: 'claude-code',
      rootDir: root,
    });
    const [session] = await until(
      () => list(server, owner.apiKey, owner.organizationId),
      (sessions) => sessions.length === 1,
      30_000,
    );
    const summary = await withKey(server, owner.apiKey, 'GET', `/api/sessions/${session!.id}/summary`);
    expect(summary.status, await summary.clone().text()).toBe(200);
    const { session: shown } = SessionSummaryResponseSchema.parse(await summary.json());
    expect(shown.updatedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/u);
    expect(shown.createdAt < shown.updatedAt).toBe(true);
  });

  it('a row stored out of the form never takes down its list: repaired when exact, else left out, and logged', async () => {
    const { server, log } = await serverWithLog();
    const owner = await seedWorkspace(server);
    const store = async (title: string, createdAt: string) => {
      const id = newId('session');
      await server.storage.write((tx) =>
        tx.sessions.insert({
          id,
          workspaceId: owner.organizationId,
          authorId: owner.user.userId,
          title,
          model: 'claude-sonnet-4-5',
          createdAt,
          baseBranch: 'main',
        }),
      );
      return id;
    };
    // As an older version stored them from a CLI's files.
    const fine = await store('Fine', '2026-11-26T12:09:03.000Z');
    const micro = await store('Microseconds', '2026-11-26T12:09:04.217088Z');
    const offset = await store('Offset', '2026-11-26T14:09:05.5+02:00');
    const broken = await store('Broken', 'not a time');

    const sessions = await list(server, owner.apiKey, owner.organizationId);
    expect(sessions.map((s) => [s.title, s.createdAt, s.updatedAt])).toEqual([
      ['Offset', '2026-11-26T12:09:05.500Z', '2026-11-26T12:09:05.500Z'],
      ['Microseconds', '2026-11-26T12:09:04.217Z', '2026-11-26T12:09:04.217Z'],
      ['Fine', '2026-11-26T12:09:03.000Z', '2026-11-26T12:09:03.000Z'],
    ]);
    expect(log()).toContain(
      `Session ${micro} holds values out of the API's form (createdAt, updatedAt): shown repaired`,
    );
    expect(log()).toContain(
      `Session ${broken} holds values out of the API's form (createdAt, updatedAt): left out of its list`,
    );
    expect(log()).not.toContain(fine);
    // Each is reached by its id: the repaired one in the API's form, the other a 500 without internals.
    const summary = (id: string) => withKey(server, owner.apiKey, 'GET', `/api/sessions/${id}/summary`);
    const repaired = await summary(offset);
    expect(repaired.status).toBe(200);
    expect(SessionSummaryResponseSchema.parse(await repaired.json()).session.createdAt).toBe(
      '2026-11-26T12:09:05.500Z',
    );
    const refused = await summary(broken);
    expect(refused.status).toBe(500);
    expect(await refused.text()).not.toContain('not a time');
  });
});
