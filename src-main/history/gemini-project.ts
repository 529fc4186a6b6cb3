import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

/** The name Gemini CLI gives a project folder (its registry's own rule), with our prefix. */
function slugOf(folder: string): string {
  const slug = basename(folder)
    .toLowerCase()
    .replace(/[^a-z0-9]/gu, '-')
    .replace(/-+/gu, '-')
    .replace(/^-|-$/gu, '');
  return `sessiondesk-${slug || 'project'}`;
}

/** The project folder under `<root>/tmp` that Gemini CLI uses for `folder`, if one is marked for it. */
function projectOf(root: string, folder: string): string | null {
  const tmp = join(root, 'tmp');
  if (!existsSync(tmp)) return null;
  for (const name of readdirSync(tmp)) {
    const marker = join(tmp, name, '.project_root');
    if (existsSync(marker) && resolve(readFileSync(marker, 'utf8').trim()) === resolve(folder))
      return join(tmp, name);
  }
  return null;
}

/**
 * Gemini CLI resumes only the chats of the project of the folder it runs in, and finds a
 * project by the `.project_root` marker in its folder under `<root>/tmp`. So that it resumes a
 * conversation in another folder (a session's sandbox), a project is marked for that folder (a
 * new folder, named as Gemini CLI names them) and the conversation's chat file is copied into it.
 * Nothing of the CLI's existing files is changed. Returns the copy, which the CLI then appends to.
 */
export function geminiChatFor(root: string, chatFile: string, folder: string): string {
  let project = projectOf(root, folder);
  if (!project) {
    const base = slugOf(folder);
    for (let n = 0; ; n += 1) {
      const candidate = join(root, 'tmp', n === 0 ? base : `${base}-${n}`);
      if (existsSync(candidate)) continue;
      mkdirSync(candidate, { recursive: true });
      writeFileSync(join(candidate, '.project_root'), resolve(folder), { flag: 'wx' });
      project = candidate;
      break;
    }
  }
  const copy = join(project, 'chats', basename(chatFile));
  if (!existsSync(copy)) {
    mkdirSync(join(project, 'chats'), { recursive: true });
    copyFileSync(chatFile, copy);
  }
  return copy;
}
