import { constants, type Dirent, type Stats } from 'node:fs';
import { lstat, open, readdir, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';

/**
 * The agent CLIs' folders are written by agents and by any program of the user's: what is in
 * them is hostile input. Only regular files inside the folder are read: a symbolic link (to
 * ~/.ssh/id_rsa, or a folder elsewhere) is never followed, and a named pipe, which blocks
 * whoever opens or reads it until another program writes, is never read.
 */

/** An entry of a followed folder that is not read, and why: reported, never followed. */
export class SkippedEntry extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
    this.name = 'SkippedEntry';
  }
}

/** Opening or reading a little of a regular file never takes long: one that does is given up. */
const ANSWER_TIMEOUT_MS = 5_000;

/** What an entry is, in words, when it is not what may be read. */
export function entryKind(entry: Stats | Dirent): string {
  if (entry.isSymbolicLink()) return 'a symbolic link';
  if (entry.isFIFO()) return 'a named pipe';
  if (entry.isSocket()) return 'a socket';
  if (entry.isBlockDevice() || entry.isCharacterDevice()) return 'a device';
  if (entry.isDirectory()) return 'a folder';
  if (entry.isFile()) return 'a file';
  return 'not a regular file';
}

/** The words every skip ends with, saying what is read instead. */
export const ONLY_REGULAR = 'only regular files inside the folder are read';

/** `work`, or a SkippedEntry once `ms` have passed; what `work` gives later is handed to `late`. */
async function within<T>(work: Promise<T>, ms: number, path: string, late: (value: T) => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new SkippedEntry(path, `it did not answer within ${ms / 1000} s`));
    }, ms);
  });
  work.then((value) => timedOut && late(value)).catch(() => undefined);
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Checks that every folder from `root` down to `path` (`path` itself included when `self`) is
 * a folder, not a symbolic link to one: a link planted inside the followed folder would lead
 * the reader anywhere. `root` itself may be a link (the administrator named it).
 */
async function checkFolders(root: string, path: string, self: boolean): Promise<void> {
  const rel = relative(root, path);
  if (rel === '') return;
  if (rel.startsWith('..') || isAbsolute(rel))
    throw new SkippedEntry(path, `outside ${root}: ${ONLY_REGULAR}`);
  const parts = rel.split(sep);
  if (!self) parts.pop();
  let at = root;
  for (const part of parts) {
    at = join(at, part);
    const info = await lstat(at);
    if (!info.isDirectory()) {
      const where = at === path ? '' : ` (${at})`;
      throw new SkippedEntry(path, `in a folder that is ${entryKind(info)}${where}: ${ONLY_REGULAR}`);
    }
  }
}

/**
 * Where the kernel says an open file is (Linux): it must be where it was asked for under the
 * real root, so no folder on the way was swapped for a link after it was checked.
 */
export async function confirmPlace(handle: FileHandle, root: string, path: string): Promise<void> {
  let actual: string;
  try {
    actual = await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    return; // No /proc (macOS): the checks before opening stand alone.
  }
  const expected = join(await realpath(root), relative(root, path));
  if (actual !== expected) throw new SkippedEntry(path, `it leads to ${actual}: ${ONLY_REGULAR}`);
}

/**
 * Opens a regular file inside `root` for reading, or throws SkippedEntry saying why not: a
 * symbolic link (O_NOFOLLOW), a named pipe or device (fstat after opening; O_NONBLOCK so that
 * opening a pipe never waits for a writer), or a file in a linked folder.
 */
export async function openRegularFile(root: string, path: string): Promise<FileHandle> {
  await checkFolders(root, path, false);
  const flags = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
  let handle: FileHandle;
  try {
    handle = await within(open(path, flags), ANSWER_TIMEOUT_MS, path, (late) => void late.close());
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP')
      throw new SkippedEntry(path, `a symbolic link: ${ONLY_REGULAR}`);
    throw err;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new SkippedEntry(path, `${entryKind(info)}: ${ONLY_REGULAR}`);
    await confirmPlace(handle, root, path);
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * A small regular file's text (a CLI's marker or meta file), undefined when there is none;
 * SkippedEntry when it is not a regular file or larger than `maxBytes`.
 */
export async function readSmallFile(
  root: string,
  path: string,
  maxBytes = 64 * 1024,
): Promise<string | undefined> {
  let handle: FileHandle;
  try {
    handle = await openRegularFile(root, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const buffer = Buffer.alloc(maxBytes + 1);
  let bytesRead: number;
  try {
    ({ bytesRead } = await within(
      handle.read(buffer, 0, buffer.length, 0),
      ANSWER_TIMEOUT_MS,
      path,
      () => {},
    ));
  } catch (err) {
    // Closing waits for the read: a read that never ends would hold this up too.
    void handle.close().catch(() => undefined);
    throw err;
  }
  await handle.close();
  if (bytesRead > maxBytes) throw new SkippedEntry(path, `larger than ${maxBytes / 1024} KiB`);
  return buffer.subarray(0, bytesRead).toString('utf8');
}

/**
 * The entries of a folder inside `root`, sorted by name, as they are (a link is listed as a
 * link, never followed); none when the folder is not there. SkippedEntry when the folder, or
 * one on the way to it, is a link.
 */
export async function listFolder(root: string, dir: string): Promise<Dirent[]> {
  try {
    await checkFolders(root, dir, true);
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch (err) {
    if (err instanceof SkippedEntry) throw err;
    return [];
  }
}
