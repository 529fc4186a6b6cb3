import type { JournalScan } from '../store/journal-reader.js';
import type { RecoveryPlan } from '../store/recovery-plan.js';
import type { SqlJsDb } from '../store/sqljs.js';
import { databaseFacts } from './database.js';
import type { DoctorReport, Finding } from './doctor-report.js';
import { checkTranscripts } from './doctor-transcripts.js';

/**
 * Doctor's look at the database once it is rebuilt in memory: SQLite's own checks, its schema
 * version against this app's, and the transcripts it counts. Apart from the rebuild
 * (doctor.ts) because none of this depends on which snapshot and journals the data came from.
 */
export async function inspectDatabase(
  dataDir: string,
  db: SqlJsDb,
  plan: RecoveryPlan,
  replayed: ReadonlyMap<number, JournalScan>,
): Promise<{
  database: NonNullable<DoctorReport['database']>;
  /** Each session's message count, for the search index's check; null before sessions existed. */
  messageCounts: Array<{ id: string; messageCount: number }> | null;
  problems: Finding[];
  notes: string[];
}> {
  const facts = databaseFacts(db);
  let messageCounts: Array<{ id: string; messageCount: number }> | null = null;
  try {
    messageCounts = db
      .all('SELECT id, message_count FROM sessions')
      .map((r) => ({ id: String(r[0]), messageCount: Number(r[1]) }));
  } catch {
    // A database from before sessions existed: nothing to compare.
  }
  const { problems, notes } = await checkTranscripts(dataDir, db);
  if (facts.integrity.length !== 1 || facts.integrity[0] !== 'ok') {
    problems.push({
      subject: 'the database',
      problem: `fails PRAGMA integrity_check: ${facts.integrity.slice(0, 5).join('; ')}`,
      fix:
        'Export what is readable first (sessiondesk export --workspace ORG, for each workspace), then ' +
        'restore a backup into a new directory (sessiondesk restore).',
    });
  }
  if (facts.foreignKeyViolations > 0) {
    problems.push({
      subject: 'the database',
      problem: `has ${facts.foreignKeyViolations} rows that refer to rows that do not exist (PRAGMA foreign_key_check)`,
      fix: 'Restore a backup into a new directory (sessiondesk restore), or export and re-import the workspaces.',
    });
  }
  if (facts.schemaVersion > facts.knownVersion) {
    problems.push({
      subject: 'the database',
      problem: `is at schema version ${facts.schemaVersion}, newer than this app knows (${facts.knownVersion}): it refuses to open it`,
      fix: 'Update Session Desk.',
    });
  } else if (facts.schemaVersion < facts.knownVersion) {
    notes.push(
      `The database is at schema version ${facts.schemaVersion}; the next start migrates it to ${facts.knownVersion}.`,
    );
  }
  return {
    database: {
      facts,
      snapshot: plan.load,
      journals: plan.replay.map((generation) => ({
        generation,
        records: replayed.get(generation)?.records ?? 0,
      })),
      complete: !plan.damage.some((d) => d.kind === 'journal-missing'),
    },
    messageCounts,
    problems,
    notes,
  };
}
