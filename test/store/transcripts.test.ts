import {
  appendFileSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAccounts } from '../../src-main/accounts/accounts.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { newId } from '../../src-main/accounts/secrets.js';
import { readAllMessages, readMessageAt, readMessagePage } from '../../src-main/sessions/transcript-reads.js';
import { DataDamagedError, Store, StoreUnavailableError } from '../../src-main/store/store.js';
import { createRepositories, type Repositories } from '../../src-main/store/repositories.js';
import { MessageTooLargeError } from '../../src-main/store/errors.js';
import { MAX_MESSAGE_BYTES } from '../../src-main/store/transcript-format.js';
import { transcriptPath } from '../../src-main/store/transcripts.js';
import type { Message } from '../../src-shared/sessions.js';
import { ERRNOS, faultyFiles, type FaultyFiles, type FileOp } from '../helpers/faulty-files.js';
import { openFilesUnder } from '../helpers/open-files.js';
import { tempDir } from '../helpers/server.js';
import { recordingLogger } from '../helpers/store.js';
import { storageOf, readsOf } from '../../src-main/store/sqljs-storage.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = tempDir('sessiondesk-tr-');
  dirs.push(dir);
  return dir;
}

const at = (n: number) => new Date(Date.UTC(2026, 10, 1, 9, 0, n)).toISOString();

function reply(text: string): Message {
  return { type: 'assistant', message: { content: [{ type: 'text', text }] } };
}

/** A tool call whose result holds a whole file: the shape that makes real transcripts big. */
function toolResult(id: string, bytes: number): Message {
  return {
    type: 'assistant',
    message: {
      content: [{ type: 'tool_result', tool_use_id: id, content: 'x'.repeat(bytes), is_error: false }],
    },
  };
}

interface Opened {
  store: Store;
  repos: Repositories;
  organizationId: string;
  userId: string;
}

async function open(dir: string, files?: FaultyFiles, logger = silentLogger): Promise<Opened> {
  const store = await Store.open({ dataDir: dir, clock: systemClock, logger, ...(files ? { files } : {}) });
  const repos = createRepositories(store.db);
  const accounts = createAccounts(storageOf(store), systemClock);
  let user = repos.users.findByEmail('ada@example.test');
  if (!user) {
    await accounts.createUser({ email: 'ada@example.test', name: 'Ada', password: 'correct horse battery' });
    await accounts.createWorkspace({ name: 'Lab', ownerEmail: 'ada@example.test' });
    user = repos.users.findByEmail('ada@example.test');
  }
  const organizationId = repos.workspaces.listForUser(user!.id)[0]!.organizationId;
  return { store, repos, organizationId, userId: user!.id };
}

async function newSession(o: Opened, prompt = 'Find the flaky test'): Promise<string> {
  const id = newId('session');
  await o.store.write(() =>
    o.repos.sessions.insert({
      id,
      workspaceId: o.organizationId,
      authorId: o.userId,
      title: prompt,
      model: 'claude-opus-4-6',
      createdAt: at(0),
      baseBranch: 'main',
      initialMessage: prompt,
    }),
  );
  return id;
}

function append(o: Opened, id: string, message: Message, n = 1): Promise<number> {
  return o.store.write(() => o.repos.sessions.appendMessage(id, o.organizationId, message, null, at(n)));
}

describe('transcripts in files', () => {
  it("makes a message's bytes durable before the journal record that commits it", async () => {
    const files = faultyFiles();
    const o = await open(dataDir(), files);
    try {
      const id = await newSession(o);
      const from = files.calls.length;
      await append(o, id, reply('The test waits on a timer.'));
      const calls = files.calls
        .slice(from)
        .filter((c) => c.op === 'write' || c.op === 'datasync')
        .map((c) => `${c.op} ${c.path.includes('/transcripts/') ? 'transcript' : 'journal'}`);
      expect(calls).toEqual(['write transcript', 'datasync transcript', 'write journal', 'datasync journal']);
    } finally {
      await o.store.close();
    }
  });

  it('keeps every message, big tool results included, across restarts and snapshots', async () => {
    const dir = dataDir();
    let o = await open(dir);
    const id = await newSession(o);
    const sent: Message[] = [{ type: 'user', message: { content: 'Find the flaky test' } }];
    for (let i = 0; i < 150; i += 1) {
      const message = i % 10 === 0 ? toolResult(`toolu_${i}`, 200_000 + i) : reply(`Step ${i}: reading.`);
      sent.push(message);
      await append(o, id, message, i);
    }
    await o.store.snapshot();
    await o.store.close();
    o = await open(dir);
    try {
      expect(await readAllMessages(readsOf(o.store), id)).toEqual(sent);
      const row = o.repos.sessions.find(id)!;
      expect(row.messageCount).toBe(151);
      expect(statSync(transcriptPath(dir, id)).size).toBe(row.transcriptBytes);
      // The database holds no message body: no run of a tool result's bytes, and it stays a
      // small fraction of the megabytes of transcript (its size follows the schema's pages).
      const snapshot = readdirSync(dir).find((n) => /^snapshot-\d+\.db$/u.test(n))!;
      const bytes = readFileSync(join(dir, snapshot));
      expect(bytes.includes('x'.repeat(4096))).toBe(false);
      expect(bytes.length).toBeLessThan(row.transcriptBytes / 10);
    } finally {
      await o.store.close();
    }
  });

  it('refuses a message over 16 MiB and writes nothing of it', async () => {
    const o = await open(dataDir());
    try {
      const id = await newSession(o);
      const before = o.repos.sessions.find(id)!;
      await expect(append(o, id, toolResult('toolu_big', MAX_MESSAGE_BYTES))).rejects.toBeInstanceOf(
        MessageTooLargeError,
      );
      expect(o.repos.sessions.find(id)).toEqual(before);
      expect(statSync(transcriptPath(o.store.dataDir, id)).size).toBe(before.transcriptBytes);
      // Just under the limit is kept whole.
      await append(o, id, toolResult('toolu_ok', MAX_MESSAGE_BYTES - 200));
      const messages = await readAllMessages(readsOf(o.store), id);
      expect(messages).toHaveLength(2);
    } finally {
      await o.store.close();
    }
  });
});

/** The transcripts of a data directory this process holds open now. */
const openTranscripts = (dir: string) => openFilesUnder(join(dir, 'transcripts'));

describe('one message read where its frame starts (a search hit)', () => {
  it('reads each message whole, whatever its size against the first read, and nothing of the next', async () => {
    const o = await open(dataDir());
    try {
      const id = await newSession(o);
      // Around the first read's 16 KiB (the frame's 17 bytes of header and newline included),
      // far above it, and small ones between them.
      const sizes = [10, 16_000, 16_350, 16_367, 16_368, 16_369, 16_400, 40_000, 1_500_000, 5];
      const sent: Message[] = [{ type: 'user', message: { content: 'Find the flaky test' } }];
      for (const [i, size] of sizes.entries()) {
        sent.push(toolResult(`toolu_${i}`, size));
        await append(o, id, toolResult(`toolu_${i}`, size), i);
      }
      const row = o.repos.sessions.find(id)!;
      const page = await readMessagePage(readsOf(o.store), row, 0, row.messageCount, Infinity);
      const openBefore = openTranscripts(o.store.dataDir).length;
      const read = await Promise.all(
        page.offsets.map((offset) => readMessageAt(readsOf(o.store), row, offset)),
      );
      expect(read.map((json) => JSON.parse(json!.toString('utf8')) as unknown)).toEqual(sent);
      // An offset outside the committed transcript is no message.
      expect(await readMessageAt(readsOf(o.store), row, row.transcriptBytes)).toBeNull();
      expect(await readMessageAt(readsOf(o.store), row, 0)).toBeNull();
      // The transcript stays open for the next read (once, beside the handle appends use), and
      // no longer than the store.
      expect(openTranscripts(o.store.dataDir)).toHaveLength(openBefore + 1);
    } finally {
      await o.store.close();
    }
    expect(openTranscripts(o.store.dataDir)).toEqual([]);
  });

  it('a damaged frame, or an offset that is no frame, is a DataDamagedError, never wrong data', async () => {
    const dir = dataDir();
    let o = await open(dir);
    const id = await newSession(o);
    await append(o, id, toolResult('toolu_small', 100));
    await append(o, id, toolResult('toolu_large', 60_000));
    const row = o.repos.sessions.find(id)!;
    const offsets = (await readMessagePage(readsOf(o.store), row, 0, 3, Infinity)).offsets;
    await o.store.close();
    const path = transcriptPath(dir, id);
    const bytes = readFileSync(path);
    // A byte flipped deep in the large message: past the first read.
    bytes[offsets[2]! + 50_000] = (bytes[offsets[2]! + 50_000] as number) ^ 0x01;
    writeFileSync(path, bytes);
    o = await open(dir);
    try {
      const now = o.repos.sessions.find(id)!;
      await expect(readMessageAt(readsOf(o.store), now, offsets[2]!)).rejects.toBeInstanceOf(
        DataDamagedError,
      );
      // The frames before it still read.
      expect(await readMessageAt(readsOf(o.store), now, offsets[1]!)).not.toBeNull();
      // Inside a frame: what stands there as a length is no frame within the transcript.
      await expect(readMessageAt(readsOf(o.store), now, offsets[2]! + 20)).rejects.toBeInstanceOf(
        DataDamagedError,
      );
    } finally {
      await o.store.close();
    }
  });

  it('reads a stretch of a large payload alone, and refuses one outside the frame or the transcript', async () => {
    const o = await open(dataDir());
    try {
      const id = await newSession(o);
      await append(o, id, toolResult('toolu_large', 1_500_000));
      await append(o, id, reply('after it'), 2);
      const row = o.repos.sessions.find(id)!;
      const { offsets } = await readMessagePage(readsOf(o.store), row, 0, 3, Infinity);
      const whole = (await readMessageAt(readsOf(o.store), row, offsets[1]!))!;
      const range = (from: number, until: number, offset = offsets[1]!) =>
        o.store.transcripts.readPayloadRange(id, offset, row.transcriptBytes, from, until);
      const stretch = await range(1_200_000, 1_240_000);
      expect(stretch.payloadBytes).toBe(whole.length);
      expect(stretch.bytes.equals(whole.subarray(1_200_000, 1_240_000))).toBe(true);
      expect((await range(0, whole.length)).bytes.equals(whole)).toBe(true);
      // Past the payload's end, or where no frame starts: nothing read is handed out.
      await expect(range(whole.length - 10, whole.length + 1)).rejects.toBeInstanceOf(DataDamagedError);
      await expect(range(0, 100, offsets[1]! + 20)).rejects.toBeInstanceOf(DataDamagedError);
      await expect(range(0, 10, offsets[2]! + 5)).rejects.toBeInstanceOf(DataDamagedError);
    } finally {
      await o.store.close();
    }
  });
});

describe('a damaged transcript', () => {
  /** A closed data directory with one session of four messages; returns where its last frame starts. */
  async function prepared(): Promise<{ dir: string; id: string; lastFrame: number; committed: number }> {
    const dir = dataDir();
    const o = await open(dir);
    const id = await newSession(o);
    await append(o, id, reply('one'));
    await append(o, id, reply('two'));
    const lastFrame = o.repos.sessions.find(id)!.transcriptBytes;
    await append(o, id, reply('three, the last'));
    const committed = o.repos.sessions.find(id)!.transcriptBytes;
    await o.store.close();
    return { dir, id, lastFrame, committed };
  }

  it('shorter than committed, cut at every byte of its last frame: a DataDamagedError naming the file', async () => {
    const { dir, id, lastFrame, committed } = await prepared();
    const path = transcriptPath(dir, id);
    const whole = readFileSync(path);
    for (let cut = lastFrame; cut < committed; cut += 1) {
      truncateSync(path, cut);
      const error = await Store.open({ dataDir: dir, clock: systemClock, logger: silentLogger }).then(
        async (store) => {
          await store.close({ snapshot: false });
          return null;
        },
        (err: unknown) => err,
      );
      expect(error, `cut at ${cut}`).toBeInstanceOf(DataDamagedError);
      expect((error as Error).message).toContain(path);
      expect((error as Error).message).toContain('sessiondesk doctor');
      writeFileSync(path, whole);
    }
    // Whole again, it opens with every message.
    const o = await open(dir);
    expect(await readAllMessages(readsOf(o.store), id)).toHaveLength(4);
    await o.store.close();
  });

  it('longer than committed (an append that never committed): cut back, the bytes kept aside', async () => {
    const { dir, id, committed } = await prepared();
    const path = transcriptPath(dir, id);
    for (const extra of [1, 7, 16, 17, 40]) {
      const tail = Buffer.alloc(extra, 0x5a);
      appendFileSync(path, tail);
      const logger = recordingLogger();
      const o = await open(dir, undefined, logger);
      try {
        expect(statSync(path).size).toBe(committed);
        expect(await readAllMessages(readsOf(o.store), id)).toHaveLength(4);
        const aside = readdirSync(join(dir, 'transcripts')).filter((n) => n.includes('.cut-'));
        const kept = aside.map((n) => readFileSync(join(dir, 'transcripts', n)));
        expect(kept.some((b) => b.equals(tail))).toBe(true);
        expect(logger.lines.join('\n')).toContain(path);
      } finally {
        await o.store.close();
      }
      for (const n of readdirSync(join(dir, 'transcripts')).filter((x) => x.includes('.cut-'))) {
        rmSync(join(dir, 'transcripts', n));
      }
    }
  });

  it('a flipped byte inside a committed frame fails the read with a DataDamagedError, never wrong data', async () => {
    const { dir, id, lastFrame } = await prepared();
    const path = transcriptPath(dir, id);
    const bytes = readFileSync(path);
    bytes[lastFrame + 20] = (bytes[lastFrame + 20] as number) ^ 0x01;
    writeFileSync(path, bytes);
    const o = await open(dir);
    try {
      await expect(readAllMessages(readsOf(o.store), id)).rejects.toBeInstanceOf(DataDamagedError);
    } finally {
      await o.store.close();
    }
  });
});

describe('disk faults on transcript appends', () => {
  const cases: Array<{ name: string; op: FileOp; newFile: boolean }> = [
    { name: 'append write', op: 'write', newFile: false },
    { name: 'append fsync', op: 'datasync', newFile: false },
    { name: 'create of a new transcript', op: 'open', newFile: true },
    { name: 'directory fsync for a new transcript', op: 'syncDirOf', newFile: true },
  ];
  for (const c of cases) {
    for (const code of ERRNOS) {
      it(`'${c.name}: ${code}' fails the write, keeps reads and the disk intact, and heals`, async () => {
        const dir = dataDir();
        const files = faultyFiles();
        const o = await open(dir, files);
        try {
          const id = await newSession(o);
          await append(o, id, reply('before the fault'));
          const target = c.newFile ? newId('session') : id;
          if (c.newFile) {
            await o.store.write(() =>
              o.repos.sessions.insert({
                id: target,
                workspaceId: o.organizationId,
                authorId: o.userId,
                title: 'Untitled session',
                model: 'claude-opus-4-6',
                createdAt: at(1),
                baseBranch: 'main',
              }),
            );
          }
          const before = o.repos.sessions.find(target)!;
          files.fail({ op: c.op, code, path: /\/transcripts\//u, partial: true });
          await expect(append(o, target, reply('refused by the disk'))).rejects.toBeInstanceOf(
            StoreUnavailableError,
          );
          files.clear();
          await files.idle();
          // Reads go on, without the refused message.
          expect(o.repos.sessions.find(target)?.messageCount).toBe(before.messageCount);
          expect(await readAllMessages(readsOf(o.store), id)).toHaveLength(2);
          // And once the disk works again, so do writes.
          await append(o, target, reply('after the fault'));
        } finally {
          await o.store.close();
        }
        const again = await open(dir);
        try {
          const messages = (await readAllMessages(
            readsOf(again.store),
            again.repos.sessions.list(again.organizationId, {}, {})[0]!.id,
          )) as Message[];
          const texts = JSON.stringify(messages);
          expect(texts).not.toContain('refused by the disk');
          expect(texts).toContain('after the fault');
        } finally {
          await again.store.close();
        }
      });
    }
  }
});
