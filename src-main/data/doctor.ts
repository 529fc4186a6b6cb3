import { inspectSearchIndex, type SearchIndexReport } from '../search/index-check.js';
import { SEARCH_INDEX_FILE } from '../search/search-index.js';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ADMIN_TOKEN_FILE, SERVER_FILE, type ServerInfo } from '../server-file.js';
import type { JournalDamage } from '../store/journal.js';
import { readJournal } from '../store/journal-reader.js';
import {
  journalName,
  recoveryPlan,
  scanNames,
  snapshotName,
  type RecoveryInput,
  type SnapshotCheck,
} from '../store/recovery-plan.js';
import { LOCK_FILE, lockHolder, readLockPid } from '../store/lock.js';
import { loadSqlJs, SqlJsDb } from '../store/sqljs.js';
import { storeLayout } from '../store/load-state.js';
import { Store } from '../store/store.js';
import { silentLogger, systemClock, type Logger } from '../clock.js';
import { realFiles } from '../store/file-layer.js';
import { TRANSCRIPT_MAGIC } from '../store/transcript-format.js';
import { transcriptPath, Transcripts } from '../store/transcripts.js';
import { databaseFacts, describeCounts, type DatabaseFacts } from './database.js';

/**
 * `sessiondesk doctor`: what is in a data directory and what the next start would make of
 * it, found the way the store finds it (the same snapshot checks, the same journal parser,
 * the same replay) but in memory only. It never takes the lock and never writes a file, so
 * it can run beside a server.
 */

export interface Finding {
  /** The file (or directory) concerned. */
  subject: string;
  problem: string;
  fix: string;
}

export interface DoctorReport {
  dataDir: string;
  exists: boolean;
  /** The data as the next start would rebuild it; null when there is none to rebuild. */
  database: {
    facts: DatabaseFacts;
    snapshot: number | null;
    journals: { generation: number; records: number }[];
    /** False when a missing journal stops the rebuild (the facts are those before it). */
    complete: boolean;
  } | null;
  snapshots: { name: string; generation: number; bytes: number; status: string; loaded: boolean }[];
  journals: {
    name: string;
    generation: number;
    bytes: number;
    records: number;
    damage?: JournalDamage;
  }[];
  keptAside: { name: string; bytes: number }[];
  lock:
    | { state: 'free' }
    | { state: 'held'; pid: number; byServer: boolean }
    | { state: 'stale'; pid: number | null };
  server:
    { state: 'none' } | { state: 'running'; info: ServerInfo } | { state: 'stale'; info: ServerInfo | null };
  /** The full-text index (search.db): never the only copy of anything, so never a problem. */
  searchIndex: SearchIndexReport;
  problems: Finding[];
  notes: string[];
}

/**
 * `sessiondesk doctor --repair`: opens the directory as a start does, except that a journal
 * damaged before its end is cut there (with a copy kept) and the journals after it are set
 * aside, so the writes after the damage are lost. It takes the lock: the server must be
 * stopped.
 */
export async function repairDataDir(dataDir: string, logger: Logger): Promise<void> {
  const store = await Store.open({ dataDir, clock: systemClock, logger, cutDamagedJournals: true });
  await store.close();
}

const KEPT_ASIDE = /\.(damaged|cut)-\d+$/u;
const ATTEMPTS = 3;

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

export async function runDoctor(dataDir: string): Promise<DoctorReport> {
  if (!existsSync(dataDir) || !statSync(dataDir).isDirectory()) {
    return {
      dataDir,
      exists: false,
      database: null,
      snapshots: [],
      journals: [],
      keptAside: [],
      lock: { state: 'free' },
      server: { state: 'none' },
      searchIndex: { state: 'missing' },
      problems: [
        {
          subject: dataDir,
          problem: existsSync(dataDir) ? 'is not a directory' : 'does not exist',
          fix:
            'Check --data-dir and SESSIONDESK_DATA_DIR. A new data directory is made by `sessiondesk serve` ' +
            'or by `sessiondesk restore` from a backup.',
        },
      ],
      notes: [],
    };
  }
  for (let attempt = 1; ; attempt += 1) {
    try {
      const { report, unsettled } = await inspectOnce(dataDir);
      // A running server may be mid-append or mid-snapshot: look again before calling it damage.
      if (!unsettled || attempt === ATTEMPTS) {
        if (unsettled) {
          report.notes.push(
            'A server is writing to this directory: if a problem above concerns the newest journal, ' +
              'run doctor again to see whether it was a write in progress.',
          );
        }
        return report;
      }
    } catch (err) {
      // A file listed a moment ago was removed (a running server's snapshot cleans up).
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === ATTEMPTS) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function lockState(dataDir: string): DoctorReport['lock'] {
  if (!existsSync(join(dataDir, LOCK_FILE))) return { state: 'free' };
  const holder = lockHolder(dataDir);
  if (holder !== null) return { state: 'held', pid: holder, byServer: false };
  return { state: 'stale', pid: readLockPid(dataDir) };
}

function serverState(dataDir: string, lock: DoctorReport['lock']): DoctorReport['server'] {
  let info: ServerInfo | null = null;
  try {
    info = JSON.parse(readFileSync(join(dataDir, SERVER_FILE), 'utf8')) as ServerInfo;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'none' };
  }
  if (info && lock.state === 'held' && info.pid === lock.pid) {
    lock.byServer = true;
    return { state: 'running', info };
  }
  return { state: 'stale', info };
}

async function inspectOnce(dataDir: string): Promise<{ report: DoctorReport; unsettled: boolean }> {
  const lock = lockState(dataDir);
  const server = serverState(dataDir, lock);
  const live = lock.state === 'held';
  const problems: Finding[] = [];
  const notes: string[] = [];
  const names = (await readdir(dataDir)).sort();
  const found = scanNames(names);
  const SQL = await loadSqlJs();

  // Every snapshot, newest first, for the listing; the newest that opens is what a start loads.
  const snapshots: DoctorReport['snapshots'] = [];
  const checks = new Map<number, SnapshotCheck>();
  let loaded: SqlJsDb | null = null;
  for (const generation of [...found.snapshots].reverse()) {
    const name = snapshotName(generation);
    const bytes = (await stat(join(dataDir, name))).size;
    const checked = await storeLayout.verifySnapshot(dataDir, generation);
    let check: SnapshotCheck = checked.ok ? { ok: true } : { ok: false, why: checked.why };
    if (checked.ok && loaded === null) {
      try {
        const database = new SQL.Database(checked.bytes);
        database.exec('SELECT count(*) FROM sqlite_master');
        loaded = new SqlJsDb(database);
      } catch (err) {
        check = { ok: false, why: `it cannot be opened (${errorText(err)})` };
      }
    }
    checks.set(generation, check);
    snapshots.push({
      name,
      generation,
      bytes,
      status: check.ok ? 'ok' : check.why,
      loaded: check.ok && loaded !== null && !snapshots.some((s) => s.loaded),
    });
  }

  // The store's own plan, with the journals it asks for replayed here in memory.
  const input: RecoveryInput = {
    dataDir,
    names,
    snapshots: checks,
    journals: new Map(),
    cutDamagedJournals: false,
  };
  let plan = recoveryPlan(input);
  const db = loaded ?? new SqlJsDb(new SQL.Database());
  let messageCounts: Array<{ id: string; messageCount: number }> | null = null;
  for (; plan.next !== null; plan = recoveryPlan(input)) {
    const path = join(dataDir, journalName(plan.next.generation));
    input.journals.set(
      plan.next.generation,
      await readJournal(realFiles, path, (records) => db.replayAll(records)),
    );
  }
  // The other journals (older than the snapshot loaded, or after the damage) are only read.
  const journals: DoctorReport['journals'] = [];
  for (const generation of found.journals) {
    const name = journalName(generation);
    const scan =
      input.journals.get(generation) ??
      (await readJournal(realFiles, join(dataDir, name), (records) => ({ applied: records.length })));
    journals.push({
      name,
      generation,
      bytes: scan.size,
      records: scan.records,
      ...(scan.damage ? { damage: scan.damage } : {}),
    });
  }

  const baseGeneration = plan.load ?? 0;
  for (const journal of journals) {
    if (journal.generation >= baseGeneration || !journal.damage) continue;
    problems.push({
      subject: journal.name,
      problem: `is damaged at byte ${journal.damage.offset} (${journal.damage.reason})`,
      fix:
        'The data does not need it (it belongs to an older snapshot), and it is removed after the next ' +
        'snapshot. Damage on disk can mean a failing disk: take a backup now (sessiondesk backup).',
    });
  }

  const chain = found.journals.filter((g) => g >= baseGeneration);
  for (const snapshot of snapshots) {
    if (snapshot.status === 'ok') continue;
    const fix =
      snapshot.generation < baseGeneration
        ? 'The data does not need it (a newer snapshot is intact), and it is removed after the next ' +
          'snapshot. Damage on disk can mean a failing disk: take a backup now (sessiondesk backup).'
        : plan.load !== null
          ? `Nothing is lost while the journals are intact: the next start sets it aside as ` +
            `${snapshot.name}.damaged-… and rebuilds the data from ${snapshotName(plan.load)} ` +
            'and the journals after it. Take a backup afterwards (sessiondesk backup).'
          : chain[0] === 0
            ? `Nothing is lost while the journals are intact: the next start sets it aside as ` +
              `${snapshot.name}.damaged-… and rebuilds the data from the journals, which reach back to the start.`
            : 'Restore a backup into a new directory (see the problem with the data directory).';
    problems.push({ subject: snapshot.name, problem: `is damaged: ${snapshot.status}`, fix });
  }
  let database: DoctorReport['database'] = null;
  let newestJournalDamaged = false;
  if (plan.damage.some((d) => d.kind === 'no-base')) {
    db.close();
    problems.push({
      subject: dataDir,
      problem:
        'has no intact snapshot, and its journals do not reach back to the start, so the data cannot be ' +
        'rebuilt: the next start refuses to open it',
      fix:
        'Restore a backup into a new directory (sessiondesk restore --input BACKUP --data-dir NEW_DIR) and ' +
        'keep this one as it is.',
    });
  } else if (!plan.fresh) {
    let complete = true;
    for (const damage of plan.damage) {
      if (damage.kind === 'journal-missing') {
        complete = false;
        problems.push({
          subject: journalName(damage.generation),
          problem:
            'is missing, so the writes in it and after it cannot be replayed: the next start refuses to ' +
            'open the directory',
          fix:
            'Put the file back if it was moved. Otherwise restore a backup into a new directory ' +
            '(sessiondesk restore --input BACKUP --data-dir NEW_DIR).',
        });
      } else if (damage.kind === 'journal') {
        const name = journalName(damage.generation);
        const { offset, reason, bytes, torn } = damage.damage;
        if (damage.newest) {
          newestJournalDamaged = true;
          problems.push(
            torn
              ? {
                  subject: name,
                  problem:
                    `ends with ${bytes} bytes that are not a complete record (${reason} at byte ` +
                    `${offset}): a crash cut off a write before it was acknowledged`,
                  fix:
                    'Start Session Desk once (sessiondesk serve, or any command that opens the directory): it ' +
                    `cuts the tail and keeps a copy of the whole file as ${name}.cut-…. No acknowledged write is lost.`,
                }
              : {
                  subject: name,
                  problem:
                    `is damaged at byte ${offset} (${reason}): the ${damage.records} records before ` +
                    `it are intact, but the ${bytes} bytes from there on may hold acknowledged writes, so ` +
                    'the next start refuses to open the directory',
                  fix:
                    'If the writes after that point matter, restore a backup into a new directory (sessiondesk ' +
                    'restore). Otherwise stop the server and run "sessiondesk doctor --repair": it keeps what is ' +
                    `intact and loses the rest, with a copy of the whole file as ${name}.cut-….`,
                },
          );
        } else {
          problems.push({
            subject: name,
            problem:
              `is damaged at byte ${offset} (${reason}), and the journals after it ` +
              `(${damage.later.map(journalName).join(', ')}) cannot be replayed on top of it: the next start ` +
              'refuses to open the directory',
            fix:
              'If the writes after that point matter, restore a backup into a new directory (sessiondesk ' +
              'restore). Otherwise stop the server and run "sessiondesk doctor --repair": it keeps what is ' +
              'intact and sets the rest aside (*.cut-*, *.damaged-*).',
          });
        }
      }
    }
    const replayed = plan.replay.map((generation) => ({
      generation,
      records: input.journals.get(generation)?.records ?? 0,
    }));
    const facts = databaseFacts(db);
    try {
      messageCounts = db
        .all('SELECT id, message_count FROM sessions')
        .map((r) => ({ id: String(r[0]), messageCount: Number(r[1]) }));
    } catch {
      // A database from before sessions existed: nothing to compare.
    }
    const transcripts = await checkTranscripts(dataDir, db);
    problems.push(...transcripts.problems);
    notes.push(...transcripts.notes);
    db.close();
    database = { facts, snapshot: plan.load, journals: replayed, complete };
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
  } else {
    db.close();
    notes.push('There is no database here yet: the first start creates it.');
  }

  const keptAside: DoctorReport['keptAside'] = [];
  for (const name of names.filter((n) => KEPT_ASIDE.test(n))) {
    keptAside.push({ name, bytes: (await stat(join(dataDir, name))).size });
  }
  if (keptAside.length > 0) {
    notes.push(
      `${keptAside.length} file(s) were kept aside by an earlier recovery (*.damaged-*, *.cut-*); the data was ` +
        'rebuilt without them. Keep them until you are sure nothing is missing, then delete them.',
    );
  }
  if (!live) {
    const leftovers = names.filter(storeLayout.isTempFile);
    if (leftovers.length > 0) {
      notes.push(`${leftovers.join(', ')}: left by an interrupted write; the next start removes them.`);
    }
    const orphans = [...found.metas].filter((g) => !found.snapshots.includes(g));
    if (orphans.length > 0) {
      notes.push(
        `${orphans.map(storeLayout.snapshotMetaName).join(', ')}: a checksum file without its snapshot, ` +
          'left by an interrupted snapshot; harmless.',
      );
    }
  }

  const searchIndex = inspectSearchIndex(dataDir, messageCounts, live);
  if (searchIndex.state === 'damaged') {
    notes.push(
      `${SEARCH_INDEX_FILE} cannot be used (${searchIndex.why}): the next start keeps it aside and rebuilds it ` +
        'from the transcripts. Nothing is lost; search finds less until it is rebuilt.',
    );
  } else if (searchIndex.state === 'ok' && searchIndex.behind > 0) {
    notes.push(
      `${SEARCH_INDEX_FILE}: ${searchIndex.behind} session(s) have messages not indexed yet; ` +
        `${live ? 'the running server' : 'the next start'} indexes them.`,
    );
  }

  if (lock.state === 'stale') {
    problems.push({
      subject: LOCK_FILE,
      problem:
        lock.pid === null
          ? 'is unreadable: it was left by a process that crashed while taking it'
          : `names process ${lock.pid}, which is not running (or that pid now belongs to another ` +
            'process): it was left by a process that crashed',
      fix: `Nothing to do by hand: the next server or command takes it over. You may also delete ${join(dataDir, LOCK_FILE)}.`,
    });
  }
  if (server.state === 'stale') {
    problems.push({
      subject: SERVER_FILE,
      problem: server.info
        ? `describes a server (pid ${server.info.pid}, ${server.info.url}) that is not running: it did not ` +
          'stop cleanly, and scripts that read the file find a dead URL'
        : 'is unreadable',
      fix:
        `Start the server again (it rewrites the file), or delete ${join(dataDir, SERVER_FILE)} and ` +
        `${join(dataDir, ADMIN_TOKEN_FILE)}.`,
    });
  }

  return {
    report: {
      dataDir,
      exists: true,
      database,
      snapshots,
      journals,
      keptAside,
      lock,
      server,
      searchIndex,
      problems,
      notes,
    },
    unsettled: (live && newestJournalDamaged) || (lock.state === 'stale' && lock.pid === null),
  };
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** The report as the command prints it: sections, then problems with their fixes. */
export function formatDoctorReport(report: DoctorReport): string {
  const lines: string[] = [`Data directory  ${report.dataDir}`];
  const section = (title: string, rows: string[]) => {
    rows.forEach((row, i) => lines.push(`${i === 0 ? title.padEnd(16) : ' '.repeat(16)}${row}`));
  };
  if (report.exists) {
    const db = report.database;
    if (db) {
      const from = [
        ...(db.snapshot === null ? [] : [storeLayout.snapshotName(db.snapshot)]),
        ...db.journals.map((j) => `${storeLayout.journalName(j.generation)} (${j.records} records)`),
      ].join(' + ');
      const integrity = db.facts.integrity.length === 1 && db.facts.integrity[0] === 'ok' ? 'ok' : 'FAILED';
      section('Database', [
        `rebuilt in memory from ${from || 'nothing (empty)'}${db.complete ? '' : ', up to a missing journal'}`,
        `integrity_check ${integrity}, foreign keys ${db.facts.foreignKeyViolations === 0 ? 'ok' : 'FAILED'}`,
        `schema version ${db.facts.schemaVersion} (this app: ${db.facts.knownVersion})`,
        describeCounts(db.facts.counts),
      ]);
    } else {
      section('Database', ['none']);
    }
    section(
      'Snapshots',
      report.snapshots.length === 0
        ? ['none']
        : report.snapshots.map(
            (s) =>
              `${s.name}  ${formatBytes(s.bytes)}  ${s.status === 'ok' ? 'checksum ok' : `DAMAGED: ${s.status}`}` +
              (s.loaded ? '  (loaded)' : ''),
          ),
    );
    section(
      'Journals',
      report.journals.length === 0
        ? ['none']
        : report.journals.map(
            (j) =>
              `${j.name}  ${formatBytes(j.bytes)}  ${j.records} records  ` +
              (j.damage ? `DAMAGED at byte ${j.damage.offset}: ${j.damage.reason}` : 'intact'),
          ),
    );
    section(
      'Kept aside',
      report.keptAside.length === 0
        ? ['none']
        : report.keptAside.map((k) => `${k.name}  ${formatBytes(k.bytes)}`),
    );
    const lock = report.lock;
    section('Lock', [
      lock.state === 'free'
        ? 'free'
        : lock.state === 'held'
          ? lock.byServer
            ? `held by the running server (pid ${lock.pid})`
            : `held by process ${lock.pid} (another sessiondesk command, or a server starting)`
          : `STALE (${lock.pid === null ? 'unreadable' : `pid ${lock.pid} is not running`})`,
    ]);
    const server = report.server;
    section('Server', [
      server.state === 'none'
        ? 'not running'
        : server.state === 'running'
          ? `running at ${server.info.url} (pid ${server.info.pid}, since ${server.info.startedAt})`
          : 'STALE server.json (no such server is running)',
    ]);
    const search = report.searchIndex;
    section('Search index', [
      search.state === 'missing'
        ? `none (${SEARCH_INDEX_FILE} is built from the transcripts at the next start)`
        : search.state === 'in-use'
          ? `${SEARCH_INDEX_FILE}, written by the running server (checked when it is stopped)`
          : search.state === 'damaged'
            ? `UNUSABLE: ${search.why} (rebuilt at the next start)`
            : `${SEARCH_INDEX_FILE} quick_check ok, ${search.sessions} sessions` +
              (search.behind > 0 ? `, ${search.behind} with messages still to index` : ', up to date'),
    ]);
  }
  lines.push('');
  if (report.problems.length === 0) {
    lines.push('No problems found.');
  } else {
    lines.push(`${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}:`);
    report.problems.forEach((p, i) => {
      lines.push(`  ${i + 1}. ${p.subject} ${p.problem}.`);
      lines.push(`     Fix: ${p.fix}`);
    });
  }
  if (report.notes.length > 0) {
    lines.push('', 'Notes:');
    for (const note of report.notes) lines.push(`  - ${note}`);
  }
  return lines.join('\n');
}

/**
 * Each transcript against the length the database counts for it: every committed frame
 * read and checked (length, checksum, end), and bytes past the end, which the next start
 * cuts back, noted.
 */
async function checkTranscripts(
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
        problem: `is damaged: ${errorText(err).replace(`${path}: `, '')}`,
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
