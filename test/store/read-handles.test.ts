import { open, type FileHandle } from 'node:fs/promises';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ReadHandles } from '../../src-main/store/read-handles.js';
import { openFilesUnder } from '../helpers/open-files.js';
import { tempDir } from '../helpers/server.js';

const dir = tempDir('sessiondesk-read-handles-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const openHere = () => openFilesUnder(dir);

function cache(capacity: number) {
  const opened: string[] = [];
  const handles = new ReadHandles(async (name) => {
    opened.push(name);
    return open(join(dir, name), 'r');
  }, capacity);
  const readAll = (name: string) =>
    handles.with(name, async (handle) => (await handle.readFile('utf8')) + '');
  return { handles, opened, readAll };
}

for (const name of ['a', 'b', 'c']) writeFileSync(join(dir, name), `file ${name}`);

describe('transcripts kept open for reading', () => {
  it('opens a file once for many reads, and keeps the most recently used up to its capacity', async () => {
    const { handles, opened } = cache(2);
    const read = (name: string) =>
      handles.with(name, async (handle) => {
        const buffer = Buffer.alloc(6);
        await handle.read(buffer, 0, 6, 0);
        return buffer.toString();
      });
    expect(await read('a')).toBe('file a');
    expect(await read('a')).toBe('file a');
    expect(await read('b')).toBe('file b');
    expect(opened).toEqual(['a', 'b']);
    // a was used last: b is the one closed to make room for c.
    expect(await read('a')).toBe('file a');
    expect(await read('c')).toBe('file c');
    expect(openHere()).toEqual([join(dir, 'a'), join(dir, 'c')]);
    expect(await read('b')).toBe('file b');
    expect(opened).toEqual(['a', 'b', 'c', 'b']);
    await handles.closeAll();
    expect(openHere()).toEqual([]);
  });

  it('never closes a handle under a read: one dropped while read closes when the read is done', async () => {
    const { handles } = cache(4);
    let inRead: FileHandle | undefined;
    let release = () => {};
    const waiting = new Promise<void>((resolve) => (release = resolve));
    const reading = handles.with('a', async (handle) => {
      inRead = handle;
      await waiting;
      const buffer = Buffer.alloc(6);
      await handle.read(buffer, 0, 6, 0);
      return buffer.toString();
    });
    await expect.poll(() => inRead !== undefined).toBe(true);
    const dropping = handles.drop('a');
    const closing = handles.closeAll();
    expect(openHere()).toEqual([join(dir, 'a')]);
    release();
    expect(await reading).toBe('file a');
    await Promise.all([dropping, closing]);
    expect(inRead!.fd).toBe(-1);
    expect(openHere()).toEqual([]);
  });

  it('a file that cannot be opened fails its read, and is tried again the next time', async () => {
    const { handles, opened, readAll } = cache(4);
    await expect(readAll('later')).rejects.toMatchObject({ code: 'ENOENT' });
    writeFileSync(join(dir, 'later'), 'here now');
    expect(await readAll('later')).toBe('here now');
    expect(opened).toEqual(['later', 'later']);
    await handles.closeAll();
    expect(openHere()).toEqual([]);
  });
});
