import type { Sql } from 'postgres';
import { systemClock } from '../clock.js';
import { DatabaseTooNewError } from '../store/errors.js';
import type { Storage } from '../store/storage.js';
import type { TranscriptSource } from '../store/transcript-source.js';
import {
  connect,
  DatabaseUnreachableError,
  DatabaseUrlError,
  parseDatabaseUrl,
  type DatabaseTarget,
} from '../store-postgres/connect.js';
import {
  currentPostgresVersion,
  migratePostgres,
  LZ4_TRANSCRIPTS_VERSION,
  POSTGRES_MIGRATIONS,
} from '../store-postgres/migrations.js';
import { createPostgresStorage } from '../store-postgres/storage.js';
import { relayCredentialsEnded } from '../server/event-relay.js';
import { CliError } from './admin-target.js';
import { UsageError, type CommandName } from './usage.js';

/**
 * A team server's database for the command line: `--database`, else SESSIONDESK_DATABASE_URL,
 * read the same way by `serve` and by every command that can work on it or must refuse it.
 */

/**
 * The team database a command was given, or undefined for the data directory. A URL that is not
 * PostgreSQL's is a usage error before anything opens.
 */
export function databaseUrlOf(
  flag: unknown,
  command: CommandName,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const url = typeof flag === 'string' ? flag : env.SESSIONDESK_DATABASE_URL?.trim() || undefined;
  if (url === undefined) return undefined;
  try {
    parseDatabaseUrl(url);
  } catch (err) {
    if (err instanceof DatabaseUrlError) throw new UsageError(err.message, command);
    throw err;
  }
  return url;
}

/** Where the database is, as a person names it: never its password. */
export function describeDatabase(t: DatabaseTarget): string {
  return `PostgreSQL "${t.database}" at ${t.host}:${t.port} as ${t.user}`;
}

/** A database that cannot be reached, or that a newer version migrated, is a sentence (exit 1). */
export function asSentence(err: unknown): unknown {
  return err instanceof DatabaseUnreachableError || err instanceof DatabaseTooNewError
    ? new CliError(err.message)
    : err;
}

/** A pool on the database, reached with the same sentences as `serve`. */
export async function reachDatabase(url: string): Promise<Sql> {
  try {
    return await connect(url, { max: 2 });
  } catch (err) {
    throw asSentence(err);
  }
}

/**
 * The team database opened for a command, migrated first as `serve` migrates it (each step
 * under the same advisory lock, so a command and servers starting at once apply it once): the
 * administrator may make the first accounts before any server has started.
 */
export async function openTeamStorage(url: string): Promise<{
  storage: Storage;
  transcripts: TranscriptSource;
  /** Tells every server process that a credential ended, so that its live events end at once. */
  credentialsEnded(): Promise<void>;
  close(): Promise<void>;
}> {
  const sql = await reachDatabase(url);
  try {
    await migratePostgres(sql, { now: () => systemClock.now() });
  } catch (err) {
    await sql.end({ timeout: 1 });
    throw asSentence(err);
  }
  const { transcripts, ...storage } = createPostgresStorage(sql);
  return {
    storage,
    transcripts,
    credentialsEnded: () => relayCredentialsEnded(sql),
    close: () => sql.end({ timeout: 5 }),
  };
}

/** A word as a POSIX shell reads it back unchanged: the commands printed here are pasted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/u.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** `--host H --port P --username U`: how pg_dump and pg_restore reach the database, no password. */
function pgConnection(t: DatabaseTarget): string {
  return ['--host', t.host, '--port', String(t.port), '--username', t.user].map(shellWord).join(' ');
}

/** The exact pg_dump command that copies the whole team database to `file`. */
export function pgDumpCommand(url: string, file: string): string {
  const t = parseDatabaseUrl(url);
  return `pg_dump --format=custom --file ${shellWord(file)} ${pgConnection(t)} ${shellWord(t.database)}`;
}

/** The exact pg_restore command that puts such a copy back into the team database. */
export function pgRestoreCommand(url: string, file: string): string {
  const t = parseDatabaseUrl(url);
  return `pg_restore --clean --if-exists --no-owner ${pgConnection(t)} --dbname ${shellWord(t.database)} ${shellWord(file)}`;
}

/**
 * Refuses a command that works on a data directory alone when it was given a team database
 * (exit 2, as any option a command cannot take with another), rather than act on the local
 * data directory as if the database were not there. `why` says what to do instead.
 */
export function refuseTeamDatabase(command: CommandName, flag: unknown, why: (url: string) => string): void {
  const url = databaseUrlOf(flag, command);
  if (url === undefined) return;
  const given = typeof flag === 'string' ? '--database' : 'SESSIONDESK_DATABASE_URL';
  throw new UsageError(`${given} is refused: ${why(url)}`, command);
}

export interface TeamDoctorReport {
  database: DatabaseTarget;
  serverVersion: string;
  /** The newest migration step the database holds; 0 for an empty one. */
  schemaVersion: number;
  /** The newest step this Session Desk knows. */
  knownVersion: number;
  counts: { users: number; workspaces: number; sessions: number } | null;
  /** How the database compresses the transcript rows it writes (`lz4`, `pglz`); null without them. */
  transcriptCompression: string | null;
  notes: string[];
  problems: string[];
}

/**
 * `doctor --database`: whether the team database answers, which PostgreSQL it is, and whether
 * its schema is this version's, with what it holds. It reads and changes nothing: a database
 * behind is migrated by the next `serve` or admin command, not by a check.
 */
export async function checkTeamDatabase(url: string): Promise<TeamDoctorReport> {
  const database = parseDatabaseUrl(url);
  const sql = await reachDatabase(url);
  try {
    const [server] = await sql<{ version: string }[]>`SELECT current_setting('server_version') AS version`;
    const schemaVersion = await currentPostgresVersion(sql);
    const knownVersion = POSTGRES_MIGRATIONS.at(-1)?.version ?? 0;
    const report: TeamDoctorReport = {
      database,
      serverVersion: server?.version ?? 'unknown',
      schemaVersion,
      knownVersion,
      counts: null,
      transcriptCompression: null,
      notes: [],
      problems: [],
    };
    if (schemaVersion > knownVersion) {
      report.problems.push(
        `The schema is at version ${schemaVersion}, newer than this Session Desk knows (${knownVersion}): a newer version migrated it. Use that version.`,
      );
    } else if (schemaVersion === 0) {
      report.notes.push(
        'The database holds no Session Desk schema yet: the first "sessiondesk serve --database" or admin command with --database makes it.',
      );
    } else {
      if (schemaVersion < knownVersion) {
        report.notes.push(
          `The schema is at version ${schemaVersion}, older than this Session Desk's ${knownVersion}: the next "sessiondesk serve --database" or admin command with --database migrates it.`,
        );
      }
      const [counts] = await sql<{ users: number; workspaces: number; sessions: number }[]>`
        SELECT (SELECT count(*)::int FROM users) AS users, (SELECT count(*)::int FROM workspaces) AS workspaces,
          (SELECT count(*)::int FROM sessions) AS sessions`;
      report.counts = counts ?? null;
      report.transcriptCompression = await transcriptCompression(sql);
      if (report.transcriptCompression !== null && report.transcriptCompression !== 'lz4')
        report.notes.push(
          schemaVersion >= LZ4_TRANSCRIPTS_VERSION
            ? `Transcripts are compressed with ${report.transcriptCompression}, not lz4 (this PostgreSQL is built without it, or the column was changed): search reads a hit in a large message more slowly.`
            : `Transcripts are compressed with ${report.transcriptCompression}: the next "sessiondesk serve --database" compresses new ones with lz4, which search reads faster.`,
        );
    }
    return report;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * How new values of `transcript_chunks.bytes` are compressed: the column's own method, else the
 * database's default (`default_toast_compression`). Null when the table is not there.
 */
async function transcriptCompression(sql: Sql): Promise<string | null> {
  const [row] = await sql<{ method: string | null }[]>`
    SELECT CASE a.attcompression WHEN 'l' THEN 'lz4' WHEN 'p' THEN 'pglz'
      ELSE current_setting('default_toast_compression') END AS method
    FROM pg_attribute a WHERE a.attrelid = to_regclass('transcript_chunks') AND a.attname = 'bytes'`;
  return row?.method ?? null;
}

export function formatTeamDoctorReport(report: TeamDoctorReport): string {
  const lines = [
    `Database: ${describeDatabase(report.database)} (PostgreSQL ${report.serverVersion}): connected`,
    `Schema version: ${report.schemaVersion} (this Session Desk knows ${report.knownVersion})`,
  ];
  if (report.counts) {
    const { users, workspaces, sessions } = report.counts;
    lines.push(`Holds: ${users} user(s), ${workspaces} workspace(s), ${sessions} session(s)`);
  }
  if (report.transcriptCompression === 'lz4') lines.push('Transcripts: compressed with lz4');
  lines.push(...report.notes, ...report.problems.map((p) => `Problem: ${p}`));
  lines.push(report.problems.length === 0 ? 'No problems found.' : `${report.problems.length} problem(s).`);
  return lines.join('\n');
}
