import { createReadStream, existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { systemClock } from '../clock.js';
import { resolveDataDir } from '../paths.js';
import { describeCounts } from '../data/database.js';
import { repairDataDir, runDoctor } from '../data/doctor.js';
import { formatBytes, formatDoctorReport } from '../data/doctor-report.js';
import { EXPORT_FORMATS, type ExportFormat } from '../data/format.js';
import { formatImportReport, importSessions } from '../data/import.js';
import { readLines } from '../data/lines.js';
import { exportChunks } from '../data/export.js';
import { notFound } from '../errors.js';
import type { TranscriptReads } from '../sessions/transcript-reads.js';
import { restoreBackup } from '../data/restore.js';
import { BackupCheckError, checkBackupStream, type CheckedBackup } from '../data/backup.js';
import { TarError } from '../data/tar.js';
import { CliError, existingDataDir } from './admin-target.js';
import { parse, print, required, stderrLogger } from './command-line.js';
import { openDataTarget, type DataTarget } from './data-target.js';
import { fileSink, stdoutSink, type OutputSink } from './output.js';
import {
  checkTeamDatabase,
  databaseUrlOf,
  openTeamStorage,
  formatTeamDoctorReport,
  pgDumpCommand,
  pgRestoreCommand,
  refuseTeamDatabase,
} from './team-database.js';
import { UsageError } from './usage.js';

/**
 * The commands on the data as a whole rather than on accounts: export and import (a workspace's
 * sessions, as a stream or a file), backup and restore (the whole database, as one archive) and
 * doctor (the data directory checked, and with --repair its damage cut).
 */

async function withDataTarget<T>(dataDirFlag: unknown, run: (target: DataTarget) => Promise<T>): Promise<T> {
  const dataDir = existingDataDir(resolveDataDir(dataDirFlag as string | undefined));
  const target = await openDataTarget(dataDir, stderrLogger);
  try {
    return await run(target);
  } finally {
    await target.close();
  }
}

function readableFile(path: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch (err) {
    throw new CliError(`Cannot read ${path}: ${(err as Error).message}`);
  }
  if (!isFile) throw new CliError(`${path} is not a file`);
}

export async function exportCommand(args: string[]): Promise<void> {
  const v = parse('export', args);
  const databaseUrl = databaseUrlOf(v.database, 'export');
  required('export', v, 'workspace');
  const format = String(v.format);
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--format must be ${EXPORT_FORMATS.join(' or ')}, not ${format}`, 'export');
  }
  const organizationId = String(v.workspace);
  const output = typeof v.output === 'string' ? resolve(v.output) : null;
  /** Writes the export to the output, which holds a file's name only once the export is whole. */
  const writeExport = async (write: (out: OutputSink) => Promise<void>): Promise<number> => {
    const out = output ? await fileSink(output) : stdoutSink();
    try {
      await write(out);
      await out.commit();
    } catch (err) {
      await out.abort();
      throw err;
    }
    return out.bytes;
  };
  // From a team server's database as from a data directory: the same export, through Storage.
  const bytes =
    databaseUrl === undefined
      ? // Made once the data directory is open: opening it removes stray *.tmp files in it.
        await withDataTarget(v['data-dir'], (target) =>
          writeExport((out) => target.exportWorkspace(organizationId, format as ExportFormat, out)),
        )
      : await withTeamStorage(databaseUrl, async (team) => {
          if (!(await team.storage.repos.workspaces.findById(organizationId))) {
            throw notFound(`Workspace ${organizationId} not found`);
          }
          const at = systemClock.now().toISOString();
          return writeExport(async (out) => {
            for await (const chunk of exportChunks(team, organizationId, format as ExportFormat, at)) {
              await out.write(chunk);
            }
          });
        });
  if (output) print(`Exported ${organizationId} to ${output} (${formatBytes(bytes)}).`);
}

/** Runs `work` on a team server's database, opened (and migrated) for this command alone. */
async function withTeamStorage<T>(url: string, work: (team: TranscriptReads) => Promise<T>): Promise<T> {
  const team = await openTeamStorage(url);
  try {
    return await work(team);
  } finally {
    await team.close();
  }
}

export async function importCommand(args: string[]): Promise<void> {
  const v = parse('import', args);
  const databaseUrl = databaseUrlOf(v.database, 'import');
  required('import', v, 'workspace');
  let input: Readable;
  if (typeof v.input === 'string') {
    const path = resolve(v.input);
    readableFile(path);
    input = createReadStream(path);
  } else {
    if (process.stdin.isTTY) {
      throw new UsageError('pass --input FILE, or pipe the export in on stdin', 'import');
    }
    input = process.stdin;
  }
  const lines = () => readLines(input as AsyncIterable<Buffer>);
  // Into a team server's database as into a data directory: the same import, through Storage.
  const report =
    databaseUrl === undefined
      ? await withDataTarget(v['data-dir'], (target) => target.importSessions(String(v.workspace), input))
      : await withTeamStorage(databaseUrl, ({ storage }) =>
          importSessions(lines(), String(v.workspace), { storage }),
        );
  print(formatImportReport(report));
}

export async function backupCommand(args: string[]): Promise<void> {
  const v = parse('backup', args);
  refuseTeamDatabase(
    'backup',
    v.database,
    (url) =>
      "backup copies a data directory; a team server's data is in PostgreSQL, and nothing was copied. " +
      `Back it up with pg_dump (it asks for the password, or reads PGPASSWORD or ~/.pgpass): ${pgDumpCommand(url, typeof v.output === 'string' ? resolve(v.output) : 'sessiondesk.dump')}`,
  );
  required('backup', v, 'output');
  const output = resolve(String(v.output));
  const sink = await fileSink(output);
  let checked: CheckedBackup;
  try {
    checked = await withDataTarget(v['data-dir'], async (target) => {
      // Checked as it is written: the file appears under its name only if it would restore.
      const written = async function* () {
        for await (const chunk of target.backup()) {
          await sink.write(chunk);
          yield chunk;
        }
      };
      return checkBackupStream(written());
    });
    await sink.commit();
  } catch (err) {
    await sink.abort();
    if (err instanceof BackupCheckError || err instanceof TarError) {
      throw new CliError(
        `The copy is not a usable backup (${err.message}); nothing was written. Run "sessiondesk doctor".`,
      );
    }
    throw err;
  }
  print(
    `Backed up ${describeCounts(checked.facts.counts)} to ${output} (${formatBytes(sink.bytes)}: the database ` +
      `and ${checked.transcripts} transcripts; schema version ${checked.facts.schemaVersion}, integrity_check ok).`,
  );
}

export async function restoreCommand(args: string[]): Promise<void> {
  const v = parse('restore', args);
  refuseTeamDatabase(
    'restore',
    v.database,
    (url) =>
      'restore makes a backup from "sessiondesk backup" a new data directory; it cannot restore a team ' +
      `server's database, and nothing was changed. Restore a copy pg_dump made with: ${pgRestoreCommand(url, typeof v.input === 'string' ? resolve(v.input) : 'sessiondesk.dump')}`,
  );
  required('restore', v, 'input');
  const input = resolve(String(v.input));
  readableFile(input);
  const dataDir = resolveDataDir(v['data-dir'] as string | undefined);
  const facts = await restoreBackup(input, dataDir, {
    clock: systemClock,
    logger: stderrLogger,
  });
  print(`Restored ${describeCounts(facts.counts)} from ${input} into ${dataDir}.`);
  print(`Start it with: sessiondesk serve --data-dir ${JSON.stringify(dataDir)}`);
}

export async function doctorCommand(args: string[]): Promise<number> {
  const v = parse('doctor', args);
  const databaseUrl = databaseUrlOf(v.database, 'doctor');
  if (databaseUrl !== undefined) {
    if (v.repair) {
      throw new UsageError(
        "--repair mends a data directory's files; a team server's database has none to mend (PostgreSQL keeps its own): leave out --repair",
        'doctor',
      );
    }
    const report = await checkTeamDatabase(databaseUrl);
    print(v.json ? JSON.stringify(report, null, 2) : formatTeamDoctorReport(report));
    return report.problems.length > 0 ? 1 : 0;
  }
  const dataDir = resolveDataDir(v['data-dir'] as string | undefined);
  // Only a directory that exists is repaired: opening one creates it.
  if (v.repair && existsSync(dataDir)) await repairDataDir(dataDir, stderrLogger);
  const report = await runDoctor(dataDir);
  print(v.json ? JSON.stringify(report, null, 2) : formatDoctorReport(report));
  return report.problems.length > 0 ? 1 : 0;
}
