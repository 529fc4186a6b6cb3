import { inspectSearchIndex, type SearchIndexReport } from '../search/index-check.js';
import { SEARCH_INDEX_FILE } from '../search/index-file.js';
import { existsSync, statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readJournal, type JournalScan } from '../store/journal-reader.js';
import {
  journalName,
  recoveryPlan,
  scanNames,
  snapshotName,
  type RecoveryInput,
  type RecoveryPlan,
  type SnapshotCheck,
} from '../store/recovery-plan.js';
import { loadSqlJs, SqlJsDb } from '../store/sqljs.js';
import { storeLayout } from '../store/load-state.js';
import { Store } from '../store/store.js';
import { systemClock, type Logger } from '../clock.js';
import { realFiles } from '../store/file-layer.js';
import { inspectDatabase } from './doctor-database.js';
import { lockProblems, lockState, serverState } from './doctor-lock.js';
import { recoveryProblems } from './doctor-recovery.js';
import type { DoctorReport } from './doctor-report.js';

/**
 * `sessiondesk doctor`: what is in a data directory and what the next start would make of
 * it, found the way the store finds it (the same snapshot checks, the same journal parser,
 * the same replay) but in memory only. It never takes the lock and never writes a file, so
 * it can run beside a server. The rebuild is here; `inspectOnce` composes it with the other
 * parts, each in a doctor-*.ts of its own: the damage in words (doctor-recovery.ts), the
 * rebuilt database and its transcripts, the lock and server, and the report (doctor-report.ts).
 */

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

async function inspectOnce(dataDir: string): Promise<{ report: DoctorReport; unsettled: boolean }> {
  const lock = lockState(dataDir);
  const server = serverState(dataDir, lock);
  const live = lock.state === 'held';
  const names = (await readdir(dataDir)).sort();
  const found = scanNames(names);
  const { snapshots, journals, plan, replayed, db } = await rebuildInMemory(dataDir, names, found);
  const problems = recoveryProblems(dataDir, plan, snapshots, journals);
  const notes: string[] = [];
  let database: DoctorReport['database'] = null;
  let messageCounts: Array<{ id: string; messageCount: number }> | null = null;
  try {
    if (!plan.fresh && !plan.damage.some((d) => d.kind === 'no-base')) {
      const inspected = await inspectDatabase(dataDir, db, plan, replayed);
      ({ database, messageCounts } = inspected);
      problems.push(...inspected.problems);
      notes.push(...inspected.notes);
    }
  } finally {
    db.close();
  }
  if (plan.fresh) notes.push('There is no database here yet: the first start creates it.');

  const { keptAside, notes: leftBehind } = await filesLeftBehind(dataDir, names, found, live);
  notes.push(...leftBehind);
  const searchIndex = inspectSearchIndex(dataDir, messageCounts, live);
  notes.push(...searchIndexNotes(searchIndex, live));
  problems.push(...lockProblems(dataDir, lock, server));

  const newestJournalDamaged = plan.damage.some((d) => d.kind === 'journal' && d.newest);
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

/**
 * The data rebuilt in memory as the next start would rebuild it, with every snapshot and
 * journal listed. The caller closes `db`.
 */
async function rebuildInMemory(
  dataDir: string,
  names: string[],
  found: ReturnType<typeof scanNames>,
): Promise<{
  snapshots: DoctorReport['snapshots'];
  journals: DoctorReport['journals'];
  plan: RecoveryPlan;
  /** The journals the plan asked for, as read (their records replayed into `db`). */
  replayed: ReadonlyMap<number, JournalScan>;
  /** The rebuilt database: empty when there is no snapshot to load. */
  db: SqlJsDb;
}> {
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
        check = {
          ok: false,
          why: `it cannot be opened (${err instanceof Error ? err.message : String(err)})`,
        };
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
  return { snapshots, journals, plan, replayed: input.journals, db };
}

/**
 * Files an earlier recovery kept aside, and those an interrupted write left behind. While a
 * server holds the directory, a temp file or a lone checksum file may be its write in
 * progress, so they are named only when no one does.
 */
async function filesLeftBehind(
  dataDir: string,
  names: string[],
  found: ReturnType<typeof scanNames>,
  live: boolean,
): Promise<{ keptAside: DoctorReport['keptAside']; notes: string[] }> {
  const keptAside: DoctorReport['keptAside'] = [];
  const notes: string[] = [];
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
  return { keptAside, notes };
}

/** The search index is never the only copy of anything: what doctor finds there is a note. */
function searchIndexNotes(searchIndex: SearchIndexReport, live: boolean): string[] {
  const notes: string[] = [];
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
  return notes;
}
