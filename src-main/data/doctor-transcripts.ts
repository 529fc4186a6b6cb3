import { existsSync, statSync } from 'node:fs';
import { silentLogger } from '../clock.js';
import { realFiles } from '../store/file-layer.js';
import type { SqlJsDb } from '../store/sqljs.js';
import { TRANSCRIPT_MAGIC } from '../store/transcript-format.js';
import { transcriptPath, Transcripts } from '../store/transcripts.js';
import type { Finding } from './doctor-report.js';

/**
 * Doctor's check of the transcript files, which hold the messages outside the database.
 * Apart from the database's own checks (doctor-database.ts) because it reads another kind
 * of file, in its own format, one per session.
 *
 * Each transcript against the length the database counts for it: every committed frame
 * read and checked (length, checksum, end), and bytes past the end, which the next start
 * cuts back, noted.
 */
export async function checkTranscripts(
  dataDir: string,
  db: SqlJsDb,
): Promise<{ problems: Finding[]; notes: string[] }> {
  const problems: Finding[] = [];
  const notes: string[] = [];
  const hasColumn = db
    .all("SELECT name FROM pragma_table_info('sessions')")
    .some((r) => r[0] === 'transcript_bytes');
  if (!hasColumn) return { problems, notes };
  const transcripts = new Transcripts(realFiles, dataDir, silentLogger);
  let longer = 0;
  for (const [id, committed] of db.all(
    'SELECT id, transcript_bytes FROM sessions WHERE transcript_bytes > 0',
  )) {
    const sessionId = String(id);
    const length = Number(committed);
    const path = transcriptPath(dataDir, sessionId);
    const size = existsSync(path) ? statSync(path).size : null;
    if (size === null || size < length) {
      problems.push({
        subject: path,
        problem:
          size === null
            ? `is missing; the database counts ${length} bytes of messages in it`
            : `has ${size} bytes; the database counts ${length}: the messages past byte ${size} are lost`,
        fix:
          'Put the file back if it was moved, or restore a backup into a new directory (sessiondesk restore). ' +
          'Until then Session Desk refuses to open the directory.',
      });
      continue;
    }
    if (size > length) longer += 1;
    try {
      for await (const piece of transcripts.readPayloads(sessionId, TRANSCRIPT_MAGIC.length, length))
        void piece;
    } catch (err) {
      problems.push({
        subject: path,
        problem: `is damaged: ${(err instanceof Error ? err.message : String(err)).replace(`${path}: `, '')}`,
        fix:
          'Export the workspace (the other sessions read fine) and restore a backup into a new directory; ' +
          'reading this session fails until then. Damage on disk can mean a failing disk.',
      });
    }
  }
  if (longer > 0) {
    notes.push(
      `${longer} transcript${longer === 1 ? ' ends' : 's end'} in bytes of a write that never committed: the next ` +
        'start cuts them back and keeps them aside (*.cut-*). Nothing acknowledged is lost.',
    );
  }
  return { problems, notes };
}
