import { constants } from 'node:fs';
import * as fs from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Every file operation the store makes goes through this object, so durability can be
 * reasoned about in one place and disk faults can be injected in tests.
 */
export interface FileLayer {
  open(path: string, flags: 'r' | 'r+' | 'wx'): Promise<FileHandle>;
  /** Writes all of `data` at `position`. */
  write(handle: FileHandle, data: Uint8Array, position: number): Promise<void>;
  datasync(handle: FileHandle): Promise<void>;
  truncate(handle: FileHandle, length: number): Promise<void>;
  /** Reads into `buffer` from `position`; resolves with how many bytes were read (0 at the end). */
  read(handle: FileHandle, buffer: Buffer, position: number): Promise<number>;
  readFile(path: string): Promise<Buffer>;
  /** The size of a file in bytes. */
  size(path: string): Promise<number>;
  /** Creates a directory (and its parents) if missing, owner-only. */
  mkdir(path: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  readdir(dir: string): Promise<string[]>;
  /** fsyncs the directory holding `path`, so a create or rename in it survives a crash. */
  syncDirOf(path: string): Promise<void>;
}

export const realFiles: FileLayer = {
  open: (path, flags) => fs.open(path, flags, 0o600),
  async write(handle, data, position) {
    let written = 0;
    while (written < data.length) {
      const { bytesWritten } = await handle.write(data, written, data.length - written, position + written);
      written += bytesWritten;
    }
  },
  datasync: (handle) => handle.datasync(),
  truncate: (handle, length) => handle.truncate(length),
  async read(handle, buffer, position) {
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, position + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return filled;
  },
  readFile: (path) => fs.readFile(path),
  size: async (path) => (await fs.stat(path)).size,
  async mkdir(path) {
    await fs.mkdir(path, { recursive: true, mode: 0o700 });
  },
  rename: (from, to) => fs.rename(from, to),
  unlink: (path) => fs.unlink(path),
  readdir: (dir) => fs.readdir(dir),
  async syncDirOf(path) {
    // Windows cannot open a directory for fsync; its renames are durable enough there.
    if (process.platform === 'win32') return;
    const handle = await fs.open(dirname(path), constants.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
};

/** Writes a whole file so that it either appears complete under `path` or not at all. */
export async function writeFileAtomically(files: FileLayer, path: string, data: Uint8Array): Promise<void> {
  const tmp = `${path}.tmp`;
  await files.unlink(tmp).catch(() => undefined);
  const handle = await files.open(tmp, 'wx');
  try {
    await files.write(handle, data, 0);
    await files.datasync(handle);
  } catch (err) {
    await handle.close();
    await files.unlink(tmp).catch(() => undefined);
    throw err;
  }
  await handle.close();
  try {
    await files.rename(tmp, path);
  } catch (err) {
    await files.unlink(tmp).catch(() => undefined);
    throw err;
  }
  await files.syncDirOf(path);
}

/** Copies a file in chunks, so that the copy appears complete under `to` or not at all. */
export async function copyFileAtomically(files: FileLayer, from: string, to: string): Promise<void> {
  const tmp = `${to}.tmp`;
  await files.unlink(tmp).catch(() => undefined);
  const source = await files.open(from, 'r');
  try {
    const target = await files.open(tmp, 'wx');
    try {
      const chunk = Buffer.allocUnsafe(1024 * 1024);
      for (let position = 0; ;) {
        const read = await files.read(source, chunk, position);
        if (read === 0) break;
        await files.write(target, chunk.subarray(0, read), position);
        position += read;
      }
      await files.datasync(target);
    } catch (err) {
      await target.close();
      await files.unlink(tmp).catch(() => undefined);
      throw err;
    }
    await target.close();
  } finally {
    await source.close();
  }
  try {
    await files.rename(tmp, to);
  } catch (err) {
    await files.unlink(tmp).catch(() => undefined);
    throw err;
  }
  await files.syncDirOf(to);
}
