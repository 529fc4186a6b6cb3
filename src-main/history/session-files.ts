import type { Dirent } from 'node:fs';
import { join } from 'node:path';
import type { HistoryKind } from '../../src-shared/sessions.js';
import { OPENCODE_DATABASE, opencodeSessionFiles } from './opencode-store.js';
import { Skips, type SessionFile } from './source-entries.js';

export { Skips, type SessionFile };
import { entryKind, listFolder, ONLY_REGULAR, readSmallFile, SkippedEntry } from './safe-files.js';

/** The folder (OpenCode: the database) under a CLI's root that holds its conversations: a root without it has none. */
export const SESSIONS_FOLDER: Record<HistoryKind, string> = {
  'claude-code': 'projects',
  codex: 'sessions',
  gemini: 'tmp',
  'qwen-code': 'projects',
  opencode: OPENCODE_DATABASE,
};

/** The session files under a CLI's root folder, sessions before their sub-agents. */
export async function sessionFiles(kind: HistoryKind, rootDir: string, skips: Skips): Promise<SessionFile[]> {
  const files: SessionFile[] = [];
  const list = (dir: string) => skips.guard(() => listFolder(rootDir, dir), [] as Dirent[]);
  /** Entries of the wanted kind; those in their place that are anything else are noted. */
  const pick = (entries: Dirent[], dir: string, want: 'file' | 'folder', named: (name: string) => boolean) =>
    entries.filter((entry) => {
      if (!named(entry.name)) return false;
      if (want === 'file' ? entry.isFile() : entry.isDirectory()) return true;
      if (want === 'folder' && entry.isFile()) return false;
      skips.add(join(dir, entry.name), `${entryKind(entry)}: ${ONLY_REGULAR}`);
      return false;
    });
  const any = () => true;
  if (kind === 'claude-code') {
    const projects = join(rootDir, SESSIONS_FOLDER[kind]);
    for (const project of pick(await list(projects), projects, 'folder', any)) {
      const dir = join(projects, project.name);
      const entries = await list(dir);
      for (const { name } of pick(entries, dir, 'file', (n) => n.endsWith('.jsonl'))) {
        const path = join(dir, name);
        files.push({ path });
        const session = name.slice(0, -'.jsonl'.length);
        // Only a folder of the session's own: a link in its place is noted, not followed.
        if (!pick(entries, dir, 'folder', (n) => n === session).length) continue;
        const subagents = join(dir, session, 'subagents');
        for (const sub of pick(await list(subagents), subagents, 'file', (n) => n.endsWith('.jsonl'))) {
          const meta = join(subagents, sub.name.replace(/\.jsonl$/u, '.meta.json'));
          files.push({ path: join(subagents, sub.name), parent: { path, meta } });
        }
      }
    }
  } else if (kind === 'codex') {
    const walk = async (dir: string, depth: number): Promise<void> => {
      const entries = await list(dir);
      if (depth < 3) {
        for (const entry of pick(entries, dir, 'folder', any)) await walk(join(dir, entry.name), depth + 1);
        return;
      }
      for (const { name } of pick(
        entries,
        dir,
        'file',
        (n) => n.startsWith('rollout-') && n.endsWith('.jsonl'),
      ))
        files.push({ path: join(dir, name) });
    };
    await walk(join(rootDir, SESSIONS_FOLDER[kind]), 0);
  } else if (kind === 'qwen-code') {
    // `projects/<cwd with every other character a dash>/chats/<session id>.jsonl`; the
    // `<id>.runtime.json` beside it is a live process's status, not the conversation.
    const projects = join(rootDir, SESSIONS_FOLDER[kind]);
    for (const project of pick(await list(projects), projects, 'folder', any)) {
      const chats = join(projects, project.name, 'chats');
      for (const { name } of pick(await list(chats), chats, 'file', (n) => n.endsWith('.jsonl')))
        files.push({ path: join(chats, name) });
    }
  } else if (kind === 'opencode') {
    files.push(...(await opencodeSessionFiles(rootDir, skips)));
  } else {
    const tmp = join(rootDir, SESSIONS_FOLDER[kind]);
    for (const project of pick(await list(tmp), tmp, 'folder', any)) {
      const dir = join(tmp, project.name);
      const marker = join(dir, '.project_root');
      const chats = join(dir, 'chats');
      const named = (n: string) => n.startsWith('session-') && (n.endsWith('.json') || n.endsWith('.jsonl'));
      for (const { name } of pick(await list(chats), chats, 'file', named)) {
        const document = name.endsWith('.json');
        files.push({ path: join(chats, name), marker, ...(document ? { document } : {}) });
      }
    }
  }
  return files;
}

/**
 * A small file beside a session file (a marker, a meta file), undefined when absent; one that
 * is not a regular file, or cannot be read, is noted and read as absent.
 */
export async function sideFile(
  rootDir: string,
  path: string,
  skips: Skips | undefined,
): Promise<string | undefined> {
  try {
    return await readSmallFile(rootDir, path);
  } catch (err) {
    const reason = err instanceof SkippedEntry ? err.reason : `it cannot be read: ${(err as Error).message}`;
    skips?.add(path, reason);
    return undefined;
  }
}
