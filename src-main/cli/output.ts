import { once } from 'node:events';
import { constants } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { realFiles } from '../store/file-layer.js';
import { CliError } from './admin-target.js';

/** Where a streamed command output goes: written piece by piece, then committed or abandoned. */
export interface OutputSink {
  write(chunk: string | Uint8Array): Promise<void>;
  /** The output is complete (a file appears under its name only now). */
  commit(): Promise<void>;
  /** The output is incomplete: a file is not left behind. */
  abort(): Promise<void>;
  readonly bytes: number;
}

/** stdout, waiting for it to drain; a reader that goes away (`| head`) ends the command. */
export function stdoutSink(stream: NodeJS.WriteStream = process.stdout): OutputSink {
  let bytes = 0;
  return {
    get bytes() {
      return bytes;
    },
    async write(chunk) {
      const closed = () => new CliError('The output was closed before it was complete.');
      if (stream.destroyed || stream.writableEnded) throw closed();
      bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
      try {
        if (!stream.write(chunk)) await once(stream, 'drain');
      } catch {
        throw closed();
      }
    },
    commit: async () => undefined,
    abort: async () => undefined,
  };
}

const FILE_BUFFER = 256 * 1024;

/** Created, never reused: not through a symlink, not with the mode of a file already there. */
const CREATE_PRIVATE =
  constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/**
 * Opens a new file readable only by this user. A leftover `FILE.tmp` (or a symlink planted
 * under that name) is removed first, never written through.
 */
async function openFresh(tmp: string) {
  try {
    return await open(tmp, CREATE_PRIVATE, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  // unlink removes a symlink itself, not what it points to.
  await unlink(tmp);
  return open(tmp, CREATE_PRIVATE, 0o600);
}

/**
 * A file written as `FILE.tmp`, fsync'd and renamed to FILE at the end, so FILE is either the
 * whole output or (on failure) left as it was. Readable only by this user: it holds the data.
 */
export async function fileSink(path: string): Promise<OutputSink> {
  const tmp = `${path}.tmp`;
  let handle;
  try {
    handle = await openFresh(tmp);
  } catch (err) {
    throw new CliError(`Cannot write ${path}: ${(err as Error).message}`);
  }
  const file = handle;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let bytes = 0;
  const flush = async () => {
    if (pendingBytes === 0) return;
    const data = Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    await file.write(data);
  };
  return {
    get bytes() {
      return bytes;
    },
    async write(chunk) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk);
      pending.push(buffer);
      pendingBytes += buffer.length;
      bytes += buffer.length;
      if (pendingBytes >= FILE_BUFFER) await flush();
    },
    async commit() {
      try {
        await flush();
        await file.datasync();
      } finally {
        await file.close();
      }
      await rename(tmp, path);
      await realFiles.syncDirOf(path);
    },
    async abort() {
      await file.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
    },
  };
}
