/**
 * The peak RSS of opening a data directory whose journal holds about 60 MiB of writes (what
 * a start replays after a crash, just under the 64 MiB at which a snapshot is taken), next
 * to opening the same directory once its journal was snapshotted away. Each open runs in its
 * own process (test/fixtures/open-store.ts: open, then close without a snapshot); its
 * `VmHWM` is sampled until it exits. `--source DIR` measures another checkout of the product
 * (one made with `git archive`, say) on the same directory.
 *
 *   node ./bin/run-ts.js bench/open-memory.ts [--mb 60] [--source DIR]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createAccounts } from '../src-main/accounts/accounts.js';
import { silentLogger, systemClock } from '../src-main/clock.js';
import { createRepositories } from '../src-main/store/repositories.js';
import { Store } from '../src-main/store/store.js';
import { storageOf } from '../src-main/store/sqljs-storage.js';

const { values } = parseArgs({
  options: { mb: { type: 'string', default: '60' }, source: { type: 'string', default: '.' } },
});
const journalTarget = Number(values.mb) * 2 ** 20;
const source = resolve(String(values.source));
const root = mkdtempSync(join(tmpdir(), 'sessiondesk-open-bench-'));

/** A data directory whose journal holds `journalTarget` bytes of task-list writes. */
async function withJournal(dataDir: string): Promise<number> {
  const store = await Store.open({
    dataDir,
    clock: systemClock,
    logger: silentLogger,
    snapshotAfterBytes: 2 ** 40,
  });
  try {
    const repos = createRepositories(store.db);
    const accounts = createAccounts(storageOf(store), systemClock);
    const user = await accounts.createUser({
      email: 'ada@example.test',
      name: 'Ada',
      password: 'correct horse battery staple',
    });
    const { organizationId } = await accounts.createWorkspace({ name: 'Bench', ownerEmail: user.email });
    const sessionId = 'ses_openbench0000000000000';
    await store.write(() =>
      repos.sessions.insert({
        id: sessionId,
        workspaceId: organizationId,
        authorId: user.id,
        title: 'Journal',
        model: 'claude-opus-4-6',
        createdAt: new Date().toISOString(),
        baseBranch: 'main',
      }),
    );
    let round = 0;
    while (store.status().journalBytes < journalTarget) {
      const writes = Array.from({ length: 32 }, () => {
        round += 1;
        const tasks = Array.from({ length: 100 }, (_, i) => ({
          id: `t${i}`,
          title: `Task ${i} of round ${round} `.padEnd(400, '.'),
          status: 'pending' as const,
        }));
        return store.write(() => repos.sessions.replaceTasks(sessionId, tasks));
      });
      await Promise.all(writes);
    }
    return store.status().journalBytes;
  } finally {
    await store.close({ snapshot: false });
  }
}

async function peakRssOfOpen(dataDir: string): Promise<{ peakMb: number; seconds: number }> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [join(source, 'bin/run-ts.js'), join(source, 'test/fixtures/open-store.ts'), dataDir],
    { cwd: source, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let peakKb = 0;
  const timer = setInterval(() => {
    try {
      const hwm = /VmHWM:\s+(\d+) kB/u.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (hwm) peakKb = Math.max(peakKb, Number(hwm[1]));
    } catch {
      // Exited between two samples: the last one read stands.
    }
  }, 20);
  const [code] = (await once(child, 'exit')) as [number];
  clearInterval(timer);
  if (code !== 0 || !stderr.includes('opened')) throw new Error(`open exited ${code}: ${stderr}`);
  return { peakMb: peakKb / 1024, seconds: (performance.now() - started) / 1000 };
}

try {
  const dataDir = join(root, 'journal');
  const bytes = await withJournal(dataDir);
  const journals = readdirSync(dataDir).filter((n) => n.startsWith('journal-'));
  const sizes = journals.map((n) => `${n} ${(statSync(join(dataDir, n)).size / 2 ** 20).toFixed(1)} MiB`);
  // Each open gets a fresh copy: opening leaves the directory as it found it, but be sure.
  const copy = join(root, 'copy');
  cpSync(dataDir, copy, { recursive: true });
  const withJournalRun = await peakRssOfOpen(copy);
  rmSync(copy, { recursive: true, force: true });

  // The same data with its journal snapshotted away: the floor of an open.
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  await store.close();
  const floor = await peakRssOfOpen(dataDir);

  console.log(`code: ${source}`);
  console.log(`journal: ${(bytes / 2 ** 20).toFixed(1)} MiB written (${sizes.join(', ')})`);
  console.log(
    `open with the journal to replay: peak RSS ${withJournalRun.peakMb.toFixed(0)} MB, ${withJournalRun.seconds.toFixed(1)} s`,
  );
  console.log(
    `open after a snapshot (nothing to replay): peak RSS ${floor.peakMb.toFixed(0)} MB, ${floor.seconds.toFixed(1)} s`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
