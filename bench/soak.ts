import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  watch,
  writeFileSync,
  type FSWatcher,
} from 'node:fs';
import { availableParallelism, cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createAccounts } from '../src-main/accounts/accounts.js';
import { newId } from '../src-main/accounts/secrets.js';
import { silentLogger, systemClock } from '../src-main/clock.js';
import { LOCK_FILE } from '../src-main/store/lock.js';
import { createRepositories } from '../src-main/store/repositories.js';
import type { Db } from '../src-main/store/sqljs.js';
import { Store } from '../src-main/store/store.js';
import { readAllMessages } from '../src-main/sessions/transcript-reads.js';
import { format, resolveConfig } from 'prettier';
import { randomGenerator } from './seed.js';
import { storageOf, readsOf } from '../src-main/store/sqljs-storage.js';

/**
 * `npm run soak`: crash soak of the real `sessiondesk serve` on one data directory.
 *
 * Each round starts the server (the demo agent at a fast pace, so agents write while the
 * writers write), runs concurrent creates (cookie), title updates (PATCH, API key) and
 * follow-ups (cookie), SIGKILLs the server at a random moment, and restarts it. Every few
 * rounds the kill is aimed at a snapshot: `serve` has no setting for the snapshot threshold,
 * so a second workspace's agent setting (a large, replacing write) is rewritten until the
 * journal nears it, the writers join, and the kill lands at a random point inside the
 * snapshot (odd aimed rounds, and the next rounds again while it lands after one) or just
 * after it (even ones). After each restart the acknowledged writes are checked through the
 * API, and no session may be left 'active';
 * every few rounds (and after every kill inside a snapshot, and at the end) a copy of the
 * data directory is opened with the product's Store for `PRAGMA integrity_check` and the
 * consistency rules. Exits non-zero on any violation. See bench/PROOF.md.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'bin', 'sessiondesk.js');
const EMAIL = 'soak@bench.test';
const PASSWORD = 'soak password, not secret';
/** 50 arguments of 1,000 three-byte characters: about 150 KB per journal record. */
/** Titles of the longest length an update takes, so each rename adds as much as one can. */
export const ballastTitle = (n: number) => `Ballast ${n} ${'€'.repeat(190)}`.slice(0, 200);

/**
 * A session renamed over and over to grow the journal toward a snapshot (message bodies no
 * longer pass through the journal: they go to transcripts).
 */
export async function insertBallastSession(
  store: Store,
  workspaceId: string,
  email: string,
): Promise<string> {
  const repos = createRepositories(store.db);
  const author = repos.users.findByEmail(email);
  if (!author) throw new Error(`no user ${email}`);
  const id = newId('session');
  const at = new Date().toISOString();
  await store.write(() => {
    repos.sessions.insert({
      id,
      workspaceId,
      authorId: author.id,
      title: 'Ballast',
      model: 'claude-opus-4-6',
      createdAt: at,
      baseBranch: 'main',
    });
    // Finished: no agent works on it, so no check takes it for one left active.
    repos.sessions.update(id, { status: 'completed' }, at);
  });
  return id;
}
/** The store's default (src-main/store/store.ts); `serve` has no option for it. */
export const DEFAULT_SNAPSHOT_AFTER_BYTES = 64 * 1024 * 1024;
export const SNAPSHOT_FILE = /^snapshot-(\d{12})\.db$/u;
export const JOURNAL_FILE = /^journal-(\d{12})\.log$/u;

export interface SoakOptions {
  rounds: number;
  /** Concurrent writer loops per round. */
  writers: number;
  /** Every this many rounds, the kill is aimed at a snapshot (0: never). */
  snapshotEvery: number;
  /** Every this many rounds, a copy of the data directory is checked in-process. */
  checkEvery: number;
  /** Kills in ordinary rounds come this long after the writers start (a random point between). */
  killAfterMs: [number, number];
  /** The demo agent's pause between steps. */
  paceMs: number;
  seed: number;
  /** Passed to the server as SESSIONDESK_SNAPSHOT_AFTER_BYTES (for when the product reads it). */
  snapshotAfterBytes?: number;
  /**
   * A session left 'active' after a restart (no agent will ever finish it): a violation
   * ('fail'), or counted and closed with a PATCH so the soak goes on ('count').
   */
  stuckActive: 'fail' | 'count';
  /** Keep the data directory afterwards (its path is in the result). */
  keep?: boolean;
  /** Progress lines. */
  log?: (line: string) => void;
}

export interface SoakResult {
  passed: boolean;
  violations: string[];
  rounds: number;
  seconds: number;
  seed: number;
  writers: number;
  acknowledged: { creates: number; titles: number; followUps: number; total: number; ballastPuts: number };
  /** Acknowledged writes found after recovery (a title superseded by a later acknowledged one counts). */
  recovered: number;
  /** Writes sent but cut off by a kill, and how many of them turned out to be on disk. */
  inFlight: { titles: { applied: number; lost: number }; followUps: { applied: number; lost: number } };
  recoveryMs: { min: number; median: number; max: number; slowestRound: number };
  snapshots: {
    /** New snapshot generations begun during the rounds (by the journal files they start). */
    started: number;
    completed: number;
    roundsAimedAtSnapshot: number;
    /** Killed after a snapshot began and before its file was in place. */
    killedDuringSnapshot: number;
    /** Killed within 250 ms after a snapshot was completed. */
    killedJustAfterSnapshot: number;
    medianSnapshotMs: number | null;
  };
  /** Sessions found 'active' with no agent right after a restart, by what their transcript ends with. */
  stuckActive: { count: number; shapes: Record<string, number> };
  tornJournalTails: number;
  integrityChecks: number;
  sessions: number;
  agentMessages: number;
  dataDir: string | null;
}

interface Tracked {
  id: string;
  initial: string;
  title: string;
  titleInFlight: string | null;
  followUps: string[];
  followUpInFlight: string | null;
  busy: boolean;
  /** Acknowledged writes not yet seen after a restart. */
  unverified: number;
}

export interface Server {
  child: ChildProcess;
  url: string;
  startMs: number;
  stderrTail: () => string;
  kill: () => Promise<void>;
  stop: () => Promise<number | null>;
}

/** Starts `sessiondesk serve --port 0` and resolves at its URL line; `startMs` is spawn to URL. */
export function startServe(dataDir: string, env: NodeJS.ProcessEnv): Promise<Server> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [CLI, 'serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn'],
      { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    let ready = false;
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start in 120 s\nstderr: ${stderr.slice(-4000)}`));
    }, 120_000);
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-16_000);
    });
    child.stdout.on('data', (d: Buffer) => {
      if (ready) return;
      stdout += d.toString();
      // The whole line (a chunk may end inside the URL); the printed URL carries the launch token.
      const match = /running at (http:\/\/\S+)\r?\n/u.exec(stdout);
      if (!match?.[1]) return;
      ready = true;
      clearTimeout(timer);
      resolve({
        child,
        url: new URL(match[1]).origin,
        startMs: performance.now() - started,
        stderrTail: () => stderr.slice(-4000),
        async kill() {
          child.kill('SIGKILL');
          await exited;
        },
        async stop() {
          child.kill('SIGTERM');
          return exited;
        },
      });
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`serve exited (${code ?? signal}) before listening\nstderr: ${stderr}`));
    });
  });
}

async function prepare(dataDir: string) {
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  try {
    const accounts = createAccounts(storageOf(store), systemClock);
    await accounts.createUser({ email: EMAIL, name: 'Soak', password: PASSWORD });
    const main = await accounts.createWorkspace({ name: 'Soak', ownerEmail: EMAIL });
    const ballast = await accounts.createWorkspace({ name: 'Soak ballast', ownerEmail: EMAIL });
    const { key } = await accounts.createKey({ organizationId: main.organizationId, label: 'soak' });
    const ballastSessionId = await insertBallastSession(store, ballast.organizationId, EMAIL);
    return { organizationId: main.organizationId, ballastId: ballast.organizationId, ballastSessionId, key };
  } finally {
    await store.close();
  }
}

export function generations(names: string[], pattern: RegExp): number[] {
  return names.flatMap((name) => {
    const match = pattern.exec(name);
    return match ? [Number(match[1])] : [];
  });
}

export const newest = (list: number[]) => (list.length === 0 ? -1 : Math.max(...list));

/** Temp files in a data directory, by name, with their inode (a file made later is another). */
export function tempFiles(dataDir: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const name of readdirSync(dataDir).filter((n) => n.endsWith('.tmp'))) {
    try {
      // The inode with its change time: a file system reuses a freed inode at once (ext4
      // does), so a new temp file of the same name can have the inode of the one it replaced.
      const stat = statSync(join(dataDir, name), { bigint: true });
      found.set(name, `${stat.ino}:${stat.ctimeNs}`);
    } catch {
      // Renamed or removed since the listing: not there any more.
    }
  }
  return found;
}

/**
 * Temp files that were there when the server was killed and are still there, the same
 * files, after its restart: what recovery should have removed. A restarted server may begin
 * a snapshot of its own at once, whose temp file is new and not a leftover.
 */
export function leftoverTempFiles(atKill: Map<string, string>, now: Map<string, string>): string[] {
  return [...now].filter(([name, ino]) => atKill.get(name) === ino).map(([name]) => name);
}

/** A data directory as a server is restarted on it: what a snapshot it begins is told from. */
export interface AtRestart {
  /** Temp files left by the kill before it. */
  temps: Map<string, string>;
  journal: number;
  snapshot: number;
}

export function atRestart(dataDir: string, tempsAtKill: Map<string, string>): AtRestart {
  const names = readdirSync(dataDir);
  return {
    temps: tempsAtKill,
    journal: newest(generations(names, JOURNAL_FILE)),
    snapshot: newest(generations(names, SNAPSHOT_FILE)),
  };
}

/**
 * Whether a restarted server is in the middle of a snapshot: a temp file that was not there
 * at the restart; a journal generation begun since then whose snapshot is not written yet;
 * or a snapshot written since then whose removal of older generations (all but the one
 * before it, and the journals from that one on) is not done.
 */
export function snapshotUnderWay(dataDir: string, restart: AtRestart): boolean {
  const names = readdirSync(dataDir);
  const snapshots = generations(names, SNAPSHOT_FILE).sort((a, b) => a - b);
  const journals = generations(names, JOURNAL_FILE);
  const journal = newest(journals);
  const snapshot = newest(snapshots);
  if (journal > restart.journal && snapshot < journal) return true;
  const previous = snapshots.at(-2);
  if (snapshot > restart.snapshot && previous !== undefined) {
    if ((snapshots[0] as number) < previous || journals.some((g) => g < previous)) return true;
  }
  const temps = tempFiles(dataDir);
  return leftoverTempFiles(restart.temps, temps).length < temps.size;
}

/** Waits until no snapshot is being written, so a copy of the directory is a state at rest. */
async function snapshotsSettled(dataDir: string, restart: AtRestart): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (snapshotUnderWay(dataDir, restart)) {
    if (Date.now() > deadline) throw new Error('a snapshot of the restarted server did not finish in 120 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] as number;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

class UnexpectedAnswer extends Error {}

/**
 * Checks one session's stored state against what was acknowledged, then takes what is
 * stored as the new expectation (an in-flight write either landed or did not).
 */
function verifySession(
  t: Tracked,
  observed: { title: string; users: string[] } | null,
  where: string,
  result: SoakResult,
): string[] {
  if (!observed) return [`${where}: acknowledged session ${t.id} is missing`];
  const problems: string[] = [];
  const titles = [t.title, ...(t.titleInFlight === null ? [] : [t.titleInFlight])];
  if (!titles.includes(observed.title)) {
    problems.push(
      `${where}: session ${t.id} has title ${JSON.stringify(observed.title)}, expected ${titles.map((x) => JSON.stringify(x)).join(' or ')}`,
    );
  }
  const expected = [t.initial, ...t.followUps];
  const withInFlight = t.followUpInFlight === null ? null : [...expected, t.followUpInFlight];
  const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  const followUpLanded = withInFlight !== null && same(observed.users, withInFlight);
  if (!same(observed.users, expected) && !followUpLanded) {
    problems.push(
      `${where}: session ${t.id} has user messages ${JSON.stringify(observed.users)}, expected ${JSON.stringify(expected)}${withInFlight ? ` (or with ${JSON.stringify(t.followUpInFlight)} last)` : ''}`,
    );
  }
  if (problems.length > 0) return problems;
  if (t.titleInFlight !== null) {
    if (observed.title === t.titleInFlight && t.title !== t.titleInFlight)
      result.inFlight.titles.applied += 1;
    else result.inFlight.titles.lost += 1;
  }
  if (t.followUpInFlight !== null) {
    if (followUpLanded) result.inFlight.followUps.applied += 1;
    else result.inFlight.followUps.lost += 1;
  }
  t.title = observed.title;
  t.titleInFlight = null;
  if (followUpLanded && t.followUpInFlight !== null) t.followUps.push(t.followUpInFlight);
  t.followUpInFlight = null;
  result.recovered += t.unverified;
  t.unverified = 0;
  return problems;
}

function count(db: Db, sql: string, params: (string | number)[] = []): number {
  return Number(db.first(sql, params)?.[0] ?? 0);
}

/**
 * The database-level rules on a store opened in this process: integrity, nothing half
 * applied, counters that agree with the rows, and every acknowledged write.
 */
async function checkDatabase(
  store: Store,
  ledger: Tracked[],
  where: string,
  result: SoakResult,
  expect: {
    ballastWritten: boolean;
    ballastId: string;
    ballastTitles: Set<string>;
    organizationId: string;
    noActive: boolean;
  },
): Promise<string[]> {
  const db = store.db;
  const problems: string[] = [];
  const integrity = db.all('PRAGMA integrity_check').map((r) => String(r[0]));
  result.integrityChecks += 1;
  if (integrity.join(',') !== 'ok') problems.push(`${where}: integrity_check says ${integrity.join('; ')}`);
  const rule = (what: string, sql: string, params: (string | number)[] = []) => {
    const n = count(db, sql, params);
    if (n !== 0) problems.push(`${where}: ${n} ${what}`);
  };
  rule(
    'transcript mark(s) without their session',
    'SELECT count(*) FROM transcript_marks m WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = m.session_id)',
  );
  rule(
    'prompt author(s) beyond their session',
    `SELECT count(*) FROM prompts p WHERE NOT EXISTS (
       SELECT 1 FROM sessions s WHERE s.id = p.session_id AND p.seq <= s.message_count)`,
  );
  rule(
    'task(s) without their session',
    'SELECT count(*) FROM tasks t WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = t.session_id)',
  );
  rule(
    'session(s) of the soak without a first prompt',
    'SELECT count(*) FROM sessions WHERE workspace_id = ? AND first_message IS NULL',
    [expect.organizationId],
  );
  // Every transcript is read back whole, frame by frame (lengths, checksums), up to the
  // length its session counts: the file holds every committed message, and nothing else.
  const messagesOf = new Map<string, Array<{ type: string; message?: { content?: unknown } }>>();
  for (const [id, first, count] of db.all('SELECT id, first_message, message_count FROM sessions')) {
    let messages: Array<{ type: string; message?: { content?: unknown } }>;
    try {
      messages = (await readAllMessages(readsOf(store), String(id))) as typeof messages;
    } catch (err) {
      problems.push(`${where}: session ${String(id)}'s transcript cannot be read: ${String(err)}`);
      continue;
    }
    messagesOf.set(String(id), messages);
    if (messages.length !== Number(count)) {
      problems.push(
        `${where}: session ${String(id)} counts ${String(count)} messages, its transcript has ${messages.length}`,
      );
    }
    if (first !== null && (messages[0]?.type !== 'user' || messages[0].message?.content !== first)) {
      problems.push(`${where}: session ${String(id)} exists but its first message is not its prompt`);
    }
  }
  rule(
    "session(s) still marked 'running' after recovery",
    "SELECT count(*) FROM sessions WHERE agent_state = 'running'",
  );
  if (expect.noActive) {
    rule(
      "session(s) left 'active' with no agent running",
      "SELECT count(*) FROM sessions WHERE status = 'active'",
    );
  }
  rule(
    'workspace_people row(s) whose active_sessions disagrees with the sessions',
    `SELECT count(*) FROM workspace_people wp WHERE wp.active_sessions != (
       SELECT count(*) FROM sessions s WHERE s.workspace_id = wp.workspace_id
         AND s.author_id = wp.user_id AND s.status = 'active')`,
  );
  if (expect.ballastWritten) {
    const title = String(
      db.first('SELECT title FROM sessions WHERE workspace_id = ?', [expect.ballastId])?.[0],
    );
    if (!expect.ballastTitles.has(title)) {
      problems.push(`${where}: the ballast session's title is not one the ballast wrote`);
    }
  }
  for (const t of ledger) {
    const row = db.first('SELECT title FROM sessions WHERE id = ?', [t.id]);
    const users = (messagesOf.get(t.id) ?? [])
      .filter((m) => m.type === 'user')
      .map((m) => String(m.message?.content));
    problems.push(...verifySession(t, row ? { title: String(row[0]), users } : null, where, result));
  }
  const soakSessions = db
    .all('SELECT id FROM sessions WHERE workspace_id = ?', [expect.organizationId])
    .map((r) => String(r[0]));
  result.sessions = soakSessions.length;
  result.agentMessages = soakSessions.reduce(
    (n, id) => n + (messagesOf.get(id) ?? []).filter((m) => m.type !== 'user').length,
    0,
  );
  return problems;
}

/** Opens a copy of the data directory (the live one stays the server's) and checks it. */
async function checkCopy(dataDir: string, check: (store: Store) => Promise<string[]>): Promise<string[]> {
  const copy = mkdtempSync(join(tmpdir(), 'sessiondesk-soak-check-'));
  try {
    cpSync(dataDir, copy, {
      recursive: true,
      // Temp files are no part of the state (opening removes them).
      filter: (source) =>
        !source.endsWith(LOCK_FILE) && !source.includes('.cut-') && !source.endsWith('.tmp'),
    });
    const store = await Store.open({ dataDir: copy, clock: systemClock, logger: silentLogger });
    try {
      return await check(store);
    } finally {
      await store.close({ snapshot: false });
    }
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const log = options.log ?? (() => undefined);
  const started = performance.now();
  const random = randomGenerator(options.seed);
  const dataDir = mkdtempSync(join(tmpdir(), 'sessiondesk-soak-'));
  const result: SoakResult = {
    passed: false,
    violations: [],
    rounds: 0,
    seconds: 0,
    seed: options.seed,
    writers: options.writers,
    acknowledged: { creates: 0, titles: 0, followUps: 0, total: 0, ballastPuts: 0 },
    recovered: 0,
    inFlight: { titles: { applied: 0, lost: 0 }, followUps: { applied: 0, lost: 0 } },
    recoveryMs: { min: 0, median: 0, max: 0, slowestRound: 0 },
    snapshots: {
      started: 0,
      completed: 0,
      roundsAimedAtSnapshot: 0,
      killedDuringSnapshot: 0,
      killedJustAfterSnapshot: 0,
      medianSnapshotMs: null,
    },
    stuckActive: { count: 0, shapes: {} },
    tornJournalTails: 0,
    integrityChecks: 0,
    sessions: 0,
    agentMessages: 0,
    dataDir: options.keep ? dataDir : null,
  };
  const violations = result.violations;
  const recoveries: number[] = [];
  const snapshotDurations: number[] = [];
  const ledger: Tracked[] = [];
  const snapshotAfterBytes = options.snapshotAfterBytes ?? DEFAULT_SNAPSHOT_AFTER_BYTES;
  const env: NodeJS.ProcessEnv = {
    SESSIONDESK_DEMO_PACE_MS: String(options.paceMs),
    ...(options.snapshotAfterBytes === undefined
      ? {}
      : { SESSIONDESK_SNAPSHOT_AFTER_BYTES: String(options.snapshotAfterBytes) }),
  };
  let server: Server | null = null;
  let cookie = '';
  let ballastWritten = false;
  /** Every title the ballast sent: acknowledged or cut off, one of them is the one kept. */
  const ballastTitles = new Set<string>();

  try {
    const setup = await prepare(dataDir);
    // Sessions left 'active' after a restart are looked for through the API in every round.
    const expectations = (noActive = false) => ({
      ballastWritten,
      ballastId: setup.ballastId,
      ballastTitles,
      organizationId: setup.organizationId,
      noActive,
    });
    /** Sessions written in the round just killed: their state is checked after the restart. */
    let touched = new Set<Tracked>();
    let lastRoundMidSnapshot = false;
    /** Aimed rounds by the schedule: odd ones aim inside a snapshot, even ones just after. */
    let aimedRounds = 0;
    /** An aim inside a snapshot landed after it: the next round aims inside again. */
    let insideOwed = false;
    /** Temp files present when the server was last killed (none before the first start). */
    let tempsAtKill = new Map<string, string>();

    for (let round = 1; round <= options.rounds + 1 && violations.length === 0; round += 1) {
      const final = round === options.rounds + 1;
      // ---- Restart and recovery.
      const roundStarted = performance.now();
      const restart = atRestart(dataDir, tempsAtKill);
      server = await startServe(dataDir, env);
      const live: Server = server;
      recoveries.push(live.startMs);
      if (live.startMs >= Math.max(...recoveries)) result.recoveryMs.slowestRound = round;
      const names = readdirSync(dataDir);
      const leftovers = leftoverTempFiles(tempsAtKill, tempFiles(dataDir));
      if (leftovers.length > 0)
        violations.push(`round ${round}: after recovery, ${leftovers.join(', ')} remain`);
      const damaged = names.filter((n) => n.includes('.damaged-'));
      if (damaged.length > 0) {
        violations.push(`round ${round}: recovery found damage: ${damaged.join(', ')}\n${live.stderrTail()}`);
      }
      for (const cut of names.filter((n) => n.includes('.cut-'))) {
        // A torn last record (an append the kill cut short) is expected; the copy is not needed.
        result.tornJournalTails += 1;
        rmSync(join(dataDir, cut), { force: true });
      }

      const base = live.url;
      const request = async (
        method: string,
        path: string,
        auth: 'cookie' | 'key',
        body?: unknown,
      ): Promise<{ status: number; json: unknown }> => {
        const headers: Record<string, string> =
          auth === 'key' ? { 'x-api-key': setup.key } : { cookie, origin: base };
        if (body !== undefined) headers['content-type'] = 'application/json';
        const response = await fetch(`${base}${path}`, {
          method,
          headers,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await response.text();
        return { status: response.status, json: text === '' ? null : (JSON.parse(text) as unknown) };
      };

      if (cookie === '') {
        const signIn = await fetch(`${base}/api/auth/sign-in`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
        });
        if (signIn.status !== 200) throw new Error(`sign-in answered ${signIn.status}`);
        cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      } else if ((await request('GET', '/api/auth/me', 'cookie')).status !== 200) {
        violations.push(`round ${round}: the acknowledged sign-in (cookie) no longer works`);
      }

      // ---- Checks of what the last round acknowledged.
      const deep =
        final ||
        round === 1 ||
        (options.checkEvery > 0 && round % options.checkEvery === 0) ||
        lastRoundMidSnapshot;
      if (deep) {
        // No agent runs and no request is made meanwhile, so once a snapshot the restarted
        // server may have begun is written, the files are at rest.
        await snapshotsSettled(dataDir, restart);
        violations.push(
          ...(await checkCopy(dataDir, (store) =>
            checkDatabase(store, ledger, `round ${round} (copy after recovery)`, result, expectations()),
          )),
        );
      } else {
        for (const t of touched) {
          const answer = await request('GET', `/api/sessions/${t.id}`, 'key');
          if (answer.status !== 200) {
            violations.push(`round ${round}: GET acknowledged session ${t.id} answered ${answer.status}`);
            continue;
          }
          const full = answer.json as {
            session: { title: string; messages: { type: string; message?: { content?: unknown } }[] };
          };
          const users = full.session.messages
            .filter((m) => m.type === 'user')
            .map((m) => String(m.message?.content));
          violations.push(
            ...verifySession(t, { title: full.session.title, users }, `round ${round}`, result),
          );
        }
      }
      // No agent runs right after a start, so an 'active' session now is one nobody will finish.
      const active = await request('GET', '/api/sessions?status=active&limit=200', 'key');
      const stuck = (active.json as { sessions?: { id: string }[] } | null)?.sessions ?? [];
      for (const s of stuck) {
        const answer = await request('GET', `/api/sessions/${s.id}`, 'key');
        const messages = (answer.json as { session?: { messages?: { type: string }[] } }).session?.messages;
        const lastType = messages?.at(-1)?.type ?? '?';
        const shape =
          messages?.length === 1 && lastType === 'user'
            ? 'only its first prompt (a create whose agent was never marked running)'
            : lastType === 'user'
              ? 'a follow-up prompt last (its agent was never marked running)'
              : lastType === 'result'
                ? 'a result last (the run a follow-up stopped; the new run never marked running)'
                : `a ${lastType} message last`;
        result.stuckActive.count += 1;
        result.stuckActive.shapes[shape] = (result.stuckActive.shapes[shape] ?? 0) + 1;
        if (options.stuckActive === 'fail') {
          violations.push(
            `round ${round}: session ${s.id} was left 'active' with no agent after recovery (${shape})`,
          );
        } else {
          // Counted as the known product problem, and closed so later rounds start clean.
          const closed = await request('PATCH', `/api/sessions/${s.id}`, 'key', { status: 'failed' });
          if (closed.status !== 200)
            violations.push(`round ${round}: closing stuck ${s.id} answered ${closed.status}`);
        }
      }
      if (violations.length > 0 || final) break;
      touched = new Set();

      // ---- Writers, agents and (some rounds) ballast until the kill.
      // A kill aimed inside a snapshot can land after it (a small database's snapshot takes a
      // few milliseconds): the next rounds aim inside again until one lands.
      const aimed =
        (options.snapshotEvery > 0 && round % options.snapshotEvery === 0) || (insideOwed && !final);
      if (aimed) result.snapshots.roundsAimedAtSnapshot += 1;
      const before = readdirSync(dataDir);
      const journalAtStart = newest(generations(before, JOURNAL_FILE));
      const snapshotAtStart = newest(generations(before, SNAPSHOT_FILE));
      let stopping = false;
      let snapshotBeganAt: number | null = null;
      let snapshotDoneAt: number | null = null;
      let onSnapshotBegan: (() => void) | null = null;
      let onSnapshotDone: (() => void) | null = null;
      const watcher: FSWatcher = watch(dataDir, (_event, filename) => {
        const name = String(filename ?? '');
        const journal = JOURNAL_FILE.exec(name);
        if (journal && Number(journal[1]) > journalAtStart && snapshotBeganAt === null) {
          snapshotBeganAt = performance.now();
          onSnapshotBegan?.();
        }
        const snap = SNAPSHOT_FILE.exec(name);
        if (
          snap &&
          Number(snap[1]) > snapshotAtStart &&
          snapshotBeganAt !== null &&
          snapshotDoneAt === null
        ) {
          snapshotDoneAt = performance.now();
          snapshotDurations.push(snapshotDoneAt - snapshotBeganAt);
          onSnapshotDone?.();
        }
      });
      let unexpectedExit = false as boolean;
      live.child.once('exit', () => {
        if (!stopping) unexpectedExit = true;
      });

      const pick = (): Tracked | null => {
        for (let attempt = 0; attempt < 6; attempt += 1) {
          const recent = random() < 0.7;
          const from = recent ? Math.max(0, ledger.length - 100) : 0;
          const t = ledger[from + Math.floor(random() * (ledger.length - from))];
          if (t && !t.busy) return t;
        }
        return null;
      };
      const expectStatus = (what: string, status: number, wanted: number, json: unknown) => {
        if (status !== wanted) {
          throw new UnexpectedAnswer(`${what} answered ${status}: ${JSON.stringify(json).slice(0, 300)}`);
        }
      };

      const writer = async (n: number) => {
        for (let i = 0; !stopping; i += 1) {
          try {
            const roll = random();
            if (roll < 0.35 || ledger.length < 8) {
              const initial = `Soak r${round} w${n} i${i}: tidy the retry helper and its tests`;
              const answer = await request('POST', '/api/sessions', 'cookie', {
                organizationId: setup.organizationId,
                initialMessage: initial,
              });
              expectStatus('create', answer.status, 201, answer.json);
              const created = (answer.json as { session: { id: string; title: string } }).session;
              const t: Tracked = {
                id: created.id,
                initial,
                title: created.title,
                titleInFlight: null,
                followUps: [],
                followUpInFlight: null,
                busy: false,
                unverified: 1,
              };
              ledger.push(t);
              touched.add(t);
              result.acknowledged.creates += 1;
              continue;
            }
            const t = pick();
            if (!t) continue;
            t.busy = true;
            touched.add(t);
            if (roll < 0.7) {
              const title = `Soak title r${round} w${n} i${i}`;
              // Now and then the update also ends the run, which stops the agent.
              const status = random() < 0.1 ? 'completed' : undefined;
              t.titleInFlight = title;
              const answer = await request('PATCH', `/api/sessions/${t.id}`, 'key', {
                title,
                ...(status ? { status } : {}),
              });
              expectStatus('PATCH', answer.status, 200, answer.json);
              t.title = title;
              t.titleInFlight = null;
              t.unverified += 1;
              result.acknowledged.titles += 1;
            } else {
              const content = `Follow-up r${round} w${n} i${i}: also cover the timeout path`;
              t.followUpInFlight = content;
              const answer = await request('POST', `/api/sessions/${t.id}/messages`, 'cookie', { content });
              expectStatus('follow-up', answer.status, 201, answer.json);
              t.followUps.push(content);
              t.followUpInFlight = null;
              t.unverified += 1;
              result.acknowledged.followUps += 1;
            }
            t.busy = false;
          } catch (err) {
            if (stopping) return;
            violations.push(
              `round ${round}: writer ${n}: ${err instanceof Error ? err.message : String(err)}`,
            );
            stopping = true;
            return;
          }
        }
      };
      const ballast = async () => {
        while (!stopping) {
          try {
            const title = ballastTitle(result.acknowledged.ballastPuts + ballastTitles.size);
            ballastTitles.add(title);
            const answer = await request('PATCH', `/api/sessions/${setup.ballastSessionId}`, 'cookie', {
              title,
            });
            expectStatus('ballast rename', answer.status, 200, answer.json);
            ballastWritten = true;
            result.acknowledged.ballastPuts += 1;
          } catch (err) {
            if (stopping) return;
            violations.push(`round ${round}: ballast: ${err instanceof Error ? err.message : String(err)}`);
            stopping = true;
            return;
          }
        }
      };

      const loops: Promise<void>[] = [];
      const startWriters = () => {
        if (loops.length < options.writers) {
          for (let n = 0; n < options.writers; n += 1) loops.push(writer(n));
        }
      };
      const [minKill, maxKill] = options.killAfterMs;
      const aimedInside = aimed && (insideOwed || (aimedRounds += 1) % 2 === 1);
      await new Promise<void>((resolve) => {
        const timers: NodeJS.Timeout[] = [];
        const done = () => {
          for (const timer of timers) clearTimeout(timer);
          clearInterval(guard);
          resolve();
        };
        const guard = setInterval(() => {
          if (stopping || unexpectedExit) done();
        }, 20);
        if (!aimed) {
          startWriters();
          timers.push(setTimeout(done, minKill + random() * (maxKill - minKill)));
          return;
        }
        // Ballast alone until the journal nears the threshold, then the writers join, so the
        // snapshot begins while they write. Every other aimed round kills inside the snapshot
        // (a random point in about the time one takes), the others just after it.
        for (let b = 0; b < 4; b += 1) loops.push(ballast());
        const journalPath = join(dataDir, `journal-${String(journalAtStart).padStart(12, '0')}.log`);
        const nearly = snapshotAfterBytes - Math.min(4 * 1024 * 1024, snapshotAfterBytes / 4);
        const watchSize = setInterval(() => {
          let size: number;
          try {
            size = statSync(journalPath).size;
          } catch {
            size = Number.MAX_SAFE_INTEGER;
          }
          if (size >= nearly) {
            clearInterval(watchSize);
            startWriters();
          }
        }, 25);
        timers.push(watchSize);
        const typical = snapshotDurations.length > 0 ? median(snapshotDurations) : 15;
        if (aimedInside) {
          onSnapshotBegan = () => timers.push(setTimeout(done, random() * Math.max(2, typical * 0.9)));
        } else {
          onSnapshotDone = () => timers.push(setTimeout(done, random() * 250));
        }
        if (snapshotBeganAt !== null) onSnapshotBegan?.();
        if (snapshotDoneAt !== null) onSnapshotDone?.();
        timers.push(setTimeout(done, 300_000));
      });
      stopping = true;
      const killedAt = performance.now();
      await live.kill();
      server = null;
      watcher.close();
      await Promise.all(loops);
      if (unexpectedExit)
        violations.push(`round ${round}: the server exited on its own\n${live.stderrTail()}`);
      for (const t of ledger) t.busy = false;

      // ---- What the kill interrupted.
      const after = readdirSync(dataDir);
      tempsAtKill = tempFiles(dataDir);
      const journalAtKill = newest(generations(after, JOURNAL_FILE));
      const snapshotAtKill = newest(generations(after, SNAPSHOT_FILE));
      const during = journalAtKill > journalAtStart && snapshotAtKill < journalAtKill;
      result.snapshots.started += generations(after, JOURNAL_FILE).filter((g) => g > journalAtStart).length;
      result.snapshots.completed += generations(after, SNAPSHOT_FILE).filter(
        (g) => g > snapshotAtStart,
      ).length;
      const killedInside = during || after.some((n) => n.endsWith('.tmp'));
      if (aimedInside) insideOwed = !killedInside;
      if (killedInside) result.snapshots.killedDuringSnapshot += 1;
      else if (snapshotDoneAt !== null && killedAt - snapshotDoneAt < 250) {
        result.snapshots.killedJustAfterSnapshot += 1;
      }
      lastRoundMidSnapshot = during;
      result.rounds = round;
      result.acknowledged.total =
        result.acknowledged.creates + result.acknowledged.titles + result.acknowledged.followUps;
      log(
        `round ${String(round).padStart(3)}${aimed ? ` (aimed ${aimedInside ? 'inside' : 'just after'} a snapshot)` : ''}: ` +
          `${round1((performance.now() - roundStarted) / 1000)} s, recovery ${Math.round(live.startMs)} ms, ` +
          `${touched.size} sessions written, ${result.acknowledged.total} acknowledged so far` +
          (during ? ', killed during a snapshot' : snapshotBeganAt !== null ? ', a snapshot ran' : ''),
      );
    }

    if (server && violations.length === 0) {
      // The end: a clean stop (which snapshots), then the real directory opened in-process.
      const code = await server.stop();
      server = null;
      if (code !== 0) violations.push(`the final clean stop exited with ${code}`);
      const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
      try {
        violations.push(
          ...(await checkDatabase(store, ledger, 'after the final clean stop', result, expectations(true))),
        );
        const names = readdirSync(dataDir);
        if (newest(generations(names, SNAPSHOT_FILE)) !== newest(generations(names, JOURNAL_FILE))) {
          violations.push('after the final clean stop, the newest journal has no snapshot of its own');
        }
      } finally {
        await store.close({ snapshot: false });
      }
    }
  } catch (err) {
    violations.push(
      `the soak could not go on: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
  } finally {
    if (server) await server.kill();
    if (!options.keep) rmSync(dataDir, { recursive: true, force: true });
  }

  const acknowledged = result.acknowledged;
  acknowledged.total = acknowledged.creates + acknowledged.titles + acknowledged.followUps;
  if (violations.length === 0 && result.recovered !== acknowledged.total) {
    violations.push(`${acknowledged.total} writes were acknowledged but ${result.recovered} were verified`);
  }
  result.recoveryMs = {
    min: round1(Math.min(...recoveries)),
    median: round1(median(recoveries)),
    max: round1(Math.max(...recoveries)),
    slowestRound: result.recoveryMs.slowestRound,
  };
  result.snapshots.medianSnapshotMs = snapshotDurations.length > 0 ? round1(median(snapshotDurations)) : null;
  result.seconds = round1((performance.now() - started) / 1000);
  result.passed = violations.length === 0;
  return result;
}
export function formatSoak(r: SoakResult): string {
  const a = r.acknowledged;
  const s = r.snapshots;
  return [
    `Crash soak: ${r.rounds} rounds of SIGKILL in ${r.seconds} s (seed ${r.seed}, ${r.writers} writers)`,
    `  acknowledged writes   ${a.total} (creates ${a.creates}, title updates ${a.titles}, follow-ups ${a.followUps}); ballast PUTs ${a.ballastPuts}`,
    `  recovered             ${r.recovered} of ${a.total}`,
    `  cut off in flight     titles ${r.inFlight.titles.applied} applied / ${r.inFlight.titles.lost} not; follow-ups ${r.inFlight.followUps.applied} applied / ${r.inFlight.followUps.lost} not`,
    `  recovery (spawn->URL) min ${r.recoveryMs.min} ms, median ${r.recoveryMs.median} ms, slowest ${r.recoveryMs.max} ms (round ${r.recoveryMs.slowestRound})`,
    `  snapshots             ${s.started} begun, ${s.completed} completed; ${s.roundsAimedAtSnapshot} rounds aimed at one; killed during one: ${s.killedDuringSnapshot}, just after: ${s.killedJustAfterSnapshot}; median ${s.medianSnapshotMs ?? '-'} ms`,
    `  left 'active'         ${r.stuckActive.count} session(s) with no agent after a restart${Object.entries(
      r.stuckActive.shapes,
    )
      .map(([k, v]) => `\n                          ${v} with ${k}`)
      .join('')}`,
    `  torn journal tails    ${r.tornJournalTails}`,
    `  integrity checks      ${r.integrityChecks}, sessions ${r.sessions}, agent messages ${r.agentMessages}`,
    `  result                ${r.passed ? 'PASS' : `FAIL (${r.violations.length} violation(s))`}`,
    ...r.violations.map((v) => `    - ${v}`),
  ].join('\n');
}

/** The machine and code a result was measured on. */
export function runContext() {
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      return null;
    }
  };
  return {
    date: new Date().toISOString(),
    machine: {
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: availableParallelism(),
      memoryGB: Math.round(totalmem() / 2 ** 30),
      os: `${platform()} ${release()}`,
      node: process.version,
      loadAverageAfter: loadavg().map((n) => Math.round(n * 100) / 100),
    },
    commit: git('rev-parse', 'HEAD'),
    uncommittedProductFiles: (git('status', '--porcelain', '--', 'src-main', 'src-shared') ?? '')
      .split('\n')
      .filter((line) => line.trim() !== ''),
  };
}

/**
 * Puts one section ('soak' or 'load') into bench/proof-results.json (or `file`), keeping the
 * other section as it is.
 */
export async function recordProof(section: 'soak' | 'load', data: object, file?: string): Promise<string> {
  const path = file ?? join(ROOT, 'bench', 'proof-results.json');
  let all: Record<string, unknown> = {};
  try {
    all = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    // A first run, or a file to start afresh.
  }
  all[section] = { ...runContext(), ...data };
  // Formatted as the repository's prettier check wants it.
  writeFileSync(path, await format(JSON.stringify(all), { ...(await resolveConfig(path)), filepath: path }));
  return path;
}

function intOption(name: string, flag: string, fallback: number, min: number): number {
  const index = process.argv.indexOf(flag);
  const raw = index !== -1 ? process.argv[index + 1] : process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${flag} / ${name} must be an integer >= ${min}`);
  return value;
}

async function main(): Promise<void> {
  const rounds = intOption('SOAK_ROUNDS', '--rounds', 200, 1);
  const snapshotAfter = process.env.SOAK_SNAPSHOT_AFTER_BYTES;
  const options: SoakOptions = {
    rounds,
    writers: intOption('SOAK_WRITERS', '--writers', 8, 1),
    snapshotEvery: intOption('SOAK_SNAPSHOT_EVERY', '--snapshot-every', 10, 0),
    checkEvery: intOption('SOAK_CHECK_EVERY', '--check-every', 20, 0),
    killAfterMs: [50, 1200],
    paceMs: intOption('SOAK_PACE_MS', '--pace-ms', 5, 0),
    seed: intOption('SOAK_SEED', '--seed', Math.floor(Math.random() * 2 ** 31), 0),
    keep: process.argv.includes('--keep'),
    stuckActive: process.env.SOAK_STUCK_ACTIVE === 'count' ? 'count' : 'fail',
    log: (line) => process.stderr.write(`${line}\n`),
    ...(snapshotAfter ? { snapshotAfterBytes: Number(snapshotAfter) } : {}),
  };
  const loadAverageBefore = loadavg().map((n) => Math.round(n * 100) / 100);
  const result = await runSoak(options);
  process.stdout.write(`${formatSoak(result)}\n`);
  await recordProof(
    'soak',
    {
      command: `npm run soak -- --rounds ${rounds}`,
      loadAverageBefore,
      options: { ...options, log: undefined },
      result,
    },
    process.env.SOAK_OUT,
  );
  process.exitCode = result.passed ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
