import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { Logger } from '../clock.js';
import { systemClock } from '../clock.js';
import { scanFollowedSources } from '../history/follower.js';
import { exportChunks } from '../data/export.js';
import { ImportReportSchema, type ExportFormat, type ImportReport } from '../data/format.js';
import { importSessions } from '../data/import.js';
import { readLines } from '../data/lines.js';
import { notFound } from '../errors.js';
import { ADMIN_TOKEN_HEADER, NDJSON } from '../server/routes/admin.js';
import { backupChunks } from '../data/backup.js';
import { createRepositories } from '../store/repositories.js';
import { readsOf, storageOf } from '../store/sqljs-storage.js';
import { CliError, describeAdminError, localSandboxRoot, reachDataDir, unreachable } from './admin-target.js';
import type { OutputSink } from './output.js';

/**
 * Export, import and backup, on the data directory or through the server that holds it
 * (so that nothing reads or writes the files behind a running server's back).
 */
export interface DataTarget {
  /** `server` or `directory`: where the work is done. */
  readonly via: 'server' | 'directory';
  exportWorkspace(organizationId: string, format: ExportFormat, out: OutputSink): Promise<void>;
  importSessions(organizationId: string, input: Readable): Promise<ImportReport>;
  /**
   * Reads what the followed agent CLIs' folders gained and settles the sessions whose files went
   * quiet, as a running server's follower does: beside a data directory no server holds, before
   * its sessions are read (`push`). Through a server, nothing: its follower does it.
   */
  followHistory(): Promise<void>;
  /**
   * The backup archive (see data/backup.ts), consistent at one instant, as it is made; the
   * caller checks it as it reads (a cut-off stream lacks the archive's end).
   */
  backup(): AsyncIterable<Buffer>;
  close(): Promise<void>;
}

export async function openDataTarget(dataDir: string, logger: Logger): Promise<DataTarget> {
  const access = await reachDataDir(dataDir, logger);
  if (access.kind === 'server') return serverTarget(access.url, access.adminToken);
  const { store } = access;
  const repos = createRepositories(store.db);
  return {
    via: 'directory',
    async exportWorkspace(organizationId, format, out) {
      if (!repos.workspaces.findById(organizationId)) throw notFound(`Workspace ${organizationId} not found`);
      const chunks = exportChunks(
        readsOf(store),
        organizationId,
        format,
        systemClock.now().toISOString(),
        localSandboxRoot(dataDir),
      );
      for await (const chunk of chunks) await out.write(chunk);
    },
    importSessions: (organizationId, input) =>
      importSessions(readLines(input as AsyncIterable<Buffer>), organizationId, {
        storage: storageOf(store),
      }),
    followHistory: () =>
      // No server in this process: nothing waits for a turn of its event loop.
      scanFollowedSources({ storage: storageOf(store), clock: systemClock, logger }, { turnMs: Infinity }),
    backup: () => backupChunks(store),
    // An import writes much: the server's next start should not replay it all.
    close: () => store.close({ snapshot: 'when-large' }),
  };
}

function serverTarget(baseUrl: string, adminToken: string): DataTarget {
  /** Sends one request (streaming `body` if given) and resolves with the response, checked. */
  function send(method: string, path: string, body?: Readable): Promise<IncomingMessage> {
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest(new URL(path, baseUrl), {
        method,
        headers: {
          [ADMIN_TOKEN_HEADER]: adminToken,
          ...(body ? { 'content-type': NDJSON, 'transfer-encoding': 'chunked' } : {}),
        },
      });
      let answered = false;
      req.on('response', (response) => {
        answered = true;
        if ((response.statusCode ?? 500) < 400) return resolve(response);
        // Refused (not an export, unknown workspace): stop sending the rest of the input.
        if (body) {
          body.unpipe(req);
          body.destroy();
        }
        readText(response)
          .then((text) => reject(new CliError(describeAdminError(response.statusCode ?? 500, text))), reject)
          .finally(() => req.destroy());
      });
      // A server that answers before reading the whole body (a bad header) may close early.
      req.on('error', (err) => {
        if (!answered) reject(unreachable(baseUrl, err));
      });
      if (!body) {
        req.end();
        return;
      }
      body.on('error', (err) => {
        req.destroy(err);
        reject(new CliError(`Reading the input failed: ${err.message}`));
      });
      body.pipe(req);
    });
  }

  const cutShort = () =>
    new CliError(`The server at ${baseUrl} stopped sending before the end; the output is incomplete.`);

  return {
    via: 'server',
    async exportWorkspace(organizationId, format, out) {
      const query = new URLSearchParams({ organizationId, format });
      const response = await send('GET', `/api/admin/export?${query}`);
      try {
        for await (const chunk of response) await out.write(chunk as Buffer);
      } catch (err) {
        if (err instanceof CliError) throw err;
        throw cutShort();
      }
      if (!response.complete) throw cutShort();
    },
    async importSessions(organizationId, input) {
      const query = new URLSearchParams({ organizationId });
      const response = await send('POST', `/api/admin/import?${query}`, input);
      const text = await readText(response);
      const report = ImportReportSchema.safeParse(safeJson(text));
      if (!report.success)
        throw new CliError(`The server's import report is unreadable: ${text.slice(0, 200)}`);
      return report.data;
    },
    async *backup() {
      const response = await send('GET', '/api/admin/backup');
      try {
        for await (const chunk of response) yield chunk as Buffer;
      } catch {
        throw cutShort();
      }
      if (!response.complete) throw cutShort();
    },
    followHistory: async () => undefined,
    close: async () => undefined,
  };
}

async function readText(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
