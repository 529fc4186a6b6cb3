import { cpSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newId } from '../../src-main/accounts/secrets.js';
import {
  ListSessionsResponseSchema,
  type HistoryKind,
  type SessionSummary,
} from '../../src-shared/sessions.js';
import { ROOT, runCli } from './cli.js';
import { seedDataDir } from './seed.js';
import { addHistorySource, tempDir, withKey, type seedWorkspace, type TestServer } from './server.js';
import { until } from './until.js';

/** An imported Claude Code session of `folder`, written to the store as an import writes it. */
export async function seedImported(
  server: TestServer,
  owner: Awaited<ReturnType<typeof seedWorkspace>>,
  folder: string,
): Promise<string> {
  const id = newId('session');
  const at = new Date().toISOString();
  await server.storage.write(async (tx) => {
    await tx.sessions.insert({
      id,
      workspaceId: owner.organizationId,
      authorId: owner.user.userId,
      title: 'From a terminal',
      model: 'claude-sonnet-4-5',
      createdAt: at,
      baseBranch: 'main',
    });
    await tx.sessions.appendMessage(
      id,
      owner.organizationId,
      { type: 'user', message: { content: 'Hi' } },
      owner.user.userId,
      at,
    );
    await tx.history.setSessionSource(id, {
      kind: 'claude-code',
      // The CLI's folder is not inside the work folder: an agent working there would reach it.
      path: join(`${folder}-cli`, '.claude', 'projects', 'p', 'c.jsonl'),
      cwd: folder,
      conversationId: '6f1c1f64-3b5e-4b8e-9d5c-2a4c1f0e9b11',
    });
    await tx.sessions.update(id, { status: 'completed' }, at);
  });
  return id;
}

/**
 * A recorded Claude Code scenario (test/fixtures/history) copied to a folder of its own, as a
 * CLI root a source can name. With `cwd`, the folder the recording ran in is replaced by that
 * one in every line, as if the person had run it there; `writtenAgoMs` dates the session file
 * back (a file written long ago is a session that ended).
 */
export function copyClaudeScenario(
  scenario: string,
  options: { cwd?: string; writtenAgoMs?: number } = {},
): { root: string; file: string; cwd: string } {
  const root = tempDir('imported-claude-');
  cpSync(join(ROOT, 'test', 'fixtures', 'history', 'claude-code', '2.1.330', scenario), root, {
    recursive: true,
  });
  const projects = join(root, 'projects');
  const [project] = readdirSync(projects);
  const name = readdirSync(join(projects, project!)).find((entry) => entry.endsWith('.jsonl'));
  const file = join(projects, project!, name!);
  const text = readFileSync(file, 'utf8');
  const recorded = /"cwd":"([^"]+)"/u.exec(text)![1]!;
  if (options.cwd !== undefined)
    writeFileSync(file, text.replaceAll(`"cwd":"${recorded}"`, `"cwd":"${options.cwd}"`));
  if (options.writtenAgoMs !== undefined) {
    const at = new Date(Date.now() - options.writtenAgoMs);
    utimesSync(file, at, at);
  }
  return { root, file, cwd: options.cwd ?? recorded };
}

/**
 * Adds `rootDir` as a history source of the owner's workspace, as the administrator does in
 * Settings, and waits for the server's follower to import its one session; that session.
 */
export async function followedSession(
  server: TestServer,
  owner: Awaited<ReturnType<typeof seedWorkspace>>,
  source: { kind: HistoryKind; rootDir: string },
): Promise<SessionSummary> {
  await addHistorySource(server, owner.user.cookie, owner.organizationId, source);
  const list = await until(
    async () =>
      ListSessionsResponseSchema.parse(
        await (await withKey(server, owner.apiKey, 'GET', '/api/sessions?source=imported')).json(),
      ),
    (found) => found.sessions.length === 1,
  );
  const [session] = list.sessions;
  if (!session) throw new Error(`nothing was imported from ${source.rootDir}`);
  return session;
}

/**
 * A seeded data directory under `root` whose workspace has imported the Claude Code folder
 * `claudeDir` with `sessiondesk history import`, as a person does from a terminal.
 */
export async function dataDirImporting(root: string, claudeDir: string, home: string) {
  const dataDir = join(root, 'data');
  mkdirSync(dataDir);
  const data = await seedDataDir(dataDir);
  const imported = await runCli(
    [
      'history',
      'import',
      '--workspace',
      data.organizationId,
      '--claude-dir',
      claudeDir,
      '--data-dir',
      dataDir,
    ],
    { HOME: home, CLAUDE_CONFIG_DIR: '', CODEX_HOME: '' },
  );
  if (imported.code !== 0) throw new Error(`history import failed: ${imported.stderr}`);
  return { dataDir, data };
}
