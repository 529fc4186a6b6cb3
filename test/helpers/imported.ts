import { join } from 'node:path';
import { newId } from '../../src-main/accounts/secrets.js';
import type { seedWorkspace, TestServer } from './server.js';

/** An imported Claude Code session of `folder`, written to the store as an import writes it. */
export async function seedImported(
  server: TestServer,
  owner: Awaited<ReturnType<typeof seedWorkspace>>,
  folder: string,
): Promise<string> {
  const id = newId('session');
  const at = new Date().toISOString();
  await server.store.write(() => {
    server.repos.sessions.insert({
      id,
      workspaceId: owner.organizationId,
      authorId: owner.user.userId,
      title: 'From a terminal',
      model: 'claude-sonnet-4-5',
      createdAt: at,
      baseBranch: 'main',
    });
    server.repos.sessions.appendMessage(
      id,
      owner.organizationId,
      { type: 'user', message: { content: 'Hi' } },
      owner.user.userId,
      at,
    );
    server.repos.history.setSessionSource(id, {
      kind: 'claude-code',
      // The CLI's folder is not inside the work folder: an agent working there would reach it.
      path: join(`${folder}-cli`, '.claude', 'projects', 'p', 'c.jsonl'),
      cwd: folder,
      conversationId: '6f1c1f64-3b5e-4b8e-9d5c-2a4c1f0e9b11',
    });
    server.repos.sessions.update(id, { status: 'completed' }, at);
  });
  return id;
}
