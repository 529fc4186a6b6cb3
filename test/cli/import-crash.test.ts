import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAccounts } from '../../src-main/accounts/accounts.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { exportChunks } from '../../src-main/data/export.js';
import { readAllMessages } from '../../src-main/sessions/transcript-reads.js';
import { createRepositories } from '../../src-main/store/repositories.js';
import { Store } from '../../src-main/store/store.js';
import { transcriptPath } from '../../src-main/store/transcripts.js';
import type { Message } from '../../src-shared/sessions.js';
import { CLI, runCli } from '../helpers/cli.js';
import { useSandbox } from '../helpers/cli-extra.js';
import { PASSWORD } from '../helpers/server.js';
import { storageOf, readsOf } from '../../src-main/store/sqljs-storage.js';

const sandbox = useSandbox();
const EMAIL = 'ada@example.test';
const SESSION = 'ses_killedimport0000000000';
const MESSAGES = 120;

/** What the big session holds: its prompt, then MESSAGES answers of 512 KiB each. */
function bigTranscript(): Message[] {
  return [
    { type: 'user', message: { content: 'Read every file.' } },
    ...Array.from({ length: MESSAGES }, (_, i): Message => {
      const text = `file ${i}\n`.padEnd(512 * 1024, 'x');
      return { type: 'assistant', message: { content: [{ type: 'text', text }] } };
    }),
  ];
}

/** A user owning one workspace; with `big`, a session of about 60 MB in it. */
async function dataDir(dir: string, big: boolean): Promise<string> {
  const store = await Store.open({ dataDir: dir, clock: systemClock, logger: silentLogger });
  try {
    const repos = createRepositories(store.db);
    const accounts = createAccounts(storageOf(store), systemClock);
    const user = await accounts.createUser({ email: EMAIL, name: 'Ada', password: PASSWORD });
    const { organizationId } = await accounts.createWorkspace({ name: 'Acme', ownerEmail: EMAIL });
    if (big) {
      const at = new Date().toISOString();
      const [prompt, ...answers] = bigTranscript();
      await store.write(() =>
        repos.sessions.insert({
          id: SESSION,
          workspaceId: organizationId,
          authorId: user.id,
          title: 'Read everything',
          model: 'claude-opus-4-6',
          createdAt: at,
          baseBranch: 'main',
          initialMessage: (prompt as Extract<Message, { type: 'user' }>).message.content,
        }),
      );
      for (const message of answers) {
        await store.write(() => repos.sessions.appendMessage(SESSION, organizationId, message, null, at));
      }
    }
    return organizationId;
  } finally {
    await store.close();
  }
}

async function withStore<T>(dir: string, read: (store: Store) => Promise<T>): Promise<T> {
  const store = await Store.open({ dataDir: dir, clock: systemClock, logger: silentLogger });
  try {
    return await read(store);
  } finally {
    await store.close({ snapshot: false });
  }
}

describe('sessiondesk import, killed in the middle of a big session', () => {
  it('leaves the messages written so far, and the same import again completes the session', async () => {
    const source = sandbox.dataDir();
    const target = sandbox.dataDir();
    const [sourceOrg, targetOrg] = await Promise.all([dataDir(source, true), dataDir(target, false)]);
    const file = join(sandbox.dataDir(), 'export.ndjson');
    await withStore(source, async (store) => {
      const out = createWriteStream(file);
      for await (const chunk of exportChunks(readsOf(store), sourceOrg, 'ndjson', new Date().toISOString())) {
        if (!out.write(chunk)) await once(out, 'drain');
      }
      out.end();
      await once(out, 'finish');
    });

    const args = ['import', '--workspace', targetOrg, '--input', file, '--data-dir', target];
    const child = spawn(process.execPath, [CLI, ...args], { stdio: 'ignore' });
    // Killed once a few of its writes are on disk: its transcript grows one batch at a time.
    const transcript = transcriptPath(target, SESSION);
    while (!(existsSync(transcript) && statSync(transcript).size > 8 * 2 ** 20)) {
      expect(child.exitCode, 'the import ended before it could be killed').toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    child.kill('SIGKILL');
    await once(child, 'exit');

    const written = await withStore(target, async (store) => {
      const row = createRepositories(store.db).sessions.find(SESSION);
      return row?.messageCount ?? 0;
    });
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(MESSAGES + 1);

    const again = await runCli(args);
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(again.stdout).toMatch(
      new RegExp(`^imported 1 session \\(${MESSAGES + 1 - written} messages\\), skipped 0\\n`, 'u'),
    );
    const [before, after] = await Promise.all([
      withStore(source, async (store) => ({ row: createRepositories(store.db).sessions.find(SESSION) })),
      withStore(target, async (store) => {
        const repos = createRepositories(store.db);
        return {
          messages: await readAllMessages(readsOf(store), SESSION),
          row: repos.sessions.find(SESSION),
        };
      }),
    ]);
    expect(after.messages).toEqual(bigTranscript());
    expect(after.row).toMatchObject({
      messageCount: MESSAGES + 1,
      status: before.row?.status,
      updatedAt: before.row?.updatedAt,
      transcriptBytes: before.row?.transcriptBytes,
    });
  }, 180_000);
});
