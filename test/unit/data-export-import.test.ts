import { describe, expect, it } from 'vitest';
import { ExportHeaderSchema, ExportSessionSchema, type ExportSession } from '../../src-main/data/format.js';
import { formatImportReport, ImportInputError, importSessions } from '../../src-main/data/import.js';
import { SessionFullSchema } from '../../src-shared/sessions.js';
import {
  at,
  comparable,
  exportText,
  linesOf,
  MEMBER,
  open,
  OWNER,
  RICH_TRANSCRIPTS,
  seedRich,
  sessionLines,
  T0,
  toVersion1,
  workspace,
} from '../helpers/export-import.js';
import { FULL_TASKS, FULL_TRANSCRIPT } from '../helpers/seed.js';

describe('export', () => {
  it('writes a header, then per session its line, a line per message and an end, newest first', async () => {
    const db = await open();
    const { organizationId, ids } = await seedRich(db);
    const text = await exportText(db, organizationId);
    const lines = text.trimEnd().split('\n');

    const header = ExportHeaderSchema.parse(JSON.parse(lines[0] as string));
    expect(header).toEqual({
      type: 'sessiondesk.export',
      version: 2,
      organizationId,
      workspace: { name: 'Acme' },
      exportedAt: at(60),
      sessionCount: 3,
    });
    const types = lines.slice(1).map((line) => (JSON.parse(line) as { type: string }).type);
    const messages = (n: number) => Array<string>(n).fill('message');
    expect(types).toEqual([
      ...['session', 'session-end'],
      ...['session', 'message', 'session-end'],
      ...['session', ...messages(FULL_TRANSCRIPT.length + 1), 'session-end'],
      'end',
    ]);
    // A message line ends with the message, copied as stored.
    expect(lines[4]).toMatch(/^\{"type":"message","createdAt":"[^"]+","authorEmail":"[^"]+","message":\{/u);
    expect(JSON.parse(lines.at(-1) as string)).toEqual({ type: 'end', sessionCount: 3 });
    const sessions = sessionLines(text).map((s) => ExportSessionSchema.parse(s));
    expect(sessions.map((s) => s.id)).toEqual([ids[2], ids[1], ids[0]]);
    // Each session is also the API's full form (GET /api/sessions/{id}) with more fields.
    for (const session of sessionLines(text)) expect(SessionFullSchema.safeParse(session).success).toBe(true);

    const full = sessions[2] as ExportSession;
    expect(full).toMatchObject({
      title: 'Fix the flaky login test',
      status: 'completed',
      createdAt: at(0),
      updatedAt: at(13),
      author: { name: 'Owner', email: OWNER },
      metadata: {
        repository: 'acme/web',
        branch: 'agent/fix-flaky-login',
        prNumber: 42,
        prUrl: 'https://github.com/acme/web/pull/42',
        prStatus: 'merged',
      },
      repoUrl: 'https://github.com/acme/web',
      baseBranch: 'main',
      prMergedAt: at(12),
      tasks: FULL_TASKS,
    });
    expect(full.messages).toEqual(RICH_TRANSCRIPTS[0]);
    expect(full.messageMeta?.[0]).toEqual({ createdAt: at(0), authorEmail: OWNER });
    expect(full.messageMeta?.[1]).toEqual({ createdAt: at(1) });
    expect(full.messageMeta?.at(-1)).toEqual({ createdAt: at(10), authorEmail: MEMBER });
    expect(sessions[1]?.messages[0]).toEqual({
      type: 'user',
      message: { content: 'Explain the cache', id: 'm1' },
      uuid: 'u-1',
    });
    expect(sessions[0]).toMatchObject({
      status: 'failed',
      messages: [],
      tasks: [],
      messageMeta: [],
      runs: [],
    });
  });

  it('writes JSON as one document holding the same sessions', async () => {
    const db = await open();
    const { organizationId } = await seedRich(db);
    const document = JSON.parse(await exportText(db, organizationId, 'json')) as Record<string, unknown>;
    const { sessions, ...header } = document;
    expect(ExportHeaderSchema.parse(header).organizationId).toBe(organizationId);
    expect(sessions).toEqual(sessionLines(await exportText(db, organizationId)));

    const empty = await workspace(db, OWNER);
    expect(JSON.parse(await exportText(db, empty.organizationId, 'json'))).toMatchObject({ sessions: [] });
    expect((await exportText(db, empty.organizationId)).trimEnd().split('\n')).toHaveLength(2);
  });
});

describe('import', () => {
  it('rebuilds every session as it was, from NDJSON and from JSON', async () => {
    const source = await open();
    const { organizationId, ids } = await seedRich(source);
    const ndjson = await exportText(source, organizationId);

    for (const format of ['ndjson', 'json'] as const) {
      const target = await open();
      const into = await workspace(target, OWNER, MEMBER);
      const report = await importSessions(
        linesOf(await exportText(source, organizationId, format)),
        into.organizationId,
        target,
      );
      expect(report).toMatchObject({
        format,
        imported: 3,
        messages: FULL_TRANSCRIPT.length + 2,
        alreadyPresent: 0,
        skippedCount: 0,
        skipped: [],
        source: { organizationId, workspaceName: 'Acme', exportedAt: at(60) },
      });
      expect(report.reattributed).toBeUndefined();

      expect(sessionLines(await exportText(target, into.organizationId)).map(comparable)).toEqual(
        sessionLines(ndjson).map(comparable),
      );
      for (const id of ids) {
        const { authorId: _a, authorName: _n, workspaceId: _w, ...before } = source.repos.sessions.find(id)!;
        const { authorId: _b, authorName: _m, workspaceId, ...after } = target.repos.sessions.find(id)!;
        expect(workspaceId).toBe(into.organizationId);
        expect(after).toEqual(before);
        expect(target.repos.sessions.agentInput(id)).toEqual(source.repos.sessions.agentInput(id));
      }
      expect(target.repos.sessions.find(ids[0])?.authorId).toBe(into.ownerId);
      const now = new Date(T0 + 60 * 60_000);
      expect(target.repos.sessions.stats(into.organizationId, now)).toEqual(
        source.repos.sessions.stats(organizationId, now),
      );
    }
  });

  it('is idempotent: importing the same export again adds nothing and writes nothing', async () => {
    const source = await open();
    const { organizationId } = await seedRich(source);
    const target = await open();
    const into = await workspace(target, OWNER, MEMBER);
    const ndjson = await exportText(source, organizationId);
    await importSessions(linesOf(ndjson), into.organizationId, target);
    const journalBytes = target.store.status().journalBytes;

    const again = await importSessions(linesOf(ndjson), into.organizationId, target);
    expect(again).toMatchObject({ imported: 0, messages: 0, alreadyPresent: 3, skippedCount: 0 });
    expect(target.store.status().journalBytes).toBe(journalBytes);
    expect(formatImportReport(again)).toMatch(
      /^imported 0 sessions \(0 messages\), 3 already present, skipped 0\n/u,
    );
  });

  it('skips what is invalid in version 1, says where and why, and imports the rest whole', async () => {
    const source = await open();
    const { organizationId, ids } = await seedRich(source);
    const [header, newest, middle, oldest] = toVersion1(await exportText(source, organizationId))
      .trimEnd()
      .split('\n') as [string, string, string, string];
    const edit = (line: string, change: (s: Record<string, unknown>) => void) => {
      const session = JSON.parse(line) as Record<string, unknown>;
      change(session);
      return JSON.stringify(session);
    };
    const input = [
      header,
      newest,
      '{"type":"session", oops',
      edit(middle, (s) => ((s.messages as Record<string, unknown>[])[0]!.type = 'robot')),
      // What could reach git on a follow-up is checked as the API checks it.
      edit(oldest, (s) => (s.repoUrl = 'ext::sh -c touch% /tmp/pwned')),
      header,
      '',
      edit(oldest, (s) => (s.messageMeta = [])),
    ].join('\n');
    const target = await open();
    const into = await workspace(target, OWNER, MEMBER);

    const report = await importSessions(linesOf(input), into.organizationId, target);
    expect(report).toMatchObject({ imported: 1, messages: 0, skippedCount: 5 });
    expect(report.skipped.map((s) => s.at)).toEqual(['line 3', 'line 4', 'line 5', 'line 6', 'line 8']);
    const [notJson, badMessage, badRepo, secondHeader, badMeta] = report.skipped.map((s) => s.reason);
    expect(notJson).toMatch(/^not JSON/u);
    expect(badMessage).toMatch(/^messages\.0/u);
    expect(badRepo).toMatch(/^repoUrl: must look like https/u);
    expect(secondHeader).toMatch(/second export header/u);
    expect(badMeta).toMatch(/messageMeta: has 0 entries for 6 messages/u);
    // Nothing of a skipped session was written.
    expect(target.repos.sessions.find(ids[1])).toBeNull();
    expect(target.repos.sessions.find(ids[0])).toBeNull();
    expect(target.repos.sessions.find(ids[2])?.workspaceId).toBe(into.organizationId);

    const text = formatImportReport(report);
    expect(text).toMatch(/^imported 1 session \(0 messages\), skipped 5:\n {2}line 3: not JSON/u);
    expect(text).toContain('line 5: repoUrl: must look like');
  });

  it('refuses an input that is not an export, and writes nothing', async () => {
    const target = await open();
    const into = await workspace(target, OWNER);
    const header = JSON.stringify({
      type: 'sessiondesk.export',
      version: 1,
      organizationId: 'org_x',
      workspace: { name: 'X' },
      exportedAt: at(0),
    });
    const cases: [string, RegExp][] = [
      ['', /empty/u],
      ['\n\n', /empty/u],
      ['hello world', /not a Session Desk export: neither NDJSON/u],
      ['{"type":"session","id":"ses_x"}', /header is invalid/u],
      [
        header.replace('"version":1', '"version":3'),
        /format version 3; this Session Desk reads versions 1 and 2/u,
      ],
      ['{"sessions": 3}', /no header and no "sessions" array/u],
      ['[1, 2, 3]', /does not start with "\{"/u],
      ['{"type": "sessiondesk.export",\n"sessions": [}', /neither NDJSON .* nor a JSON document \(/u],
    ];
    const journalBytes = target.store.status().journalBytes;
    for (const [input, message] of cases) {
      const attempt = importSessions(linesOf(input), into.organizationId, target);
      await expect(attempt).rejects.toBeInstanceOf(ImportInputError);
      await expect(attempt).rejects.toThrow(message);
    }
    expect(target.store.status().journalBytes).toBe(journalBytes);
    await expect(importSessions(linesOf(header), 'org_nope', target)).rejects.toThrow(/not found/u);
  });

  it('reads a JSON document however it is laid out', async () => {
    const source = await open();
    const { organizationId } = await seedRich(source);
    const target = await open();
    const into = await workspace(target, OWNER, MEMBER);
    const pretty = JSON.stringify(JSON.parse(await exportText(source, organizationId, 'json')), null, 2);
    const report = await importSessions(linesOf(pretty.replace(/\n/gu, '\r\n')), into.organizationId, target);
    expect(report).toMatchObject({ format: 'json', imported: 3, skippedCount: 0 });
  });

  it('gives sessions of people without an account here to the owner, and says so', async () => {
    const source = await open();
    const { organizationId, ids } = await seedRich(source);
    const target = await open();
    const into = await workspace(target, 'someone@else.test');

    const report = await importSessions(
      linesOf(await exportText(source, organizationId)),
      into.organizationId,
      target,
    );
    expect(report.imported).toBe(3);
    expect(report.reattributed).toEqual({
      ownerEmail: 'someone@else.test',
      authors: expect.arrayContaining([
        { email: OWNER, sessions: 2 },
        { email: MEMBER, sessions: 2 },
      ]) as unknown,
    });
    for (const id of ids) expect(target.repos.sessions.find(id)?.authorId).toBe(into.ownerId);
    expect(formatImportReport(report)).toContain('attributed to the workspace owner someone@else.test: ');
  });

  it('skips sessions whose id another workspace holds, and flags a file cut short', async () => {
    const db = await open();
    const { organizationId } = await seedRich(db);
    const other = await workspace(db, OWNER);
    const lines = (await exportText(db, organizationId)).trimEnd().split('\n');

    // Cut inside the last session: it has neither its session-end line nor the end line.
    const report = await importSessions(linesOf(lines.slice(0, -3).join('\n')), other.organizationId, db);
    expect(report).toMatchObject({ imported: 0, skippedCount: 3, truncated: { announced: 3, found: 3 } });
    expect(report.skipped[0]?.reason).toMatch(/already exists in another workspace/u);
    expect(report.skipped[2]?.reason).toMatch(
      /^the session's lines stop after 5 of its 6 messages, without its session-end line/u,
    );
    expect(formatImportReport(report)).toContain('the export has no end line: it may have been cut short');

    // Cut between sessions: the header announced more than there are.
    const between = lines.slice(0, lines.lastIndexOf(lines.find((l) => l.includes('"session-end"'))!) + 1);
    const cut = await importSessions(linesOf(between.join('\n')), other.organizationId, db);
    expect(cut).toMatchObject({ skippedCount: 1, truncated: { announced: 3, found: 1 } });
    expect(formatImportReport(cut)).toContain('announced 3 sessions but holds 1: it may have been cut short');
  });
});
