import { lstat, mkdir, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { copyFileExclusive, listFolder, readSmallFile, SkippedEntry } from './safe-files.js';

/** The name Gemini CLI gives a project folder (its registry's own rule), with our prefix. */
function slugOf(folder: string): string {
  const slug = basename(folder)
    .toLowerCase()
    .replace(/[^a-z0-9]/gu, '-')
    .replace(/-+/gu, '-')
    .replace(/^-|-$/gu, '');
  return `sessiondesk-${slug || 'project'}`;
}

/** What is at `path` (a dangling link included), or null when nothing is. */
function entryAt(path: string) {
  return lstat(path).catch(() => null);
}

/**
 * The project folder under `<root>/tmp` that Gemini CLI uses for `folder`, if one is marked for
 * it. The CLI's folder is written by agents: only real folders and regular marker files count.
 */
async function projectOf(root: string, folder: string): Promise<string | null> {
  const tmp = join(root, 'tmp');
  for (const entry of await listFolder(root, tmp)) {
    if (!entry.isDirectory()) continue;
    const marker = await readSmallFile(root, join(tmp, entry.name, '.project_root')).catch((err: unknown) => {
      if (err instanceof SkippedEntry) return undefined;
      throw err;
    });
    if (marker !== undefined && resolve(marker.trim()) === resolve(folder)) return join(tmp, entry.name);
  }
  return null;
}

/**
 * Gemini CLI resumes only the chats of the project of the folder it runs in, and finds a
 * project by the `.project_root` marker in its folder under `<root>/tmp`. So that it resumes a
 * conversation in another folder (a session's sandbox), a project is marked for that folder (a
 * new folder, named as Gemini CLI names them) and the conversation's chat file is copied into it.
 * Nothing of the CLI's existing files is changed. Returns the copy, which the CLI then appends to.
 * The copy is made where an agent may have written before: it is created anew, never written
 * through a link, and an error says what is in the way (safe-files.ts).
 */
export async function geminiChatFor(root: string, chatFile: string, folder: string): Promise<string> {
  let project = await projectOf(root, folder);
  if (!project) {
    const base = slugOf(folder);
    for (let n = 0; ; n += 1) {
      const candidate = join(root, 'tmp', n === 0 ? base : `${base}-${n}`);
      if (await entryAt(candidate)) continue;
      await mkdir(candidate, { recursive: true });
      await writeFile(join(candidate, '.project_root'), resolve(folder), { flag: 'wx' });
      project = candidate;
      break;
    }
  }
  const copy = join(project, 'chats', basename(chatFile));
  // A copy made for an earlier run goes on being the conversation's file.
  if ((await entryAt(copy))?.isFile()) return copy;
  await mkdir(join(project, 'chats'), { recursive: true });
  await copyFileExclusive(root, chatFile, copy);
  return copy;
}
