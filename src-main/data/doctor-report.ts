import type { SearchIndexReport } from '../search/index-check.js';
import { SEARCH_INDEX_FILE } from '../search/index-file.js';
import type { ServerInfo } from '../server-file.js';
import type { JournalDamage } from '../store/journal.js';
import { journalName, snapshotName } from '../store/recovery-plan.js';
import { describeCounts, type DatabaseFacts } from './database.js';

/**
 * What `sessiondesk doctor` reports, and the report as the command prints it. Kept apart from
 * the inspection (doctor.ts and the doctor-*.ts modules it composes): each part of the
 * inspection fills in its piece of this shape, and printing it reads no file.
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
        ...(db.snapshot === null ? [] : [snapshotName(db.snapshot)]),
        ...db.journals.map((j) => `${journalName(j.generation)} (${j.records} records)`),
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
