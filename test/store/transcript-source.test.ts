import { truncate } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src-shared/index.js';
import {
  readAllMessages,
  readMessageAt,
  readMessagePage,
  settledRow,
} from '../../src-main/sessions/transcript-reads.js';
import { createPostgresStorage } from '../../src-main/store-postgres/storage.js';
import { TranscriptDamagedError } from '../../src-main/store/errors.js';
import { readsOf } from '../../src-main/store/sqljs-storage.js';
import type { Storage } from '../../src-main/store/storage.js';
import { MARK_EVERY, TRANSCRIPT_MAGIC } from '../../src-main/store/transcript-format.js';
import type { TranscriptSource } from '../../src-main/store/transcript-source.js';
import { transcriptPath } from '../../src-main/store/transcripts.js';
import { postgresTool, useMigratedPool } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';
import { addAdasSession, useSqlJsStore } from '../helpers/storage.js';

interface Opened {
  storage: Storage;
  transcripts: TranscriptSource;
  /** Takes away the transcript's bytes from `offset` on, as a damaged disk or database would. */
  damage(sessionId: string, offset: number): Promise<void>;
}

const AT = '2026-11-27T09:00:00.000Z';
const at = (i: number) => new Date(Date.parse(AT) + i * 1000).toISOString();
const said = (text: string): Message => ({
  type: 'assistant',
  message: { content: [{ type: 'text', text }] },
});

/**
 * The same reads of a session's transcript on either database, with the same answers: every
 * message in order, a page from a mark, one message at its offset, a piece of one, the raw
 * bytes, and a clear error for a transcript that lost bytes it counts.
 */
function transcriptContract(open: () => Promise<Opened>) {
  let db: Opened;
  const sent: Message[] = [];
  beforeAll(async () => {
    db = await open();
    await db.storage.write((tx) =>
      addAdasSession(tx, {
        id: 'ses_read',
        title: 'Reading',
        model: 'm',
        createdAt: AT,
        initialMessage: 'Begin',
      }),
    );
    sent.push({ type: 'user', message: { content: 'Begin' } });
    // Small messages past a mark, one larger than a query's window (4 MiB), and more after it.
    const messages = [
      ...Array.from({ length: MARK_EVERY + 5 }, (_, i) => said(`Message ${i} ${'é'.repeat(i)}`)),
      said(`BIG ${'z'.repeat(5 * 1024 * 1024)} END`),
      said('After the big one'),
    ];
    for (const [i, message] of messages.entries()) {
      await db.storage.write((tx) =>
        tx.sessions.appendMessage('ses_read', 'org_a', message, null, at(i + 1)),
      );
      sent.push(message);
    }
  }, 120_000);

  it('reads every message in order, a page from a mark, and one message at its offset', async () => {
    expect(await readAllMessages(db, 'ses_read')).toEqual(sent);
    const row = (await settledRow(db, 'ses_read'))!;
    expect(row.messageCount).toBe(sent.length);
    const page = await readMessagePage(db, row, MARK_EVERY + 2, 3, Infinity);
    expect(page.messages.map((m) => JSON.parse(m.toString()) as unknown)).toEqual(
      sent.slice(MARK_EVERY + 2, MARK_EVERY + 5),
    );
    expect(page.createdAtMs[0]).toBe(Date.parse(at(MARK_EVERY + 2)));
    expect(page.next).toBe(MARK_EVERY + 5);
    const big = await readMessagePage(db, row, sent.length - 2, 2, Infinity);
    for (const [i, offset] of big.offsets.entries()) {
      expect(JSON.parse((await readMessageAt(db, row, offset))!.toString())).toEqual(
        sent[sent.length - 2 + i],
      );
    }
    expect(await readMessageAt(db, row, 3)).toBeNull();
  });

  it('reads a piece of a large message without the rest, and the raw bytes whole', async () => {
    const row = (await settledRow(db, 'ses_read'))!;
    const big = await readMessagePage(db, row, sent.length - 2, 1, Infinity);
    const json = JSON.stringify(sent[sent.length - 2]);
    const { bytes, payloadBytes } = await db.transcripts.readPayloadRange(
      'ses_read',
      big.offsets[0]!,
      row.transcriptBytes,
      json.length - 100,
      json.length - 20,
    );
    expect(payloadBytes).toBe(json.length);
    expect(bytes.toString()).toBe(json.slice(-100, -20));
    await expect(
      db.transcripts.readPayloadRange('ses_read', big.offsets[0]!, row.transcriptBytes, 0, json.length + 1),
    ).rejects.toBeInstanceOf(TranscriptDamagedError);
    const raw: Buffer[] = [];
    for await (const piece of db.transcripts.readRaw('ses_read', row.transcriptBytes)) raw.push(piece);
    const whole = Buffer.concat(raw);
    expect(whole.length).toBe(row.transcriptBytes);
    expect(whole.subarray(0, TRANSCRIPT_MAGIC.length)).toEqual(TRANSCRIPT_MAGIC);
    expect(whole.includes(Buffer.from('After the big one'))).toBe(true);
  });

  it('answers a transcript that lost bytes it counts with a clear error, never a short answer', async () => {
    const row = (await settledRow(db, 'ses_read'))!;
    const page = await readMessagePage(db, row, sent.length - 2, 1, Infinity);
    await db.damage('ses_read', page.offsets[0]! + 100);
    await expect(readAllMessages(db, 'ses_read')).rejects.toBeInstanceOf(TranscriptDamagedError);
    await expect(readMessageAt(db, row, page.offsets[0]!)).rejects.toBeInstanceOf(TranscriptDamagedError);
    // What comes before the damage still reads.
    const early = await readMessagePage(db, row, 0, 5, Infinity);
    expect(early.messages).toHaveLength(5);
  });
}

describe('transcripts on sql.js', () => {
  const sqljs = useSqlJsStore('sessiondesk-transcripts-');
  transcriptContract(async () => {
    const store = await sqljs.open();
    return {
      ...readsOf(store),
      damage: (sessionId, offset) => truncate(transcriptPath(store.dataDir, sessionId), offset),
    };
  });
});

describe('transcripts on PostgreSQL', requireTools(postgresTool()), () => {
  const pg = useMigratedPool();
  transcriptContract(async () => {
    const pool = await pg.open();
    const { transcripts, ...storage } = createPostgresStorage(pool);
    return {
      storage,
      transcripts,
      async damage(sessionId, offset) {
        await pool`DELETE FROM transcript_chunks WHERE session_id = ${sessionId} AND start_offset >= ${offset}`;
        // The row holding `offset` is cut there.
        await pool`UPDATE transcript_chunks SET bytes = substring(bytes FROM 1 FOR (${offset} - start_offset)::int)
          WHERE session_id = ${sessionId} AND start_offset < ${offset} AND start_offset + length(bytes) > ${offset}`;
      },
    };
  });
});
