import { dirname, resolve, sep } from 'node:path';
import type { HistoryKind } from '../../src-shared/sessions.js';
import type { HistorySourceRecord } from '../store/history.js';
import { fingerprintOf } from './file-reader.js';
import { geminiChatFor } from './gemini-project.js';
import { importFile, withSourceLock, type HistoryDeps } from './importer.js';
import { openRegularFile } from './safe-files.js';
import { sessionFiles, Skips } from './session-files.js';

/** How deep a session file lies under its CLI's root folder. */
const DEPTH: Record<HistoryKind, number> = {
  'claude-code': 3, // projects/<project>/<session>.jsonl
  codex: 5, // sessions/YYYY/MM/DD/rollout-….jsonl
  gemini: 4, // tmp/<project>/chats/session-….jsonl
};

/** The CLI's root folder a session file lies in (`~/.claude`, `~/.codex`, `~/.gemini`). */
export function rootOfSessionFile(kind: HistoryKind, path: string): string {
  let root = path;
  for (let i = 0; i < DEPTH[kind]; i += 1) root = dirname(root);
  return root;
}

/**
 * While a run of Session Desk's own resumes an imported session, its CLI appends to the
 * session's file (Claude Code and Codex write to the conversation's own file wherever they
 * run). The run's parsed output is the session's record, so the file is held: the follower
 * leaves it alone, and when the run ends the file is read past what the CLI wrote without
 * recording it again. What is appended later (the person resuming in a terminal) is imported
 * as before.
 */
export function createRunHolds(deps: HistoryDeps) {
  // A continuation a crash cut off is held from the start, until the recovery after the restart
  // reads past what its CLI wrote (AgentHost.recoverInterrupted): the follower must not import it
  // first.
  const held = new Set<string>(
    deps.repos.sessions.runningIds().filter((id) => deps.repos.sessions.find(id)?.source),
  );
  const withHolds: HistoryDeps = { ...deps, holds: held };

  function sourceOf(sessionId: string): HistorySourceRecord | null {
    const row = deps.repos.sessions.find(sessionId);
    if (!row?.source) return null;
    const { kind, path } = row.source;
    return (
      deps.repos.history
        .sources(row.workspaceId)
        .find(
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

    /**
     * Before the run: what the file gained so far is imported, then the file is held. `workdir`
     * is the folder the run's CLI works in: for Gemini CLI in another folder than the session's,
     * the chat is copied into that folder's project (see gemini-project.ts), and the copy is the
     * session's file too, read past when the run ends.
     */
    async hold(sessionId: string, workdir: string): Promise<void> {
      held.add(sessionId);
      const row = deps.repos.sessions.find(sessionId);
      const from = row?.source;
      const source = sourceOf(sessionId);
      const prepare = async () => {
        if (source) await readSessionFiles(source, sessionId, false);
        if (from?.kind !== 'gemini' || (from.cwd !== undefined && resolve(from.cwd) === resolve(workdir)))
          return;
        const root = source?.rootDir ?? rootOfSessionFile(from.kind, from.path);
        const copy = await geminiChatFor(root, from.path, workdir);
        if (!source || deps.repos.history.file(source.id, copy)) return;
        const handle = await openRegularFile(root, copy);
        const fingerprint = await fingerprintOf(handle).finally(() => handle.close());
        await deps.store.write(() =>
          deps.repos.history.putFile({
            sourceId: source.id,
            path: copy,
            sessionId,
            offset: 0,
            fingerprint,
            size: 0,
            mtimeMs: 0,
          }),
        );
      };
      await (source ? withSourceLock(source.id, prepare) : prepare());
    },

    /**
     * After the run (or, for a run a crash cut off, in the recovery after the restart): the file
     * is read past what the run's CLI wrote, then followed again.
     */
    async release(sessionId: string): Promise<void> {
      try {
        const source = sourceOf(sessionId);
        if (source) await withSourceLock(source.id, () => readSessionFiles(source, sessionId, true));
      } finally {
        held.delete(sessionId);
      }
    },
  };
}
export type RunHolds = ReturnType<typeof createRunHolds>;
