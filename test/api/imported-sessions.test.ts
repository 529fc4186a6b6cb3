// Imported sessions over HTTP: the list filters them by agent and by source, a stop never
// pretends to stop the person's terminal, and their changes are said to be in the person's folder.
import { execFileSync } from 'node:child_process';
import { appendFileSync, cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionChangesResponseSchema } from '../../src-shared/changes.js';
import { ListSessionsResponseSchema, type SessionSummary } from '../../src-shared/sessions.js';
import { getSession } from '../helpers/agent-runs.js';
import { useCleanups } from '../helpers/cleanups.js';
import { ROOT } from '../helpers/cli.js';
import { copyClaudeScenario, followedSession } from '../helpers/imported.js';
import {
  addHistorySource,
  asUser,
  createSession,
  seedWorkspace,
  startTestServer,
  tempDir,
  withKey,
  type TestServer,
} from '../helpers/server.js';
import { until } from '../helpers/until.js';

const cleanup = useCleanups();

/** A long time ago for a session file: its session ended. */
const LONG_AGO_MS = 24 * 60 * 60 * 1000;

async function listed(server: TestServer, apiKey: string, query: string) {
  const response = await withKey(server, apiKey, 'GET', `/api/sessions?${query}`);
  const text = await response.text();
  return {
    status: response.status,
    text,
    sessions: response.status === 200 ? ListSessionsResponseSchema.parse(JSON.parse(text)).sessions : [],
    total: response.status === 200 ? ListSessionsResponseSchema.parse(JSON.parse(text)).total : undefined,
  };
}

const agentsOf = (sessions: SessionSummary[]) => sessions.map((s) => s.agent ?? 'none').sort();

async function serverWithImports() {
  const server = await startTestServer();
  cleanup(() => server.dispose());
  const owner = await seedWorkspace(server);
  await createSession(server, owner.user.cookie, {
    organizationId: owner.organizationId,
    initialMessage: 'A session run here',
  });
  const claude = copyClaudeScenario('plain-answer', { writtenAgoMs: LONG_AGO_MS });
  cleanup(() => rmSync(claude.root, { recursive: true, force: true }));
  const codex = tempDir('imported-codex-');
  cleanup(() => rmSync(codex, { recursive: true, force: true }));
  cpSync(join(ROOT, 'test', 'fixtures', 'history', 'codex', '0.169.0', 'plain-answer'), codex, {
    recursive: true,
  });
  await addHistorySource(server, owner.user.cookie, owner.organizationId, {
    kind: 'claude-code',
    rootDir: claude.root,
  });
  await addHistorySource(server, owner.user.cookie, owner.organizationId, { kind: 'codex', rootDir: codex });
  const all = await until(
    () => listed(server, owner.apiKey, ''),
    (list) => list.sessions.length === 3,
  );
  expect(agentsOf(all.sessions)).toEqual(['claude-code', 'codex', 'demo']);
  return { server, owner, claude };
}

describe('GET /api/sessions filters by agent and by source', () => {
  it('takes agent= as search does, and source=imported or run', async () => {
    const { server, owner } = await serverWithImports();
    const list = (query: string) => listed(server, owner.apiKey, query);

    expect(agentsOf((await list('agent=claude-code')).sessions)).toEqual(['claude-code']);
    expect(agentsOf((await list('agent=codex')).sessions)).toEqual(['codex']);
    expect(agentsOf((await list('agent=demo')).sessions)).toEqual(['demo']);
    expect((await list('agent=gemini')).sessions).toEqual([]);
    expect(agentsOf((await list('source=imported')).sessions)).toEqual(['claude-code', 'codex']);
    expect(agentsOf((await list('source=run')).sessions)).toEqual(['demo']);
    expect((await list('source=run&agent=codex')).sessions).toEqual([]);
    // Paged, the total counts what the filters match.
    const page = await list('source=imported&limit=1');
    expect(page.sessions).toHaveLength(1);
    expect(page.total).toBe(2);

    // An agent kind search does not know is refused as search refuses it, with the same words.
    const bad = await list('agent=cursor');
    expect(bad.status).toBe(400);
    const searched = await withKey(server, owner.apiKey, 'GET', '/api/search?q=hello&agent=cursor');
    expect(searched.status).toBe(400);
    const detail = (text: string) =>
      (JSON.parse(text) as { error: { details: { path: string; message: string }[] } }).error.details;
    expect(detail(bad.text)).toEqual(detail(await searched.text()));
    expect(detail(bad.text)[0]).toMatchObject({ path: 'query.agent' });
    expect(detail(bad.text)[0]?.message).toContain('claude-code');

    const badSource = await list('source=terminal');
    expect(badSource.status).toBe(400);
    expect(detail(badSource.text)[0]).toMatchObject({ path: 'query.source' });
    expect(detail(badSource.text)[0]?.message).toContain('imported');
  });
});

describe('the changes of an imported session', () => {
  it("are said to be in the person's own folder, named, not missing a repository", async () => {
    const work = tempDir('imported-work-');
    cleanup(() => rmSync(work, { recursive: true, force: true }));
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: work });
    execFileSync('git', ['remote', 'add', 'origin', 'https://github.com/acme/widgets'], { cwd: work });
    const claude = copyClaudeScenario('plain-answer', { cwd: work, writtenAgoMs: LONG_AGO_MS });
    cleanup(() => rmSync(claude.root, { recursive: true, force: true }));
    const server = await startTestServer();
    cleanup(() => server.dispose());
    const owner = await seedWorkspace(server);
    const session = await followedSession(server, owner, { kind: 'claude-code', rootDir: claude.root });
    expect(session.metadata.repository).toBe('acme/widgets');

    const response = await withKey(server, owner.apiKey, 'GET', `/api/sessions/${session.id}/changes`);
    expect(response.status).toBe(200);
    const changes = SessionChangesResponseSchema.parse(await response.json());
    expect(changes).toMatchObject({ available: false, reason: 'own_folder', folder: work });
    if (changes.available) throw new Error('unreachable');
    expect(changes.message).toContain(work);
    expect(changes.message).toContain('Claude Code');
    expect(changes.message).not.toMatch(/no repository/u);
  });
});

describe('stopping a session that goes on in the person’s terminal', () => {
  it('answers 409 saying so; marking it finished adds no message, and later terminal lines come in order', async () => {
    // The first run of a conversation, just written: the person's terminal is at it.
    const claude = copyClaudeScenario('resume');
    cleanup(() => rmSync(claude.root, { recursive: true, force: true }));
    const lines = readFileSync(claude.file, 'utf8').split('\n');
    const firstRunEnd = lines.findIndex((l) => l.includes('"type":"cost-state"')) + 1;
    writeFileSync(claude.file, `${lines.slice(0, firstRunEnd).join('\n')}\n`);

    const server = await startTestServer();
    cleanup(() => server.dispose());
    const owner = await seedWorkspace(server);
    const imported = await followedSession(server, owner, { kind: 'claude-code', rootDir: claude.root });
    expect(imported).toMatchObject({ status: 'active', messageCount: 3 });
    expect(imported.agentState).toBeUndefined();
    const { id } = imported;

    const stop = await withKey(server, owner.apiKey, 'POST', `/api/sessions/${id}/stop`);
    expect(stop.status).toBe(409);
    const why = ((await stop.json()) as { error: { message: string } }).error.message;
    expect(why).toContain('Claude Code');
    expect(why).toContain('terminal');
    expect(why).toContain('"status": "completed"');
    const untouched = await getSession(server, owner.user.cookie, id);
    expect(untouched).toMatchObject({ status: 'active', messages: expect.any(Array) as unknown });
    expect(untouched.messages).toHaveLength(3);

    // Marked finished: the status changes, the transcript (the CLI's own) does not.
    const marked = await asUser(server, owner.user.cookie, 'PATCH', `/api/sessions/${id}`, {
      status: 'completed',
    });
    expect(marked.status).toBe(200);
    const finished = await getSession(server, owner.user.cookie, id);
    expect(finished.status).toBe('completed');
    expect(finished.messages).toEqual(untouched.messages);

    // The terminal goes on: its lines follow the earlier ones, and the session is going on again.
    appendFileSync(claude.file, lines.slice(firstRunEnd).join('\n'));
    const after = await until(
      () => getSession(server, owner.user.cookie, id),
      (session) => session.messages.length === 6,
      15_000,
    );
    expect(after.messages.slice(0, 3)).toEqual(untouched.messages);
    expect(after.messages.map((m) => m.type)).toEqual([
      'user',
      'assistant',
      'result',
      'user',
      'assistant',
      'result',
    ]);
    expect(after.messages.some((m) => m.type === 'result' && m.stopped === true)).toBe(false);
    expect(after.status).toBe('active');
  });
});
