import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireLock, DataDirLockedError, LOCK_FILE } from '../../src-main/store/lock.js';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';
import { skipWithReason } from '../helpers/require-tools.js';

/**
 * The data-directory lock, with real processes: several taking it at once (exactly one
 * wins, with or without a stale lock to take over), and a pid that is alive but is not the
 * process that wrote the lock (pid reuse after a reboot, or pid 1 in every container).
 */

const FIXTURE = join(ROOT, 'test', 'fixtures', 'take-lock.ts');
const dirs: string[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
  }
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function newDir(): string {
  const dir = tempDir('sessiondesk-lock-');
  dirs.push(dir);
  return dir;
}

/** A process that takes the lock when told to; its stdout lines arrive in `lines`. */
function taker(dataDir: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, dataDir], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines: string[] = [];
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
  });
  return { child, lines };
}

async function race(dataDir: string, count: number): Promise<string[]> {
  const takers = Array.from({ length: count }, () => taker(dataDir));
  await expect.poll(() => takers.every((t) => t.lines.includes('ready')), { timeout: 30_000 }).toBe(true);
  for (const t of takers) t.child.stdin!.write('go\n');
  await expect.poll(() => takers.every((t) => t.lines.length >= 2), { timeout: 30_000 }).toBe(true);
  const outcomes = takers.map((t) => t.lines[1] as string);
  const exits = takers.map((t) => new Promise((resolve) => t.child.on('exit', resolve)));
  for (const t of takers) t.child.stdin!.end();
  await Promise.all(exits);
  return outcomes;
}

/** A process that stays alive until the test ends. */
function liveProcess(): ChildProcess {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  children.push(child);
  return child;
}

const onLinux = process.platform === 'linux';
const linuxOnly = skipWithReason(onLinux ? null : 'it reads /proc: Linux only');
const bootId = () => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
const startTimeOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
};
const writeLock = (dir: string, content: object) =>
  writeFileSync(join(dir, LOCK_FILE), JSON.stringify(content));

describe('the data-directory lock', () => {
  it('taken by several processes at once: exactly one wins, the others are told who holds it', async () => {
    for (let round = 0; round < 4; round += 1) {
      const dir = newDir();
      const outcomes = await race(dir, 6);
      expect(outcomes.filter((o) => o === 'won')).toHaveLength(1);
      const losers = outcomes.filter((o) => o !== 'won');
      expect(losers.every((o) => /^locked \d+$/u.test(o))).toBe(true);
      expect(readdirSync(dir).filter((f) => f !== LOCK_FILE)).toEqual([]);
    }
  }, 120_000);

  it('a stale lock found by several processes at once is taken over by exactly one', async () => {
    const dead = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await new Promise((resolve) => dead.on('exit', resolve));
    for (let round = 0; round < 4; round += 1) {
      const dir = newDir();
      writeLock(dir, { pid: dead.pid, startedAt: 'then' });
      const outcomes = await race(dir, 6);
      expect(outcomes.filter((o) => o === 'won')).toHaveLength(1);
      expect(outcomes.filter((o) => o !== 'won').every((o) => /^locked \d+$/u.test(o))).toBe(true);
      expect(readdirSync(dir).filter((f) => f !== LOCK_FILE)).toEqual([]);
    }
  }, 120_000);

  it(
    'a live pid started at another time than the lock says is a reused pid: taken over',
    linuxOnly,
    async () => {
      const dir = newDir();
      const other = liveProcess();
      writeLock(dir, { pid: other.pid, startTime: '1', bootId: bootId(), token: 'old', startedAt: 'then' });
      const release = acquireLock(dir);
      expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
      release();
      expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    },
  );

  it('a lock written before a reboot is taken over, whatever runs under its pid now', linuxOnly, () => {
    const dir = newDir();
    writeLock(dir, {
      pid: 1,
      startTime: startTimeOf(1),
      bootId: 'another-boot',
      token: 'old',
      startedAt: 'then',
    });
    const release = acquireLock(dir);
    const taken = JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as Record<string, unknown>;
    expect(taken).toMatchObject({ pid: process.pid, bootId: bootId() });
    expect(taken.token).not.toBe('old');
    release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('a lock naming this process that this process does not hold (its pid reused) is taken over', () => {
    const dir = newDir();
    writeLock(dir, { pid: process.pid, startedAt: 'then' });
    const release = acquireLock(dir);
    // Held now: a second taker in this process is refused.
    expect(() => acquireLock(dir)).toThrow(DataDirLockedError);
    release();
  });

  it('a lock whose pid is alive and started when the lock says is refused', linuxOnly, () => {
    const dir = newDir();
    const holder = liveProcess();
    const pid = holder.pid!;
    writeLock(dir, { pid, startTime: startTimeOf(pid), bootId: bootId(), token: 'theirs', startedAt: 'now' });
    let error: unknown;
    try {
      acquireLock(dir);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DataDirLockedError);
    expect((error as DataDirLockedError).pid).toBe(pid);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ token: 'theirs' });
  });
});
