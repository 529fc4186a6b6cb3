import { dirname, sep } from 'node:path';
import type { HistoryKind } from '../../src-shared/sessions.js';
import type { HistorySourceRecord } from '../store/history.js';
import { importFile, withSourceLock } from './importer.js';
import { type HistoryDeps } from './history-deps.js';
import { sessionFiles, Skips } from './session-files.js';

/** How deep a session file lies under its CLI's root folder. */
const DEPTH: Record<HistoryKind, number> = {
  'claude-code': 3, // projects/<project>/<session>.jsonl
  codex: 5, // sessions/YYYY/MM/DD/rollout-….jsonl
  gemini: 4, // tmp/<project>/chats/session-….jsonl
  'qwen-code': 4, // projects/<project>/chats/<session>.jsonl
  opencode: 1, // opencode.db#<session>
};

/** The CLI's root folder a session file lies in (`~/.claude`, `~/.codex`, `~/.gemini`). */
export function rootOfSessionFile(kind: HistoryKind, path: string): string {
  let root = path;
  for (let i = 0; i < DEPTH[kind]; i += 1) root = dirname(root);
  return root;
}

/**
 * While a run of Session Desk's own resumes an imported session, its CLI appends to the
 * session's file, the one file of the person's CLI folder its sandbox has. The run's parsed output is the session's record, so the file is held: the follower
 * leaves it alone, and when the run ends the file is read past what the CLI wrote without
 * recording it again. What is appended later (the person resuming in a terminal) is imported
 * as before.
 */
export function createRunHolds(deps: HistoryDeps) {
  // A continuation a crash cut off is held from the start, until the recovery after the restart
  // reads past what its CLI wrote (AgentHost.recoverInterrupted): the follower must not import it
  // first.
  const { repos } = deps.storage;
  const held = new Set<string>();
  /** Filled before the server is ready: the follower's first scan waits for it (`ready`). */
  const ready = (async () => {
    for (const id of await repos.sessions.runningIds()) {
      if ((await repos.sessions.find(id))?.source) held.add(id);
    }
  })();
  const withHolds: HistoryDeps = { ...deps, holds: held };

  async function sourceOf(sessionId: string): Promise<HistorySourceRecord | null> {
    const row = await repos.sessions.find(sessionId);
    if (!row?.source) return null;
    const { kind, path } = row.source;
    return (
      (await repos.history.sources(row.workspaceId)).find(
        (s) =>
          s.kind === kind &&
          (path.startsWith(s.rootDir + sep) || s.rootDir === rootOfSessionFile(kind, path)),
      ) ?? null
    );
  }

  /** Reads the files of the session alone: recorded, or only read past when `discard`. */
  async function readSessionFiles(source: HistorySourceRecord, sessionId: string, discard: boolean) {
    // What is not read here is noted by the follower's and the command's imports.
    for (const file of await sessionFiles(source.kind, source.rootDir, new Skips(source.rootDir))) {
      await importFile(withHolds, source, file, { only: sessionId, discard });
    }
  }

  return {
    /** Sessions held now: what the follower and the import skip. */
    held: held as ReadonlySet<string>,
    ready,

    /**
     * Before the run: what the file gained so far is imported, then the file is held. The run's
     * CLI works in the session's own CLI home, with this one file bound in (see
     * agents/kinds/cli/cli-homes.ts): it appends to it, and nothing else of the CLI's folder is reachable.
     */
    async hold(sessionId: string): Promise<void> {
      held.add(sessionId);
      const source = await sourceOf(sessionId);
      if (source) await withSourceLock(source.id, () => readSessionFiles(source, sessionId, false));
    },

    /**
     * After the run (or, for a run a crash cut off, in the recovery after the restart): the file
     * is read past what the run's CLI wrote, then followed again.
     */
    async release(sessionId: string): Promise<void> {
      try {
        const source = await sourceOf(sessionId);
        if (source) await withSourceLock(source.id, () => readSessionFiles(source, sessionId, true));
      } finally {
        held.delete(sessionId);
      }
    },
  };
}
export type RunHolds = ReturnType<typeof createRunHolds>;
