import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { SearchResponse } from '../../src-shared/search.js';
import type { Message } from '../../src-shared/sessions.js';
import { runCli } from '../helpers/cli.js';
import { useSandbox } from '../helpers/cli-extra.js';
import {
  createSession,
  seedWorkspace,
  startTestServer,
  tempDir,
  withKey,
  type TestServer,
} from '../helpers/server.js';
import { assistantText as text } from '../helpers/messages.js';
import { until } from '../helpers/until.js';
import { captureLog, onWriter } from '../helpers/search-writer.js';

/**
 * The index is written on a thread of its own (the index writer); these are the ways that
 * thread can fail or be cut short, with the real server over HTTP. Faults are made in the
 * writer itself through the inspector, as a crash or a long SQLite step would.
 */

/**
 * Holds the writer thread, as a long SQLite step would, in a blocking read of a FIFO: it can
 * take no message until the returned function opens the FIFO's other end and closes it.
 */
async function holdWriter(): Promise<() => Promise<void>> {
  const fifo = join(tempDir('writer-hold-'), 'hold');
  execFileSync('mkfifo', [fifo]);
  await onWriter(
    `setImmediate(() => process.getBuiltinModule('node:fs').readFileSync(${JSON.stringify(fifo)}))`,
  );
  let held = true;
  return async () => {
    if (!held) return;
    // Opening for writing without blocking fails (ENXIO) until the writer waits at the other end.
    const fd = await until(
      () => {
        try {
          return openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENXIO') return null;
          throw err;
        }
      },
      (opened) => opened !== null,
    );
    if (fd === null) throw new Error('the index writer never started reading the FIFO that holds it');
    closeSync(fd);
    held = false;
    rmSync(dirname(fifo), { recursive: true, force: true });
  };
}

/** The log's lines, as pino wrote them. */
function logLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('the index writer', () => {
  let server: TestServer | null = null;
  let letGo: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await letGo?.();
    letGo = null;
    await server?.dispose();
    server = null;
  });

  async function seeded(options: Parameters<typeof startTestServer>[0] = {}) {
    const started = await startTestServer(options);
    server = started;
    const owner = await seedWorkspace(started, 'owner');
    const id = (
      await createSession(started, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Sort the penguin roster.',
      })
    ).id;
    const append = (...messages: Message[]) =>
      started.store.write(() => {
        for (const message of messages) {
          started.repos.sessions.appendMessage(
            id,
            owner.organizationId,
            message,
            null,
            new Date().toISOString(),
          );
        }
      });
    const search = async (q: string) => {
      const response = await withKey(started, owner.apiKey, 'GET', `/api/search?q=${encodeURIComponent(q)}`);
      return {
        status: response.status,
        body: (await response.json()) as SearchResponse & { error?: { code: string } },
      };
    };
    const found = async (q: string) =>
      ((await search(q)).body.hits ?? []).map((h) => h.messageIndex).sort((a, b) => a - b);
    expect(
      await until(
        () => found('penguin'),
        (hits) => hits.length === 1,
      ),
    ).toEqual([0]);
    return { server: started, owner, id, append, search, found };
  }

  it('that dies is started again and catches up, the server going on', async () => {
    const log = captureLog();
    const { append, search, found, owner } = await seeded({ log: { level: 'info', stream: log.stream } });

    // The fault comes once the inspector has let go of the thread: a thread that ends while an
    // inspector session is attached to it can take the whole process down with it.
    await onWriter("setTimeout(() => { throw new Error('simulated writer fault'); }, 300)");
    await until(log.text, (text) => text.includes('simulated writer fault'));
    expect(log.text()).toMatch(
      /search index: the writer stopped \(simulated writer fault\); starting it again/u,
    );
    // A new writer indexes what is written next, and what the first had not committed.
    await append(text('The penguin roster is sorted by height.'));
    expect(
      await until(
        () => found('penguin'),
        (hits) => hits.length === 2,
      ),
    ).toEqual([0, 1]);

    // Everything else goes on, and the server still closes (afterEach).
    const list = await withKey(server!, owner.apiKey, 'GET', '/api/sessions');
    expect(list.status).toBe(200);
    expect((await search('penguin')).status).toBe(200);
  });

  it('that keeps dying is given up: search answers 503 and says why, the server going on', async () => {
    const dataDir = tempDir();
    const log = captureLog();
    const { search, owner } = await seeded({ dataDir, log: { level: 'info', stream: log.stream } });
    // The index file is gone and a folder stands in its place: a new writer cannot open it
    // and ends at once. The server's own connection still holds the file it opened.
    renameSync(join(dataDir, 'search.db'), join(dataDir, 'search.db.moved'));
    mkdirSync(join(dataDir, 'search.db'));
    // The first end, made in the writer; each writer started after it ends as it opens.
    await onWriter("setTimeout(() => { throw new Error('simulated writer fault'); }, 300)");
    await until(log.text, (text) => text.includes('the index writer keeps stopping'));
    expect(log.count('starting it again')).toBe(2);
    expect(log.text()).toMatch(/search index: the writer stopped \([^)]*unable to open database file/u);

    const refused = await search('penguin');
    expect(refused.status).toBe(503);
    expect(refused.body.error?.code).toBe('unavailable');
    expect(JSON.stringify(refused.body)).toMatch(/keeps stopping; restart the server to index again/u);
    // Everything else goes on, and the server still closes (afterEach).
    const list = await withKey(server!, owner.apiKey, 'GET', '/api/sessions');
    expect(list.status).toBe(200);
  });

  it('whose write fails drops what it had not committed, says so, and indexes again at the next write', async () => {
    const dataDir = tempDir();
    const log = captureLog();
    const { append, found } = await seeded({ dataDir, log: { level: 'info', stream: log.stream } });
    // Another program holds the index's write lock longer than the writer waits.
    const holder = new DatabaseSync(join(dataDir, 'search.db'));
    holder.exec('BEGIN IMMEDIATE');
    await append(text('Otters hold the lock.'));
    await until(log.text, (logged) => logged.includes('search index: database is locked'));
    holder.exec('ROLLBACK');
    holder.close();
    expect(await found('otters')).toEqual([]);
    await append(text('Otters let go.'));
    expect(
      await until(
        () => found('otters'),
        (hits) => hits.length === 2,
      ),
    ).toEqual([1, 2]);
  });

  it('closed while it still has batches to write: closing waits, commits them and leaves a sound index', async () => {
    const dataDir = tempDir();
    const log = captureLog();
    const {
      append,
      owner,
      id,
      server: first,
    } = await seeded({ dataDir, log: { level: 'debug', stream: log.stream } });
    // The writer held up, as by a long merge, while 400 messages are read and sent to it: the
    // index says when it has sent the session's last one.
    letGo = await holdWriter();
    await append(...Array.from({ length: 400 }, (_, i) => text(`Walrus number ${i} joins the roster.`)));
    const sentAll = (line: Record<string, unknown>) =>
      line.msg === 'search index: session up to date' && line.sessionId === id && line.messages === 401;
    expect(await until(() => logLines(log.text()).some(sentAll), Boolean, 30_000)).toBe(true);
    // Closing begins (the server stops listening, then closes the index) with the batches
    // still waiting for the writer, which is let go only then.
    const stopping = first.stop();
    expect(
      await until(
        () => first.app.server.listening,
        (listening) => !listening,
      ),
    ).toBe(false);
    await letGo();
    await stopping;
    const complaints = logLines(log.text()).filter(
      (line) => Number(line.level) >= 40 && String(line.msg).startsWith('search index:'),
    );
    expect(complaints).toEqual([]);

    // What was sent before closing is in the index, committed; the file is sound.
    const url = pathToFileURL(join(dataDir, 'search.db'));
    url.searchParams.set('immutable', '1');
    const db = new DatabaseSync(url, { readOnly: true });
    expect(db.prepare('PRAGMA quick_check').get()?.quick_check).toBe('ok');
    const indexed = Number(db.prepare('SELECT max(indexed) AS n FROM sessions').get()?.n);
    db.close();
    // Every message it was sent before closing: the first, and the 400.
    expect(indexed).toBe(401);
    const doctor = await runCli(['doctor', '--data-dir', dataDir]);
    expect(doctor.stdout).toMatch(/Search index\s+search\.db quick_check ok/u);

    // The next start finds them in the index.
    server = await startTestServer({ dataDir });
    const last = async () => {
      const response = await withKey(server!, owner.apiKey, 'GET', '/api/search?q=399');
      return ((await response.json()) as SearchResponse).hits.map((h) => h.messageIndex);
    };
    expect(await until(last, (hits) => hits.length > 0)).toEqual([400]);
  });
});

describe('sessiondesk serve', () => {
  const sandbox = useSandbox();

  it('stopped while indexing a whole data directory exits 0 and leaves a sound index', async () => {
    const dataDir = sandbox.dataDir();
    const seeding = await startTestServer({ dataDir });
    const owner = await seedWorkspace(seeding, 'owner');
    const line = 'The quokka census counts every burrow on the island twice. '.repeat(400);
    for (let s = 0; s < 8; s += 1) {
      const id = (
        await createSession(seeding, owner.user.cookie, {
          organizationId: owner.organizationId,
          initialMessage: `Census ${s}`,
        })
      ).id;
      await seeding.store.write(() => {
        for (let i = 0; i < 300; i += 1) {
          seeding.repos.sessions.appendMessage(
            id,
            owner.organizationId,
            text(`${i} ${line}`),
            null,
            new Date().toISOString(),
          );
        }
      });
    }
    await seeding.stop();
    // No index: the next start builds it from about 60 MB of transcripts.
    for (const name of ['search.db', 'search.db-wal', 'search.db-shm'])
      rmSync(join(dataDir, name), { force: true });

    const serve = await sandbox.serve(dataDir);
    // Stopped once its writer has committed a first batch, while the rest is still to index.
    const indexedSessions = () => {
      try {
        const db = new DatabaseSync(join(dataDir, 'search.db'), { readOnly: true });
        try {
          return Number(db.prepare('SELECT count(*) AS n FROM sessions WHERE indexed > 0').get()?.n);
        } finally {
          db.close();
        }
      } catch {
        return 0;
      }
    };
    expect(await until(indexedSessions, (n) => n > 0, 20_000)).toBeGreaterThan(0);
    expect(await serve.stop()).toBe(0);
    expect(serve.stderr()).not.toMatch(/search index/iu);
    const doctor = await runCli(['doctor', '--data-dir', dataDir]);
    expect(doctor.stdout).toMatch(/Search index\s+search\.db quick_check ok/u);
  });
});
