import type { MigrationStep } from './migration-step.js';
import { optStr, str } from './row.js';
import { stageMessages } from './sessions.js';
import type { Db } from './sqljs.js';

/**
 * Moves the message bodies of a database written before transcripts lived in files out of
 * SQLite, one session per write: its transcript file is written and made durable, then the
 * same write records its length and deletes its rows. A crash anywhere leaves each session
 * either moved (committed) or still in the table (its file, if any, holds only uncommitted
 * bytes and is rewritten next time), so running this again finishes the job: nothing lost,
 * nothing doubled.
 */
export async function moveMessagesToTranscripts(step: MigrationStep): Promise<void> {
  const table = step.db.first("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'messages'");
  if (!table) return;
  const sessionIds = step.db.all('SELECT DISTINCT session_id FROM messages').map((r) => str(r[0]));
  const total = sessionIds.length;
  if (total === 0) return;
  const loud = total >= 100;
  if (loud) step.progress(`Moving the messages of ${total} sessions into transcript files…`);
  let lastShown = 0;
  for (const [i, sessionId] of sessionIds.entries()) {
    await step.write((db) => moveSession(db, sessionId));
    const percent = Math.floor(((i + 1) * 100) / total);
    if (loud && percent >= lastShown + 10) {
      lastShown = percent - (percent % 10);
      step.progress(`  ${i + 1} of ${total} sessions (${lastShown}%)`);
    }
  }
}

function moveSession(db: Db, sessionId: string): void {
  const rows = db.all('SELECT author_id, body, created_at FROM messages WHERE session_id = ? ORDER BY seq', [
    sessionId,
  ]);
  db.changed(sessionId);
  // The session has no transcript yet: this is the write that creates it.
  const bytes = stageMessages(
    db,
    sessionId,
    { messageCount: 0, bytes: 0 },
    rows.map((r) => ({ payload: Buffer.from(str(r[1]), 'utf8'), createdAtMs: Date.parse(str(r[2])) })),
  );
  rows.forEach((r, i) => {
    const authorId = optStr(r[0]);
    if (authorId !== undefined) {
      db.run('INSERT INTO prompts (session_id, seq, author_id) VALUES (?, ?, ?)', [
        sessionId,
        i + 1,
        authorId,
      ]);
    }
  });
  db.run('UPDATE sessions SET transcript_bytes = ?, message_count = ? WHERE id = ?', [
    bytes,
    rows.length,
    sessionId,
  ]);
  db.run('DELETE FROM messages WHERE session_id = ?', [sessionId]);
}
