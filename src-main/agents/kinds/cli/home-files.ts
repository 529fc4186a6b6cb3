import { lstat, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join, relative } from 'node:path';
import { readSmallFile } from '../../../history/safe-files.js';

/**
 * Writing an agent's files into a session's home, which its runs can write too: nothing a run
 * left there (a link, a pipe, a file in a folder's place) is followed or read as given.
 */

/**
 * A regular file's text, or null when there is none (or it is larger than `maxBytes`). Links
 * are not followed, pipes and devices never read, a read that does not answer is given up (the
 * history reader's rules): the person's folders are written by other programs, and a session's
 * home by its runs, which could leave a link there to any file of the person's.
 */
export async function readRegularFile(path: string, maxBytes = 1024 * 1024): Promise<string | null> {
  return (await readSmallFile(dirname(path), path, maxBytes).catch(() => undefined)) ?? null;
}

/**
 * Makes `dir` a folder of its own: whatever a run left in its place (a link to elsewhere, a
 * file) is removed first, so that nothing written below goes through it.
 */
export async function ownFolder(dir: string): Promise<void> {
  try {
    const stats = await lstat(dir);
    if (stats.isDirectory()) return;
    await rm(dir, { force: true, recursive: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(dir, { mode: 0o700 });
}

/** Makes each folder from `base` (which exists) down to `dir` a folder of its own. */
export async function ownFolders(base: string, dir: string): Promise<void> {
  let at = base;
  for (const part of relative(base, dir).split('/').filter(Boolean)) {
    at = join(at, part);
    await ownFolder(at);
  }
}

/** Writes a file by a new name and renames it into place: a link in its place is replaced, not followed. */
export async function replaceFile(dir: string, name: string, content: string): Promise<void> {
  const temp = join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
  await writeFile(temp, content, { flag: 'wx', mode: 0o600 });
  await rename(temp, join(dir, name));
}

/** Removes a file (or what a run put in its place) if it is there. */
export async function removeEntry(path: string): Promise<void> {
  await rm(path, { force: true, recursive: true });
}

/** The copy of a credentials file follows the person's: replaced, or removed when they have none. */
export async function syncFile(from: string, dir: string, name: string): Promise<void> {
  const content = await readRegularFile(from);
  if (content === null) await removeEntry(join(dir, name));
  else await replaceFile(dir, name, content);
}

export function parseJsonObject(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

export const pick = (from: Record<string, unknown>, keys: readonly string[]) =>
  Object.fromEntries(keys.filter((key) => from[key] !== undefined).map((key) => [key, from[key]]));
