import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { CliKind } from '../cli-kind-names.js';

/** Names in a folder, or none when it cannot be read. */
export async function names(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

const isFile = (path: string) =>
  lstat(path).then(
    (stats) => stats.isFile(),
    () => false,
  );

/**
 * The file of a conversation in a CLI's folder, or null: Claude Code's
 * `projects/<project>/<id>.jsonl`, Codex's `sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`
 * (newest days first: a run's thread was written to lately). Only a regular file counts, never a
 * link. Gemini CLI names its chats by the start of the id and the time, so it is not found here.
 */
export async function findConversationFile(
  kind: CliKind,
  root: string,
  conversationId: string,
): Promise<string | null> {
  if (kind === 'claude-code') {
    const projects = join(root, 'projects');
    for (const project of await names(projects)) {
      const file = join(projects, project, `${conversationId}.jsonl`);
      if (await isFile(file)) return file;
    }
    return null;
  }
  if (kind === 'codex') {
    const sessions = join(root, 'sessions');
    const suffix = `-${conversationId}.jsonl`;
    for (const year of (await names(sessions)).sort().reverse())
      for (const month of (await names(join(sessions, year))).sort().reverse())
        for (const day of (await names(join(sessions, year, month))).sort().reverse()) {
          const dir = join(sessions, year, month, day);
          const name = (await names(dir)).find((n) => n.startsWith('rollout-') && n.endsWith(suffix));
          if (name !== undefined && (await isFile(join(dir, name)))) return join(dir, name);
        }
  }
  return null;
}
