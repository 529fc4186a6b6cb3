/**
 * What sign-ins arriving together cost a server in memory: `sessiondesk serve` (the real
 * command, as its own process) gets four sign-ins at once (its first of all, two right, one for
 * an unknown email, one wrong password), and its peak RSS (VmHWM, reset just before) is
 * compared with its RSS before them. Each password check's scrypt (N=2^17, r=8) holds 128 MiB
 * while it runs and the server runs them one at a time (test/cli/sign-in-memory.test.ts checks
 * that order), so the four take about 128 MiB, not 512. Target: at most 230 MiB more. Linux
 * only (/proc). Prints one line, and exits 1 when over the target.
 *
 *   node ./bin/run-ts.js bench/sign-in-memory.ts
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccounts } from '../src-main/accounts/accounts.js';
import { silentLogger, systemClock } from '../src-main/clock.js';
import { Store } from '../src-main/store/store.js';
import { storageOf } from '../src-main/store/sqljs-storage.js';

const MiB = 1024 * 1024;
const TARGET_MIB = 230;
const EMAIL = 'ada@example.test';
const PASSWORD = 'correct horse battery staple';

/** A field of /proc/PID/status, in bytes. */
function status(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`, 'u').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match?.[1]) throw new Error(`no ${field} for ${pid}`);
  return Number(match[1]) * 1024;
}

async function seed(dataDir: string): Promise<void> {
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  try {
    const accounts = createAccounts(storageOf(store), systemClock);
    await accounts.createUser({ email: EMAIL, name: 'Ada', password: PASSWORD });
    await accounts.createWorkspace({ name: 'Bench', ownerEmail: EMAIL });
  } finally {
    await store.close();
  }
}

/** `sessiondesk serve` on any free port, once it prints where it listens. */
async function serve(dataDir: string) {
  const child = spawn(
    process.execPath,
    ['./bin/sessiondesk.js', 'serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const match = /running at (http:\/\/\S+)\r?\n/u.exec(stdout);
      if (match?.[1]) resolve(new URL(match[1]).origin);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code} before it listened: ${stderr}`)));
  });
  return { child, url };
}

const root = mkdtempSync(join(tmpdir(), 'sessiondesk-sign-in-bench-'));
try {
  const dataDir = join(root, 'data');
  await seed(dataDir);
  const { child, url } = await serve(dataDir);
  try {
    const pid = child.pid as number;
    // `5` resets VmHWM to the current size: the peak read below is the sign-ins' own.
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    const before = status(pid, 'VmRSS');
    const signIn = (email: string, password: string) =>
      fetch(`${url}/api/auth/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: url },
        body: JSON.stringify({ email, password }),
      }).then((response) => response.status);
    const started = performance.now();
    const statuses = await Promise.all([
      signIn(EMAIL, PASSWORD),
      signIn(EMAIL, PASSWORD),
      signIn('nobody@example.test', PASSWORD),
      signIn(EMAIL, 'not the password'),
    ]);
    const seconds = (performance.now() - started) / 1000;
    if (statuses.join() !== '200,200,401,401')
      throw new Error(`the sign-ins answered ${statuses.join(', ')}`);
    const grewMiB = (status(pid, 'VmHWM') - before) / MiB;
    const verdict = grewMiB <= TARGET_MIB ? 'ok  ' : 'MISS';
    console.log(
      `${verdict}  4 sign-ins at once: peak RSS ${grewMiB.toFixed(0)} MiB above the server's ${(before / MiB).toFixed(0)} MiB (target ≤ ${TARGET_MIB} MiB; one scrypt holds 128 MiB), all answered in ${seconds.toFixed(2)} s`,
    );
    if (grewMiB > TARGET_MIB) process.exitCode = 1;
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
