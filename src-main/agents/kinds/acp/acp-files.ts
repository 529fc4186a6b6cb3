import { constants } from 'node:fs';
import { lstat, mkdir, open, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import { confirmPlace, readSmallFile, SkippedEntry } from '../../../history/safe-files.js';

/**
 * The file system Session Desk offers an ACP agent as its client (`fs/read_text_file`,
 * `fs/write_text_file`). The client runs outside the sandbox, so it serves only the session's
 * own folder, the one place the agent may write anyway: a path elsewhere, or one that leads
 * elsewhere through a link the agent planted, is refused.
 */

/** The largest file an agent reads or writes through the client. */
export const CLIENT_FILE_MAX_BYTES = 8 * 1024 * 1024;

/** A request the client refuses, with the reason the transcript shows. */
export class RefusedFileRequest extends Error {}

/** The path inside `folder` an agent's request names, or a refusal. */
function insideFolder(folder: string, path: unknown): string {
  if (typeof path !== 'string' || !isAbsolute(path))
    throw new RefusedFileRequest(`${String(path)} is not an absolute path`);
  const wanted = normalize(path);
  const rel = relative(folder, wanted);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel))
    throw new RefusedFileRequest(`${path} is outside the session's folder`);
  return wanted;
}

/** Makes the folders from `folder` down to `path`'s parent, each a real folder, never a link. */
async function realFolders(folder: string, path: string): Promise<void> {
  const parts = relative(folder, path).split(sep).slice(0, -1);
  let at = folder;
  for (const part of parts) {
    at = join(at, part);
    try {
      if (!(await lstat(at)).isDirectory())
        throw new RefusedFileRequest(`${path} lies under ${at}, which is not a folder`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await mkdir(at).catch((made: NodeJS.ErrnoException) => {
        if (made.code !== 'EEXIST') throw made;
      });
    }
  }
}

/** `fs/read_text_file`: the file's text, from line `line` (1-based) for `limit` lines when given. */
export async function readTextFile(
  folder: string,
  params: { path: unknown; line?: unknown; limit?: unknown },
): Promise<{ content: string }> {
  const path = insideFolder(folder, params.path);
  let text: string | undefined;
  try {
    text = await readSmallFile(folder, path, CLIENT_FILE_MAX_BYTES);
  } catch (err) {
    if (err instanceof SkippedEntry) throw new RefusedFileRequest(err.message);
    throw err;
  }
  if (text === undefined) {
    // Loaded here, as where the runner uses it: at the first ACP run, not at the server's start.
    const { RequestError } = await import('@agentclientprotocol/sdk/unstable');
    throw RequestError.resourceNotFound(path);
  }
  const from = typeof params.line === 'number' && params.line > 1 ? Math.floor(params.line) - 1 : 0;
  const count = typeof params.limit === 'number' && params.limit > 0 ? Math.floor(params.limit) : undefined;
  if (from === 0 && count === undefined) return { content: text };
  const lines = text.split('\n');
  return { content: lines.slice(from, count === undefined ? undefined : from + count).join('\n') };
}

/** `fs/write_text_file`: the file written whole, its folders made. */
export async function writeTextFile(
  folder: string,
  params: { path: unknown; content: unknown },
): Promise<Record<string, never>> {
  const path = insideFolder(folder, params.path);
  if (typeof params.content !== 'string') throw new RefusedFileRequest(`no text to write to ${path}`);
  if (Buffer.byteLength(params.content) > CLIENT_FILE_MAX_BYTES)
    throw new RefusedFileRequest(
      `the text for ${path} is larger than ${CLIENT_FILE_MAX_BYTES / 1024 / 1024} MiB`,
    );
  await realFolders(folder, path);
  let handle: FileHandle;
  try {
    // Not truncated on opening: only once the file is known to be the one asked for.
    // O_NONBLOCK: a named pipe with no reader fails at once rather than holding the agent up.
    const flags =
      constants.O_WRONLY | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
    handle = await open(path, flags, 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP')
      throw new RefusedFileRequest(`${path} is a symbolic link`);
    throw err;
  }
  try {
    if (!(await handle.stat()).isFile()) throw new RefusedFileRequest(`${path} is not a regular file`);
    // No folder on the way was swapped for a link after it was checked.
    await confirmPlace(handle, folder, path).catch((err: unknown) => {
      throw err instanceof SkippedEntry ? new RefusedFileRequest(err.message) : err;
    });
    await handle.truncate(0);
    await handle.write(params.content, 0, 'utf8');
  } finally {
    await handle.close();
  }
  return {};
}
