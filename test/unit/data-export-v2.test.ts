import { tokenCost } from '../../src-shared/model-prices.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src-main/clock.js';
import { formatImportReport, importSessions } from '../../src-main/data/import.js';
import { EventBus } from '../../src-main/events/event-bus.js';
import { createSessionService } from '../../src-main/sessions/service.js';
import { readAllMessages } from '../../src-main/sessions/transcript-reads.js';
import type { Message } from '../../src-shared/sessions.js';
import {
  at,
  exportText,
  linesOf,
  MEMBER,
  open,
  OWNER,
  RICH_TRANSCRIPTS,
  sameAccounts,
  seedRich,
  workspace,
  type Opened,
} from '../helpers/export-import.js';
import { storageOf, readsOf } from '../../src-main/store/sqljs-storage.js';

/** A session with `count` assistant messages of about `bytes` each. */
async function bigSession(
  db: Opened,
  organizationId: string,
  count: number,
  bytes: number,
  model = 'claude-opus-4-6',
) {
  const id = `ses_big${String(count).padStart(19, '0')}`;
  const [prompt, ...answers] = bigTranscript(count, bytes);
  const ownerId = db.repos.users.findByEmail(OWNER)!.id;
  await db.store.write(() =>
    db.repos.sessions.insert({
      id,
      workspaceId: organizationId,
      authorId: ownerId,
      title: 'A long one',
      model,
      createdAt: at(100),
      baseBranch: 'main',
      initialMessage: (prompt as Extract<Message, { type: 'user' }>).message.content,
    }),
  );
  for (const [i, message] of answers.entries()) {
    await db.store.write(() =>
      db.repos.sessions.appendMessage(id, organizationId, message, null, at(101 + i)),
    );
  }
  return id;
}

/** What bigSession writes: a prompt, then `count` answers of `bytes` each. */
function bigTranscript(count: number, bytes: number): Message[] {
  return [
    { type: 'user', message: { content: 'Read the whole repository.' } },
    ...Array.from({ length: count }, (_, i): Message => {
      const text = `${i} `.padEnd(bytes, 'x');
      return { type: 'assistant', message: { content: [{ type: 'text', text }] } };
    }),
  ];
}

describe('export version 2', () => {
  it('round trip: export, import into the same accounts, export again gives the same bytes', async () => {
    const source = await open();
    const { organizationId } = await seedRich(source);
    await bigSession(source, organizationId, 3, 1000);
    const first = await exportText(source, organizationId);

    const target = await sameAccounts(source, organizationId);
    const report = await importSessions(linesOf(first), organizationId, target);
    expect(report).toMatchObject({ imported: 4, skippedCount: 0 });
    expect(await exportText(target, organizationId)).toBe(first);
  });

  it('carries a session started without a model: its agent ran its own default', async () => {
    const source = await open();
    const { organizationId } = await seedRich(source);
    const id = await bigSession(source, organizationId, 1, 10, '');
    const target = await sameAccounts(source, organizationId);
    const report = await importSessions(
      linesOf(await exportText(source, organizationId)),
      organizationId,
      target,
    );
    expect(report).toMatchObject({ imported: 4, skippedCount: 0 });
    expect(target.repos.sessions.find(id)?.model).toBe('');
  });

  it('carries the agent kind, the CLI conversation, usage totals and every run', async () => {
    const source = await open();
    const { organizationId, ids } = await seedRich(source);
    const service = createSessionService({
      storage: storageOf(source.store),
      clock: systemClock,
      events: new EventBus(),
    });
    // As the agent host records them.
    await service.runStarts(ids[0], 'claude-code');
    await service.setConversation(ids[0], 'claude-code', 'conv-1f2e');
    await service.recordRun(ids[0], {
      kind: 'claude-code',
      conversationId: 'conv-1f2e',
      usage: {
        inputTokens: 1200,
        outputTokens: 340,
        cacheReadTokens: 9000,
        cacheWriteTokens: 50,
        costUsd: 0.0421,
      },
    });
    await service.recordRun(ids[0], {
      kind: 'codex',
      usage: { inputTokens: 10, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
    // The run is over (finish would also add its result message).
    await source.store.write(() => source.repos.sessions.setAgentState(ids[0], null));
    const before = source.repos.sessions.find(ids[0])!;
    // Codex gave no cost: its run is priced by the table, by the session's model.
    const codexCost = tokenCost(before.model, {
      inputTokens: 10,
      outputTokens: 20,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    expect(before).toMatchObject({ agentKind: 'claude-code', usage: { inputTokens: 1210 } });
    expect(before.usage?.costUsd).toBeCloseTo(0.0421 + (codexCost ?? 0), 9);

    for (const format of ['ndjson', 'json'] as const) {
      const target = await open();
      const into = await workspace(target, OWNER, MEMBER);
      await importSessions(
        linesOf(await exportText(source, organizationId, format)),
        into.organizationId,
        target,
      );
      const after = target.repos.sessions.find(ids[0])!;
      expect(after.agentKind).toBe('claude-code');
      expect(after.usage).toEqual(before.usage);
      expect(target.repos.sessions.conversation(ids[0])).toEqual({ kind: 'claude-code', id: 'conv-1f2e' });
      expect(target.repos.sessions.runs(ids[0])).toEqual(source.repos.sessions.runs(ids[0]));
      expect(target.repos.sessions.runs(ids[0])).toHaveLength(2);
      expect(target.repos.sessions.conversationUsage(ids[0], 'conv-1f2e')).toEqual(
        source.repos.sessions.conversationUsage(ids[0], 'conv-1f2e'),
      );
      const now = new Date();
      expect(target.repos.sessions.stats(into.organizationId, now).costPastWeek).toBeCloseTo(
        0.0421 + (codexCost ?? 0),
        9,
      );
      // A session without runs has none after import either.
      expect(target.repos.sessions.find(ids[2])?.usage).toBeUndefined();
    }
  });

  it('imports a version 1 export as it always did', async () => {
    const fixture = readFileSync(join(import.meta.dirname, '../fixtures/export-v1.ndjson'), 'utf8');
    const target = await open();
    const into = await workspace(target, OWNER, MEMBER);
    const report = await importSessions(linesOf(fixture), into.organizationId, target);
    expect(report.skipped).toEqual([]);
    expect(report).toMatchObject({ format: 'ndjson', imported: 2, messages: 4, skippedCount: 0 });
    expect(report.truncated).toBeUndefined();
    const one = target.repos.sessions.find('ses_v1fixtureone0000000000')!;
    expect(one).toMatchObject({
      status: 'completed',
      messageCount: 4,
      branch: 'agent/fix-flaky-login',
      prStatus: 'merged',
      updatedAt: '2030-01-06T10:06:00.000Z',
    });
    const messages = await readAllMessages(readsOf(target.store), one.id);
    expect(messages.at(-1)).toEqual({ type: 'user', message: { content: 'Also update the changelog' } });
    const memberId = target.repos.users.findByEmail(MEMBER)!.id;
    expect(target.repos.sessions.promptAuthors(one.id).get(4)).toBe(memberId);
    expect(target.repos.sessions.find('ses_v1fixturetwo0000000000')).toMatchObject({
      status: 'failed',
      authorId: memberId,
    });
    // Exported again, it is version 2 and holds the same sessions.
    const again = await exportText(target, into.organizationId);
    expect(JSON.parse(again.slice(0, again.indexOf('\n')))).toMatchObject({ version: 2 });
  });

  it('skips a session with a bad line whole, says which line, and imports the rest', async () => {
    const source = await open();
    const { organizationId, ids } = await seedRich(source);
    const lines = (await exportText(source, organizationId)).trimEnd().split('\n');
    // Sessions newest first: ids[2] (lines 2-3), ids[1] (lines 4-6), ids[0] (lines 7-14).
    const input = [...lines];
    input[4] = input[4]!.replace('"type":"user"', '"type":"robot"');
    input[7] = '{"type":"message", oops';
    const target = await open();
    const into = await workspace(target, OWNER, MEMBER);

    const report = await importSessions(linesOf(input.join('\n')), into.organizationId, target);
    expect(report).toMatchObject({ imported: 1, messages: 0, skippedCount: 2 });
    expect(report.skipped.map((s) => s.at)).toEqual(['line 5', 'line 8']);
    expect(report.skipped[0]?.reason).toMatch(
      new RegExp(`^messages\\.0: message\\.type: .* \\(session ${ids[1]} is not imported\\)$`, 'u'),
    );
    expect(report.skipped[1]?.reason).toMatch(/^not JSON .*\(session ses_\S+ is not imported\)$/u);
    expect(target.repos.sessions.find(ids[1])).toBeNull();
    expect(target.repos.sessions.find(ids[0])).toBeNull();
    expect(target.repos.sessions.find(ids[2])).not.toBeNull();
    expect(formatImportReport(report)).toMatch(
      /^imported 1 session \(0 messages\), skipped 2:\n {2}line 5: /u,
    );

    // A session line that announces another count than its lines hold is refused too.
    const counted = lines.map((line) => line.replace('"messageCount":1}', '"messageCount":2}'));
    const miscounted = await importSessions(linesOf(counted.join('\n')), into.organizationId, target);
    expect(miscounted.skipped.map((s) => s.reason)).toEqual([
      expect.stringMatching(
        /^the session has 1 message lines; its session line announces 2 and its session-end/u,
      ),
    ]);
  });

  it('completes a session imported when it had no messages yet', async () => {
    const source = await open();
    const { organizationId, ids } = await seedRich(source);
    const lines = (await exportText(source, organizationId)).trimEnd().split('\n');
    // ids[1] is lines 4 to 6: its session line, one message, its end; as it was before that message.
    const empty = [
      lines[0],
      lines[3]!.replace('"messageCount":1', '"messageCount":0'),
      `{"type":"session-end","id":"${ids[1]}","messageCount":0}`,
    ].join('\n');
    const target = await open();
    const into = await workspace(target, OWNER, MEMBER);
    await importSessions(linesOf(empty), into.organizationId, target);
    expect(target.repos.sessions.find(ids[1])?.messageCount).toBe(0);

    const report = await importSessions(linesOf(lines.join('\n')), into.organizationId, target);
    expect(report).toMatchObject({ imported: 3, alreadyPresent: 0, skippedCount: 0 });
    expect(await readAllMessages(readsOf(target.store), ids[1])).toEqual(RICH_TRANSCRIPTS[1]);
  });

  it('writes a big session in bounded batches, and completes one that holds fewer messages', async () => {
    const source = await open();
    const { organizationId } = await seedRich(source);
    // About 12 MiB: more than is held in memory, so it is spooled to a file and written in parts.
    const id = await bigSession(source, organizationId, 24, 512 * 1024);
    const full = await exportText(source, organizationId);

    // The same session as it was with only its first 10 messages (an import cut off after a
    // part of it was written looks the same).
    const lines = full.trimEnd().split('\n');
    const start = lines.findIndex((l) => l.includes(`"id":"${id}"`));
    const partial = [
      lines[0],
      lines[start]!.replace('"messageCount":25', '"messageCount":10'),
      ...lines.slice(start + 1, start + 11),
      `{"type":"session-end","id":"${id}","messageCount":10}`,
    ].join('\n');

    const target = await open();
    const into = await workspace(target, OWNER, MEMBER);
    const first = await importSessions(linesOf(partial), into.organizationId, target);
    expect(first).toMatchObject({ imported: 1, messages: 10, truncated: { announced: 4, found: 1 } });
    expect(target.repos.sessions.find(id)?.messageCount).toBe(10);

    const journalBefore = target.store.status().journalBytes;
    const second = await importSessions(linesOf(full), into.organizationId, target);
    expect(second).toMatchObject({ imported: 4, alreadyPresent: 0, skippedCount: 0 });
    expect(second.messages).toBe(15 + 1 + 6);
    // More than one write: the first 10 messages stay, the 15 others come in parts.
    expect(target.store.status().journalBytes).toBeGreaterThan(journalBefore);
    expect(await readAllMessages(readsOf(target.store), id)).toEqual(bigTranscript(24, 512 * 1024));
    const { authorId: _a, authorName: _n, workspaceId: _w, ...before } = source.repos.sessions.find(id)!;
    const { authorId: _b, authorName: _m, workspaceId: _x, ...after } = target.repos.sessions.find(id)!;
    expect(after).toEqual(before);
  });
});
