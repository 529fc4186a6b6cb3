import { describe, expect, it } from 'vitest';
import { createApprovals } from '../../src-main/approvals/service.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { importSessions } from '../../src-main/data/import.js';
import { EventBus } from '../../src-main/events/event-bus.js';
import type { Approval } from '../../src-shared/approvals.js';
import {
  exportText,
  linesOf,
  open,
  OWNER,
  sameAccounts,
  seedRich,
  sessionLines,
} from '../helpers/export-import.js';
import { until } from '../helpers/until.js';
import { storageOf } from '../../src-main/store/sqljs-storage.js';

/** What agents asked and who decided: kept in the session's record, exported and imported. */
describe('requests in the export', () => {
  it('carries each request with its decision; one still pending arrives expired', async () => {
    const source = await open();
    const { organizationId, ids } = await seedRich(source);
    const ownerId = source.repos.users.findByEmail(OWNER)!.id;
    await source.store.write(() =>
      source.repos.workspaces.putSettings(organizationId, { agent: 'demo', approvals: 'ask' }),
    );
    const approvals = createApprovals({
      storage: storageOf(source.store),
      clock: systemClock,
      events: new EventBus(),
      logger: silentLogger,
    });
    const run = (await approvals.forRun(
      { id: ids[0], workspaceId: organizationId },
      'claude-code',
      '/session-folder',
    ))!;
    const request = (command: string) => ({
      title: command,
      tool: { kind: 'execute', name: 'Bash', input: { command } },
      options: [
        { id: 'allow', kind: 'allow_once' as const, label: 'Allow once' },
        { id: 'reject', kind: 'reject_once' as const, label: 'Reject' },
      ],
      detail: `$ ${command}`,
    });
    const answered = run.ask(request('rm -rf build'));
    const [first] = await until(
      () => approvals.pending(organizationId),
      (found) => found.length === 1,
    );
    await approvals.decide(
      source.repos.approvals.find(first!.id)!,
      { decision: 'reject_once', message: 'Keep the build.' },
      { kind: 'user', userId: ownerId, name: 'Owner' },
    );
    expect(await answered).toEqual({
      decision: 'reject_once',
      optionId: 'reject',
      message: 'Keep the build.',
    });
    void run.ask(request('make release'));
    await until(
      () => approvals.pending(organizationId),
      (found) => found.length === 1,
    );

    const exported = await exportText(source, organizationId);
    const session = sessionLines(exported).find((s) => s.id === ids[0])!;
    const carried = session.approvals as Approval[];
    expect(carried.map((a) => [a.title, a.decision ?? 'pending'])).toEqual([
      ['rm -rf build', 'reject_once'],
      ['make release', 'pending'],
    ]);
    expect(carried[0]).toMatchObject({
      message: 'Keep the build.',
      decidedBy: { kind: 'user', userId: ownerId, name: 'Owner' },
    });

    const target = await sameAccounts(source, organizationId);
    const report = await importSessions(linesOf(exported), organizationId, target);
    expect(report).toMatchObject({ skippedCount: 0 });
    const imported = target.repos.approvals.ofSession(ids[0]);
    expect(imported[0]).toMatchObject({ ...carried[0], sessionId: ids[0] });
    expect(imported[1]).toMatchObject({
      title: 'make release',
      decision: 'expired',
      decidedBy: { kind: 'sessiondesk', reason: 'imported' },
    });
    expect(target.repos.approvals.pending(organizationId)).toEqual([]);
    await run.end('run-ended');
  });

  it('carries a request an approval rule decided, with the rule and what it matched', async () => {
    const source = await open();
    const { organizationId, ids } = await seedRich(source);
    const rule = { kind: 'execute' as const, pattern: 'rm *', decision: 'reject' as const };
    await source.store.write(() =>
      source.repos.workspaces.putSettings(organizationId, { agent: 'demo', approvalRules: [rule] }),
    );
    const approvals = createApprovals({
      storage: storageOf(source.store),
      clock: systemClock,
      events: new EventBus(),
      logger: silentLogger,
    });
    const folder = '/sandboxes/session';
    const run = (await approvals.forRun({ id: ids[0], workspaceId: organizationId }, 'acp:gemini', folder))!;
    const answer = await run.ask({
      title: 'Tidy up',
      tool: { kind: 'execute', name: 'run_shell_command', input: {} },
      options: [
        { id: 'yes', kind: 'allow_once', label: 'Allow' },
        { id: 'no', kind: 'reject_once', label: 'Reject' },
      ],
      detail: '$ rm -rf build',
      subject: { command: 'rm   -rf build' },
    });
    expect(answer).toEqual({
      decision: 'reject_once',
      optionId: 'no',
      message: "This workspace's approval rules reject this request (rule 1: reject execute `rm *`).",
    });
    // Never put to anyone.
    expect(await approvals.pending(organizationId)).toEqual([]);

    const exported = await exportText(source, organizationId);
    const [carried] = sessionLines(exported).find((s) => s.id === ids[0])!.approvals as Approval[];
    expect(carried).toMatchObject({
      tool: { kind: 'execute', command: 'rm -rf build' },
      decision: 'reject_once',
      decidedBy: { kind: 'rule', index: 0, rule },
    });
    const target = await sameAccounts(source, organizationId);
    expect(await importSessions(linesOf(exported), organizationId, target)).toMatchObject({
      skippedCount: 0,
    });
    expect(target.repos.approvals.ofSession(ids[0])[0]).toMatchObject({ ...carried, sessionId: ids[0] });
    await run.end('run-ended');
  });
});
