import { rmSync } from 'node:fs';
import { createAccounts } from '../../src-main/accounts/accounts.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import type { HistoryDeps } from '../../src-main/history/history-deps.js';
import type { HistorySourceRecord } from '../../src-main/store/history.js';
import { createRepositories } from '../../src-main/store/repositories.js';
import { storageOf } from '../../src-main/store/sqljs-storage.js';
import { Store } from '../../src-main/store/store.js';
import { tempDir } from './server.js';

/**
 * A data directory of its own with a workspace (owned by Ada) and a Claude Code history source
 * on `root`, for calling the importer in-process; `cleanup` hears how to close and remove it.
 */
export async function storeWithHistorySource(root: string, cleanup: (undo: () => unknown) => void) {
  const dataDir = tempDir('history-source-');
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  cleanup(async () => {
    await store.close({ snapshot: false });
    rmSync(dataDir, { recursive: true, force: true });
  });
  const repos = createRepositories(store.db);
  const accounts = createAccounts(storageOf(store), systemClock);
  const user = await accounts.createUser({
    email: 'ada@example.test',
    name: 'Ada',
    password: 'correct horse',
  });
  const workspace = await accounts.createWorkspace({ name: 'Acme', ownerEmail: 'ada@example.test' });
  const source: HistorySourceRecord = {
    id: 'hsrc_test',
    workspaceId: workspace.organizationId,
    kind: 'claude-code',
    rootDir: root,
    authorId: user.id,
    paused: false,
    sessionCount: 0,
    messageCount: 0,
    createdAt: systemClock.now().toISOString(),
  };
  await store.write(() => repos.history.insertSource(source));
  const deps: HistoryDeps = { storage: storageOf(store), clock: systemClock };
  /** The workspace's sessions, with the conversation each was imported from. */
  const sessions = () =>
    repos.sessions.list(workspace.organizationId, {}, {}).map((row) => ({
      conversation: row.source?.conversationId,
      messages: row.messageCount,
      status: row.status,
    }));
  /** Their ids, in the same order (apart: two stores' sessions compare equal without them). */
  const sessionIds = () => repos.sessions.list(workspace.organizationId, {}, {}).map((row) => row.id);
  return { deps, source, sessions, sessionIds, store };
}
