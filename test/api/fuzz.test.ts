import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../src-shared/constants.js';
import { ErrorResponseSchema } from '../../src-shared/index.js';
import { hashSecret, newId, newSessionToken } from '../../src-main/accounts/secrets.js';
import {
  PASSWORD,
  createSession,
  seedWorkspace,
  startTestServer,
  steppableClock,
  uniqueEmail,
  type TestServer,
} from '../helpers/server.js';
import { connect as connectPostgres } from '../../src-main/store-postgres/connect.js';

/**
 * Property-based fuzzing of the whole HTTP surface against one real server: every endpoint
 * of the OpenAPI document (and unknown and static paths), with generated bodies, headers,
 * query strings and path ids, over real HTTP (fetch, and raw sockets for what fetch cannot
 * send). Whatever arrives: no 5xx, the server keeps answering, every error is in the one
 * error shape without internals, no response or log line carries a key or a sign-in token,
 * and a refused request (or any GET) changes no data.
 *
 * Bounded by default; `npm run fuzz` runs it long (5000 runs a property). FUZZ_RUNS and
 * FUZZ_SEED change the number of runs and the seed (fixed by default, so a failure replays;
 * FUZZ_SHRINK=1 also shrinks a failing input, at the cost of replaying it many times).
 */

/** Set by npm for `npm run fuzz`: a portable way to say "long", with no env prefix to write. */
const LONG = process.env.npm_lifecycle_event === 'fuzz';
const RUNS = Number(process.env.FUZZ_RUNS ?? (LONG ? 5000 : 400));
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_121);
const REQUEST_TIMEOUT_MS = 10_000;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

// ---------------------------------------------------------------------------------------
// The server and what the fuzzer knows about it

interface Fixture {
  server: TestServer;
  clock: ReturnType<typeof steppableClock>;
  port: number;
  ownerEmail: string;
  otherEmail: string;
  org: string;
  otherOrg: string;
  userId: string;
  otherUserId: string;
  keyId: string;
  apiKey: string;
  revokedKey: string;
  cookieToken: string;
  sessionIds: string[];
  otherSessionId: string;
  cursor: string;
  endpoints: { method: string; path: string }[];
  /** Every key, sign-in token and password the fuzzer holds: none may ever be echoed. */
  secrets: Set<string>;
  db: FuzzDatabase;
}

let fx: Fixture;
const logs = new PassThrough();
let logText = '';
logs.on('data', (chunk: Buffer) => (logText += chunk.toString('utf8')));

const stats = new Map<string, { tried: number; statuses: Map<number | string, number> }>();
function count(property: string, status: number | string): void {
  const entry = stats.get(property) ?? { tried: 0, statuses: new Map() };
  entry.tried += 1;
  entry.statuses.set(status, (entry.statuses.get(status) ?? 0) + 1);
  stats.set(property, entry);
}

const cookieHeader = () => `__session=${fx.cookieToken}`;

beforeAll(async () => {
  const clock = steppableClock(new Date());
  const rendererDir = join(process.cwd(), 'out', 'renderer');
  const server = await startTestServer({
    clock,
    log: { level: 'debug', stream: logs },
    ...(existsSync(join(rendererDir, 'index.html')) ? { rendererDir } : {}),
  });
  const owner = await seedWorkspace(server, 'fuzz');
  const otherEmail = uniqueEmail('other');
  const other = await server.accounts.createUser({ email: otherEmail, name: 'Other', password: PASSWORD });
  const otherWorkspace = await server.accounts.createWorkspace({ name: 'Elsewhere', ownerEmail: otherEmail });
  const revoked = await server.accounts.createKey({ organizationId: owner.organizationId, label: 'old' });
  await server.accounts.revokeKey({ organizationId: owner.organizationId, keyId: revoked.id });
  const cookie = owner.user.cookie;
  const sessionIds = [
    (await createSession(server, cookie, { organizationId: owner.organizationId, initialMessage: 'First' }))
      .id,
    (
      await createSession(server, cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Second, with a repository',
        repoUrl: 'https://github.com/acme/web',
      })
    ).id,
  ];
  // A session in a workspace the fuzzer's user is not a member of: every access is a 403.
  const otherSessionId = newId('session');
  await server.storage.write((tx) =>
    tx.sessions.insert({
      id: otherSessionId,
      workspaceId: otherWorkspace.organizationId,
      authorId: other.id,
      title: 'Not yours',
      model: 'claude-opus-4-6',
      createdAt: clock.now().toISOString(),
      baseBranch: 'main',
    }),
  );
  const page = await fetch(`${server.url}/api/sessions?limit=1`, { headers: { 'x-api-key': owner.apiKey } });
  const cursor = ((await page.json()) as { nextCursor: string }).nextCursor;
  const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const endpoints = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })),
  );
  expect(endpoints.length).toBeGreaterThan(15);
  const assets = existsSync(join(rendererDir, 'assets')) ? readdirSync(join(rendererDir, 'assets')) : [];
  for (const path of [
    '/',
    '/index.html',
    '/settings',
    '/sessions/ses_abc',
    '/favicon.ico',
    ...assets.slice(0, 2).map((a) => `/assets/${a}`),
    '/assets/missing.js',
    '/api/openapi.json',
    '/api',
    '/api/',
    '/api/nope',
    '/api/sessions/',
    '/api//sessions',
    '/api/admin/users',
  ]) {
    endpoints.push({ method: 'GET', path });
  }
  fx = {
    server,
    clock,
    port: Number(new URL(server.url).port),
    ownerEmail: owner.user.email,
    otherEmail,
    org: owner.organizationId,
    otherOrg: otherWorkspace.organizationId,
    userId: owner.user.userId,
    otherUserId: other.id,
    keyId: owner.keyId,
    apiKey: owner.apiKey,
    revokedKey: revoked.key,
    cookieToken: cookie.slice('__session='.length),
    sessionIds,
    otherSessionId,
    cursor,
    endpoints,
    secrets: new Set([owner.apiKey, revoked.key, cookie.slice('__session='.length), PASSWORD]),
    db: await openFuzzDatabase(server),
  };
  await settle();
}, 60_000);

afterAll(async () => {
  for (const [property, { tried, statuses }] of stats) {
    const summary = [...statuses.entries()]
      .sort(([a], [b]) => String(a).localeCompare(String(b)))
      .map(([status, n]) => `${status}:${n}`)
      .join(' ');
    console.log(`fuzz ${property}: ${tried} inputs tried (seed ${SEED}, FUZZ_RUNS ${RUNS}); ${summary}`);
  }
  await fx?.db.close();
  await fx?.server.dispose();
  // Nothing logged, even while stopping, names a secret.
  expectNoSecret(logText, 'the log');
});

// ---------------------------------------------------------------------------------------
// Keeping the fixture usable: accepted requests may sign out or revoke the key

async function repairFixture(after = 'an earlier request'): Promise<void> {
  const { server } = fx;
  const key = await server.storage.repos.apiKeys.findByHash(hashSecret(fx.apiKey));
  if (!key || key.revokedAt) {
    const created = await server.accounts.createKey({ organizationId: fx.org, label: 'fuzz again' });
    fx.apiKey = created.key;
    fx.keyId = created.id;
    fx.secrets.add(created.key);
  }
  const now = fx.clock.now();
  const signIn = await server.storage.repos.authSessions.find(hashSecret(fx.cookieToken));
  if (!signIn || Date.parse(signIn.expiresAt) - now.getTime() < 24 * 3600_000) {
    const token = newSessionToken();
    await server.storage.write((tx) =>
      tx.authSessions.insert(hashSecret(token), {
        userId: fx.userId,
        createdAt: now.toISOString(),
        lastSeenAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + 30 * 24 * 3600_000).toISOString(),
      }),
    );
    fx.cookieToken = token;
    fx.secrets.add(token);
  }
  // No command is defined here, so a workspace whose agent is `command` was set by a fuzzed
  // request: an owner (or worse) chose a program, a privilege bug. It is removed before anything
  // runs the fuzzed program, and the property fails saying so.
  const commandRows = await fx.db.removeCommandAgents();
  if (commandRows.length > 0) {
    throw new Error(
      `${after} set a command agent, which only the administrator may define: ${JSON.stringify(commandRows)}`,
    );
  }
}

/** Columns that reads may touch in the background (last use of a key or a sign-in). */
const VOLATILE: Record<string, string[]> = { api_keys: ['last_used_at'], auth_sessions: ['last_seen_at'] };
/**
 * Tables a refused request writes on purpose: a team server counts failed sign-ins and bad keys
 * in its database, so that every process shares the count (a desktop counts them in memory).
 */
const VOLATILE_TABLES = new Set(['failure_windows']);

/** The fuzzer's own look at the server's database, whichever it is. */
interface FuzzDatabase {
  /** A digest of every row of every table, volatile columns left out. */
  fingerprint(): Promise<string>;
  /**
   * How many sessions an agent runs whose working folder is still being made: the agent writes
   * its branch once its clone is ready (the demo agent's sample project too), seconds later.
   */
  preparing(): Promise<number>;
  /** Removes the workspaces' `command` agents, answering the rows removed. */
  removeCommandAgents(): Promise<unknown[]>;
  /** sql.js's `PRAGMA integrity_check` ('ok'); null on PostgreSQL, which checks its own pages. */
  integrityCheck(): Promise<string | null>;
  close(): Promise<void>;
}

async function openFuzzDatabase(server: TestServer): Promise<FuzzDatabase> {
  if (server.databaseUrl === null) return sqljsDatabase(server);
  const sql = await connectPostgres(server.databaseUrl, { max: 1 });
  let columns: Array<[string, string[]]> | undefined;
  const tableColumns = async () => {
    if (columns) return columns;
    const rows = await sql<{ table_name: string; column_name: string }[]>`
      SELECT c.table_name, c.column_name FROM information_schema.columns c
        JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
      ORDER BY c.table_name COLLATE "C", c.ordinal_position`;
    const byTable = new Map<string, string[]>();
    for (const { table_name: table, column_name: column } of rows) {
      if (VOLATILE_TABLES.has(table) || VOLATILE[table]?.includes(column)) continue;
      byTable.set(table, [...(byTable.get(table) ?? []), column]);
    }
    columns = [...byTable];
    return columns;
  };
  return {
    async fingerprint() {
      const hash = createHash('sha256');
      for (const [table, names] of await tableColumns()) {
        // Each row's text digested by the database: transcripts' chunks are large.
        const rows = await sql.unsafe<{ h: string }[]>(
          `SELECT md5(ROW(${names.map((c) => `"${c}"`).join(', ')})::text) AS h FROM "${table}"`,
        );
        hash.update(
          `${table}\n${rows
            .map((r) => r.h)
            .sort()
            .join('\n')}\n`,
        );
      }
      return hash.digest('hex');
    },
    async preparing() {
      const [row] = await sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM sessions WHERE agent_state = 'running' AND branch IS NULL`;
      return row?.n ?? 0;
    },
    async removeCommandAgents() {
      return [
        ...(await sql`DELETE FROM workspace_settings WHERE agent = 'command' RETURNING workspace_id, command`),
      ];
    },
    integrityCheck: () => Promise.resolve(null),
    close: () => sql.end({ timeout: 5 }),
  };
}

function sqljsDatabase(server: TestServer): FuzzDatabase {
  const db = server.store.db;
  return {
    fingerprint() {
      const hash = createHash('sha256');
      const tables = db
        .all("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .map((row) => row[0] as string)
        .filter((table) => !VOLATILE_TABLES.has(table));
      for (const table of tables) {
        const columns = db
          .all(`PRAGMA table_info("${table}")`)
          .map((row) => row[1] as string)
          .filter((column) => !VOLATILE[table]?.includes(column));
        const rows = db
          .all(`SELECT ${columns.map((c) => `"${c}"`).join(', ')} FROM "${table}"`)
          .map((row) => JSON.stringify(row))
          .sort();
        hash.update(`${table}\n${rows.join('\n')}\n`);
      }
      return Promise.resolve(hash.digest('hex'));
    },
    preparing() {
      const row = db.first("SELECT count(*) FROM sessions WHERE agent_state = 'running' AND branch IS NULL");
      return Promise.resolve(Number(row?.[0] ?? 0));
    },
    async removeCommandAgents() {
      const rows = db.all("SELECT workspace_id, command FROM workspace_settings WHERE agent = 'command'");
      if (rows.length > 0)
        await server.store.write((tx) => tx.run("DELETE FROM workspace_settings WHERE agent = 'command'"));
      return rows;
    },
    integrityCheck: () => Promise.resolve(db.first('PRAGMA integrity_check')?.[0] as string),
    close: () => Promise.resolve(),
  };
}

const fingerprint = () => fx.db.fingerprint();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until writes set off by an accepted request (an agent starting, its working folder made)
 * have landed: the data unchanged, and no agent still making its folder.
 */
async function settle(): Promise<void> {
  let last = await fingerprint();
  for (let i = 0; i < 1000; i += 1) {
    await sleep(15);
    const next = await fingerprint();
    if (next === last && (await fx.db.preparing()) === 0) return;
    last = next;
  }
  throw new Error('the data kept changing for 15 s after a request');
}

/** The server still answers a read with the valid key (after waiting out a bad-key limit). */
async function healthCheck(): Promise<void> {
  let response = await fetch(`${fx.server.url}/api/sessions?limit=1`, {
    headers: { 'x-api-key': fx.apiKey },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  if (response.status === 429) {
    await response.arrayBuffer();
    fx.clock.advance(61_000);
    response = await fetch(`${fx.server.url}/api/sessions?limit=1`, {
      headers: { 'x-api-key': fx.apiKey },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  }
  expect(response.status, 'health check: GET /api/sessions with the valid key').toBe(200);
  await response.arrayBuffer();
}

function expectNoSecret(text: string, where: string): void {
  for (const secret of fx.secrets) {
    if (text.includes(secret)) throw new Error(`${where} contains a secret (${secret.slice(0, 6)}…)`);
  }
}

let logChecked = 0;
function expectCleanLog(): void {
  // Look a little back too, in case a secret straddled two checks.
  const from = Math.max(0, logChecked - 200);
  expectNoSecret(logText.slice(from), 'a log line');
  logChecked = logText.length;
}

const INTERNALS =
  /\bat \S+ \(|node:internal|node_modules|\/src-main\/|\.ts:\d+|SQLITE_|sqlite|sql\.js|\bSELECT\b|\bINSERT INTO\b|\bUPDATE \w+ SET\b|\bDELETE FROM\b|no such (table|column)|constraint failed|TypeError|ReferenceError|RangeError|Cannot read propert/u;

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The properties every answer must have, whatever was sent. */
function checkAnswer(method: string, answer: Answer, label: string): void {
  const { status, headers, body } = answer;
  expect(status, `${label}: a 5xx`).toBeLessThan(500);
  const everything = `${JSON.stringify(headers)}\n${body}`;
  expectNoSecret(everything, `the answer to ${label}`);
  // The one place the data directory's path is shown: the import command the History page gives
  // the administrator, who runs commands on it.
  const shown = everything.replace(
    /"importCommand":"sessiondesk history import --workspace [\w-]+ --data-dir [^"]*"/u,
    '"importCommand":"…"',
  );
  expect(shown.includes(fx.server.dataDir), `${label}: the data directory in the answer`).toBe(false);
  for (const name of Object.keys(headers)) expect(name.startsWith('access-control-'), label).toBe(false);
  const type = headers['content-type'] ?? '';
  if (type.startsWith('application/json')) expect(headers['x-content-type-options'], label).toBe('nosniff');
  if (status >= 400 && method !== 'HEAD') {
    expect(type, `${label}: an error that is not JSON`).toMatch(/^application\/json/u);
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw new Error(`${label}: an error body that does not parse: ${body.slice(0, 300)}`);
    }
    const parsed = ErrorResponseSchema.safeParse(json);
    expect(parsed.success, `${label}: an error not in the error shape: ${body.slice(0, 300)}`).toBe(true);
    expect(INTERNALS.test(body), `${label}: internals in an error: ${body.slice(0, 300)}`).toBe(false);
  }
}

/** One fuzzed exchange, with the properties that span requests: data, liveness, logs. */
async function exchange(property: string, method: string, send: () => Promise<Answer | null>, label: string) {
  await repairFixture();
  const before = await fingerprint();
  const answer = await send().catch((err: unknown) => {
    throw new Error(`${label}: no answer (${err instanceof Error ? err.message : String(err)})`, {
      cause: err,
    });
  });
  count(property, answer?.status ?? 'closed');
  if (answer) checkAnswer(method, answer, label);
  const accepted = answer !== null && answer.status < 400;
  if (accepted && !SAFE_METHODS.has(method.toUpperCase())) {
    await settle();
  } else {
    // Refused (or a read): nothing changed, nothing is about to.
    expect(await fingerprint(), `${label} (${answer?.status ?? 'closed'}) changed data`).toBe(before);
  }
  if (answer?.status === 429) fx.clock.advance(61_000);
  await repairFixture(label);
  await healthCheck();
  expectCleanLog();
}

/** Runs a property with the fuzzer's seed, saying how to replay it when it fails. */
async function check<T>(
  name: string,
  arbitrary: fc.Arbitrary<T>,
  run: (value: T) => Promise<void>,
  numRuns: number,
) {
  try {
    await fc.assert(
      fc.asyncProperty(arbitrary, async (value) => {
        await run(value);
      }),
      { seed: SEED, numRuns, endOnFailure: process.env.FUZZ_SHRINK !== '1' },
    );
  } catch (err) {
    console.error(`fuzz ${name} failed; replay with FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}`);
    throw err;
  }
}

// ---------------------------------------------------------------------------------------
// Generators

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const unit = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: loneSurrogate },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '\u0000',
      '\n',
      '\r\n',
      '\t',
      '%',
      '%00',
      '../',
      '\u202e',
      '\ufeff',
      '"',
      '\\',
      '<',
    ),
  },
);
/** Text of any kind: ASCII mostly, unicode, controls, lone surrogates. */
const text = (maxLength = 40) => fc.string({ unit, maxLength });
const longText = fc
  .tuple(fc.integer({ min: 201, max: 6000 }), fc.constantFrom('a', 'é', '😀', ' ', '%'))
  .map(([n, c]) => c.repeat(n));

/** encodeURIComponent, except that lone surrogates become their (invalid) UTF-8 bytes. */
function encodeLoosely(value: string): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    out +=
      code >= 0xd800 && code <= 0xdfff
        ? `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`
        : encodeURIComponent(ch);
  }
  return out;
}

const percentGarbage = fc.constantFrom(
  '%',
  '%z',
  '%zz',
  '%00',
  '%E0%A4',
  '%C0%AE',
  '%ED%A0%80',
  '%FF%FE',
  '%2e%2e%2f',
  '%%41',
);

/** A value placed in a URL: usually encoded, sometimes raw or with broken escapes. */
const urlPart = (value: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 6, arbitrary: value.map(encodeLoosely) },
    { weight: 1, arbitrary: value.map((v) => v.replace(/[\s#?]/gu, '')) },
    { weight: 1, arbitrary: fc.tuple(value.map(encodeLoosely), percentGarbage).map(([v, g]) => v + g) },
  );

function idPool(kind: string): string[] {
  const malformed = ['', 'ses_short', `ses_${'a'.repeat(23)}`, 'x'.repeat(101), 'null', '0', '-1', '..'];
  switch (kind) {
    case 'sessionId':
      return [...fx.sessionIds, fx.otherSessionId, `ses_${'A'.repeat(22)}`, ...malformed];
    case 'organizationId':
      return [fx.org, fx.otherOrg, `org_${'B'.repeat(22)}`, ...malformed];
    case 'userId':
      return [fx.userId, fx.otherUserId, `usr_${'C'.repeat(22)}`, ...malformed];
    case 'keyId':
      return [fx.keyId, `key_${'D'.repeat(22)}`, ...malformed];
    default:
      return malformed;
  }
}

const pathId = (kind: string) =>
  fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...idPool(kind)).map(encodeURIComponent) },
    { weight: 2, arbitrary: urlPart(text(30)) },
    { weight: 1, arbitrary: fc.constantFrom('%2F', '%2e%2e', '..%2F..%2Fetc', 'a/b', '%00', '~', '*') },
    { weight: 1, arbitrary: fc.integer({ min: 150, max: 260 }).map((n) => 'i'.repeat(n)) },
  );

/** The endpoint's path with every `{param}` filled in. */
const pathFor = (template: string) => {
  const names = [...template.matchAll(/\{(\w+)\}/gu)].map((m) => m[1] as string);
  return fc
    .tuple(...names.map((name) => pathId(name)))
    .map((values) => values.reduce((path, value, i) => path.replace(`{${names[i]}}`, value), template));
};

const QUERY_NAMES = [
  'organizationId',
  'limit',
  'cursor',
  'status',
  'repository',
  'authorId',
  'q',
  'lastEventId',
  'a[]',
  'limit[]',
  'status[]',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
];

const queryValue = () =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        fx.org,
        fx.otherOrg,
        fx.userId,
        fx.cursor,
        'active',
        'completed',
        'failed',
        'acme/web',
        '0',
        '1',
        '-1',
        '1000',
        '1001',
        '1e3',
        '0x10',
        'NaN',
        'true',
        '',
      ),
    },
    { weight: 3, arbitrary: urlPart(text()) },
    { weight: 1, arbitrary: longText.map(encodeURIComponent) },
    { weight: 1, arbitrary: percentGarbage },
  );

/** Query strings: repeated names, arrays, prototype names, long values, broken escapes. */
const queryArb = () =>
  fc
    .array(
      fc.oneof(
        { weight: 5, arbitrary: fc.tuple(fc.constantFrom(...QUERY_NAMES), queryValue()) },
        { weight: 1, arbitrary: fc.tuple(urlPart(text(12)), queryValue()) },
      ),
      { maxLength: 6 },
    )
    .map((pairs) => pairs.map(([name, value]) => `${name}=${value}`).join('&'));

const KEY_PARAM_NAMES = ['apiKey', 'apikey', 'APIKEY', 'apiKey[]', 'api_key', 'api%4Bey'];

interface Credentials {
  headers: [string, string][];
  query: string[];
}

/** Keys, bearers, cookies, origins, valid and not, alone and in ambiguous combinations. */
const credentialsArb = () => {
  const keyValue = fc.constantFrom(
    () => fx.apiKey,
    () => fx.revokedKey,
    () => `sdk_${'Z'.repeat(43)}`,
    () => 'sdk_short',
    () => '',
    () => ' ',
    () => `${fx.apiKey}x`,
  );
  const keyPlace = fc.constantFrom('x-api-key', 'bearer', 'query');
  const key = fc.tuple(keyValue, keyPlace, fc.constantFrom(...KEY_PARAM_NAMES));
  const cookieValue = fc.constantFrom(
    () => cookieHeader(),
    () => `${cookieHeader()}; theme=dark`,
    () => '__session=garbage',
    () => '__session=',
    () => `__session=${fx.cookieToken}; __session=other`,
    () => 'other=1',
    () => ';;;=',
  );
  const origin = fc.constantFrom(
    () => fx.server.origin,
    () => `http://localhost:${fx.port}`,
    () => `http://127.0.0.1:${fx.port + 1}`,
    () => 'http://evil.example',
    () => 'null',
    () => '',
    () => `${fx.server.origin}/`,
  );
  // Right credentials, often, so that requests get past authentication to what is behind it.
  const signedIn = fc.constantFrom<() => Credentials>(
    () => ({ headers: [['x-api-key', fx.apiKey]], query: [] }),
    () => ({ headers: [['authorization', `Bearer ${fx.apiKey}`]], query: [] }),
    () => ({
      headers: [
        ['cookie', cookieHeader()],
        ['origin', fx.server.origin],
      ],
      query: [],
    }),
    () => ({
      headers: [
        ['cookie', cookieHeader()],
        ['sec-fetch-site', 'same-origin'],
      ],
      query: [],
    }),
  );
  const mixed = fc
    .record({
      keys: fc.array(key, { maxLength: 2 }),
      cookie: fc.option(cookieValue, { freq: 2 }),
      origin: fc.option(origin, { freq: 2 }),
      site: fc.option(fc.constantFrom('same-origin', 'same-site', 'cross-site', 'none', 'garbage'), {
        freq: 3,
      }),
      authorization: fc.option(
        fc.constantFrom('Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Token x', 'bearer  '),
        {
          freq: 6,
        },
      ),
    })
    .map(({ keys, cookie, origin: from, site, authorization }): Credentials => {
      const headers: [string, string][] = [];
      const query: string[] = [];
      for (const [value, place, name] of keys) {
        const v = value();
        if (place === 'x-api-key') headers.push(['x-api-key', v]);
        else if (place === 'bearer') headers.push(['authorization', `Bearer ${v}`]);
        else query.push(`${name}=${encodeURIComponent(v)}`);
      }
      if (cookie) headers.push(['cookie', cookie()]);
      if (from) headers.push(['origin', from()]);
      if (site) headers.push(['sec-fetch-site', site]);
      if (authorization) headers.push(['authorization', authorization]);
      return { headers, query };
    });
  return fc.oneof({ weight: 1, arbitrary: signedIn.map((f) => f()) }, { weight: 1, arbitrary: mixed });
};

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json; charset=latin1',
  'application/json-patch+json',
  'application/jsonx',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  '*/*',
  'json',
];

/** Field values: the right kind, or the wrong one. */
const anyValue = fc.oneof(
  { weight: 3, arbitrary: text() },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.array(text(5), { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(text(5), text(5), { maxKeys: 3 }) },
  { weight: 1, arbitrary: longText },
);

function fieldValue(field: string): fc.Arbitrary<unknown> {
  const right = (() => {
    switch (field) {
      case 'organizationId':
        return fc.constantFrom(fx.org, fx.otherOrg, `org_${'B'.repeat(22)}`);
      case 'initialMessage':
      case 'content':
        return fc.oneof(text(80), fc.constantFrom('Please fail on purpose', ' \n\t ', 'x'.repeat(100_001)));
      case 'repoUrl':
        return fc.constantFrom(
          'https://github.com/acme/web',
          'https://github.com/acme/web.git/',
          'https://user:pw@github.com/acme/web',
          'https://github.com/acme/web?x=1',
          'https://github.com/acme/web/tree/main',
          'git@github.com:acme/web.git',
          'file:///etc/passwd',
          'http://127.0.0.1/a/b',
        );
      case 'baseBranch':
        return fc.constantFrom('main', 'feature/x', '../x', 'a..b', '-x', 'a b', 'a~1', '');
      case 'status':
        return fc.constantFrom('active', 'completed', 'failed', 'ACTIVE', '', 'deleted');
      case 'email':
        return fc.oneof(
          fc.constantFrom(fx.ownerEmail, fx.otherEmail, fx.ownerEmail.toUpperCase(), 'not-an-email', ''),
          fc.nat(1_000_000).map((n) => `fuzz-${n}@example.test`),
        );
      case 'password':
        return fc.constantFrom(PASSWORD, 'wrong password', 'short', '');
      case 'agent':
        return fc.constantFrom('demo', 'command', 'other');
      case 'command':
        // Never a real program: a command agent set here fails the property before anything runs.
        return fc.array(fc.oneof(fc.constant('sessiondesk-fuzz-no-such-program'), text(10)), {
          maxLength: 3,
        });
      case 'timeoutMs':
        return fc.oneof(fc.integer({ min: -1, max: 90_000_000 }), fc.constant(1000.5));
      default:
        return fc.oneof(text(60), fc.constantFrom('', '  ', 'x'.repeat(201)));
    }
  })();
  return fc.oneof({ weight: 4, arbitrary: right }, { weight: 1, arbitrary: anyValue });
}

const BODY_FIELDS: Record<string, string[]> = {
  'POST /api/sessions': ['organizationId', 'initialMessage', 'repoUrl', 'baseBranch', 'model'],
  'PATCH /api/sessions/{sessionId}': ['title', 'status'],
  'POST /api/sessions/{sessionId}/messages': ['content'],
  'POST /api/auth/sign-in': ['email', 'password'],
  'POST /api/auth/launch': ['token'],
  'POST /api/setup': ['email', 'name', 'password', 'workspaceName', 'agent'],
  'POST /api/workspaces': ['name'],
  'POST /api/workspaces/{organizationId}/members': ['email', 'name', 'password'],
  'POST /api/workspaces/{organizationId}/keys': ['label'],
  'PUT /api/workspaces/{organizationId}/agent': ['agent', 'command', 'timeoutMs'],
};

/** A body shaped like the endpoint's, with fields left out, wrong, or added. */
function shapedBody(method: string, template: string): fc.Arbitrary<string> {
  const fields = BODY_FIELDS[`${method} ${template}`] ?? ['title'];
  const entries = fields.map((field) =>
    fc.option(
      fieldValue(field).map((v) => [field, v] as const),
      { freq: 4 },
    ),
  );
  const extra = fc.option(
    fc.tuple(fc.constantFrom('extra', 'id', 'workspaceId', 'role', 'admin'), anyValue),
    {
      freq: 5,
    },
  );
  return fc.tuple(fc.tuple(...entries), extra).map(([present, more]) => {
    const body: Record<string, unknown> = {};
    for (const entry of present) if (entry) body[entry[0]] = entry[1];
    if (more) body[more[0]] = more[1];
    return JSON.stringify(body);
  });
}

/** Prototype-poisoning keys, as raw JSON text (an object literal would drop `__proto__`). */
const poisonBody = fc
  .tuple(
    fc.constantFrom('__proto__', 'constructor', 'prototype', '__proto__\\u0000', '\\u005f_proto__'),
    fc.constantFrom('{"admin":true}', '{"prototype":{"admin":true}}', 'null', '1', '[]'),
    fc.boolean(),
  )
  .map(([key, value, nested]) =>
    nested ? `{"title":"x","a":{"${key}":${value}}}` : `{"${key}":${value},"title":"x"}`,
  );

const deepBody = fc
  .tuple(fc.integer({ min: 100, max: 100_000 }), fc.boolean())
  .map(([depth, array]) =>
    array ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
  );

const oddBody = fc.constantFrom(
  '',
  '{',
  'null',
  '[]',
  '"string"',
  '1',
  'true',
  '{"title":"x"}garbage',
  '\ufeff{}',
  '{"title":"\\ud800"}',
  '{"title":"\\u0000"}',
  'NaN',
  '{,}',
  '{"title":"a","title":"b"}',
  '{"title":1e999}',
  '{"title":"x",}',
);

const bodyFor = (method: string, template: string) =>
  fc.oneof(
    { weight: 6, arbitrary: shapedBody(method, template) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: poisonBody },
    { weight: 1, arbitrary: deepBody },
    { weight: 1, arbitrary: oddBody },
    { weight: 1, arbitrary: text(60) },
  );

const OTHER_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND'];

interface FetchRequest {
  method: string;
  path: string;
  query: string;
  headers: [string, string][];
  body?: string | Uint8Array;
}

const fetchRequestArb = () =>
  fc.constantFrom(...fx.endpoints).chain(({ method: declared, path: template }) =>
    fc
      .record({
        method: fc.oneof(
          { weight: 5, arbitrary: fc.constant(declared) },
          { weight: 1, arbitrary: fc.constantFrom(...OTHER_METHODS) },
        ),
        path: pathFor(template),
        query: fc.option(queryArb(), { freq: 2 }),
        credentials: credentialsArb(),
        contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { freq: 5 }),
        body: fc.option(
          fc.oneof(
            { weight: 9, arbitrary: bodyFor(declared, template) },
            { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
          ),
          { freq: 6 },
        ),
        extra: fc.array(
          fc.tuple(
            fc.constantFrom(
              'accept',
              'accept-encoding',
              'x-forwarded-for',
              'x-forwarded-host',
              'forwarded',
              'last-event-id',
              'x-request-id',
              'x-fuzz',
            ),
            fc.string({ unit: 'grapheme-ascii', maxLength: 40 }),
          ),
          { maxLength: 2 },
        ),
      })
      .map(({ method, path, query, credentials, contentType, body, extra }): FetchRequest => {
        const hasBody = body !== null && !['GET', 'HEAD'].includes(method);
        const type: [string, string][] = hasBody
          ? [['content-type', contentType ?? 'application/json']]
          : contentType
            ? [['content-type', contentType]]
            : [];
        return {
          method,
          path,
          query: [query ?? '', ...credentials.query].filter((q) => q !== '').join('&'),
          headers: [...credentials.headers, ...type, ...extra],
          ...(hasBody ? { body: body as string | Uint8Array } : {}),
        };
      }),
  );

async function sendFetch(request: FetchRequest): Promise<Answer> {
  const headers = new Headers();
  for (const [name, value] of request.headers) headers.append(name, value);
  const url = `${fx.server.url}${request.path}${request.query ? `?${request.query}` : ''}`;
  const response = await fetch(url, {
    method: request.method,
    headers,
    redirect: 'manual',
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  const answerHeaders = Object.fromEntries(response.headers.entries());
  if ((answerHeaders['content-type'] ?? '').startsWith('text/event-stream')) {
    await response.body?.cancel();
    return { status: response.status, headers: answerHeaders, body: '' };
  }
  return { status: response.status, headers: answerHeaders, body: await response.text() };
}

const describeRequest = (r: FetchRequest) =>
  `${r.method} ${r.path.slice(0, 120)}${r.query ? `?${r.query.slice(0, 80)}` : ''}`;

// ---------------------------------------------------------------------------------------
// Raw HTTP, for what fetch cannot send: any Host, repeated header lines, broken syntax

function rawExchange(bytes: Buffer, halfClose: boolean, isHead: boolean): Promise<Answer | null> {
  return new Promise((resolve, reject) => {
    const socket = connect(fx.port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let done = false;
    const finish = (result: Answer | null | Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const timer = setTimeout(
      () => finish(new Error(`no complete answer, and no close, within ${REQUEST_TIMEOUT_MS} ms`)),
      REQUEST_TIMEOUT_MS,
    );
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const answer = parseAnswer(received, isHead, false);
      if (answer) finish(answer);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (received.length === 0) return finish(null);
      const answer = parseAnswer(received, isHead, true);
      finish(answer ?? new Error(`not an HTTP answer: ${received.toString('latin1').slice(0, 200)}`));
    });
    socket.write(bytes);
    if (halfClose) socket.end();
  });
}

/** The answer in `bytes`, once it is complete (or the connection closed): null until then. */
function parseAnswer(bytes: Buffer, isHead: boolean, closed: boolean): Answer | null {
  let textAnswer = bytes.toString('latin1');
  // Interim answers (100 Continue) come before the real one.
  while (/^HTTP\/1\.[01] 1\d\d /u.test(textAnswer)) {
    const end = textAnswer.indexOf('\r\n\r\n');
    if (end === -1) return null;
    textAnswer = textAnswer.slice(end + 4);
  }
  const end = textAnswer.indexOf('\r\n\r\n');
  if (end === -1) return null;
  const [statusLine = '', ...headerLines] = textAnswer.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3}) /u.exec(statusLine)?.[1] ?? NaN);
  if (Number.isNaN(status)) throw new Error(`not an HTTP status line: ${statusLine.slice(0, 100)}`);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = textAnswer.slice(end + 4);
  const type = headers['content-type'] ?? '';
  let body: string | null;
  if (isHead || status === 204 || status === 304 || type.startsWith('text/event-stream')) body = '';
  else if (headers['transfer-encoding']?.includes('chunked')) body = dechunk(rest);
  else if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    body = rest.length >= length ? rest.slice(0, length) : null;
  } else body = closed ? rest : null;
  if (body === null && !closed) return null;
  return { status, headers, body: Buffer.from(body ?? rest, 'latin1').toString('utf8') };
}

/** The payload of a chunked body, or null while its last chunk has not arrived. */
function dechunk(body: string): string | null {
  let out = '';
  let rest = body;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    if (eol === -1) return null;
    const size = parseInt(rest.slice(0, eol), 16);
    if (size === 0) return out;
    if (!(size > 0) || rest.length < eol + 2 + size + 2) return null;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

interface RawRequest {
  method: string;
  target: string;
  version: string;
  hosts: string[];
  headers: [string, string][];
  repeated: [string, string][] | null;
  body: string;
  framing: 'exact' | 'none' | 'short' | 'long' | 'chunked' | 'bad-chunked' | 'two-lengths';
}

const rawRequestArb = () => {
  const port = fx.port;
  const own = `127.0.0.1:${port}`;
  const hostValue = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom(own, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`),
    },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '127.0.0.1',
        'localhost',
        `127.0.0.1:${port + 1}`,
        `127.0.0.2:${port}`,
        'evil.example',
        `evil.example:${port}`,
        `localhost.:${port}`,
        `user@127.0.0.1:${port}`,
        `127.0.0.1:${port}/x`,
        ` ${own}`,
        `${own}:${port}`,
        `0x7f000001:${port}`,
        `2130706433:${port}`,
        `[::ffff:127.0.0.1]:${port}`,
        '',
      ),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 30 }) },
  );
  const target = fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .constantFrom(...fx.endpoints)
        .chain(({ path }) => fc.tuple(pathFor(path), fc.option(queryArb(), { freq: 2 })))
        .map(([path, query]) => (query ? `${path}?${query}` : path)),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '*',
        `http://${own}/api/sessions`,
        'http://evil.example/api/sessions',
        '/%zz',
        '/api/sessions/%ED%A0%80',
        '/api/../api/sessions',
        '/assets/..%2f..%2fpackage.json',
        '/assets/%2e%2e/%2e%2e/package.json',
        '/..\\..\\etc\\passwd',
        '/../../../etc/passwd',
        `/api/sessions/${'x'.repeat(300)}`,
        '/api/sessions#frag',
        'api/sessions',
        '',
      ),
    },
    { weight: 1, arbitrary: fc.integer({ min: 1000, max: 20_000 }).map((n) => `/${'a'.repeat(n)}`) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 40 }).map((s) => `/${s}`) },
  );
  const credentialLine = fc.constantFrom<() => [string, string]>(
    () => ['x-api-key', fx.apiKey],
    () => ['x-api-key', `sdk_${'Y'.repeat(43)}`],
    () => ['X-API-KEY', fx.apiKey],
    () => ['authorization', `Bearer ${fx.apiKey}`],
    () => ['Authorization', `bearer ${fx.apiKey}`],
    () => ['authorization', `Bearer sdk_${'W'.repeat(43)}`],
    () => ['authorization', 'Bearer'],
    () => ['cookie', cookieHeader()],
    () => ['cookie', '__session=other'],
    () => ['origin', fx.server.origin],
    () => ['origin', 'http://evil.example'],
    () => ['sec-fetch-site', 'same-origin'],
    () => ['content-type', 'application/json'],
    () => ['content-type', 'text/plain'],
    () => ['connection', 'keep-alive'],
    () => ['upgrade', 'websocket'],
    () => ['expect', '100-continue'],
    () => ['x-http-method-override', 'DELETE'],
  );
  const oddLine = fc.oneof(
    fc.tuple(
      fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 12 }),
      fc.string({ unit: 'binary-ascii', maxLength: 30 }),
    ),
    fc.constantFrom<[string, string]>(
      [' x-api-key', 'folded'],
      ['x-folded', 'a\r\n b'],
      ['x-long', 'v'.repeat(20_000)],
      ['bad header', 'x'],
      ['x', '\u0001'],
    ),
  );
  // The same header twice with different values: Node keeps the first of some, joins others.
  const repeated = fc.constantFrom<() => [string, string][]>(
    () => [
      ['authorization', `Bearer ${fx.apiKey}`],
      ['authorization', `Bearer sdk_${'V'.repeat(43)}`],
    ],
    () => [
      ['authorization', `Bearer ${fx.apiKey}`],
      ['authorization', 'Bearer'],
    ],
    () => [
      ['authorization', `Bearer ${fx.apiKey}`],
      ['authorization', 'Basic dXNlcjpwYXNz'],
    ],
    () => [
      ['authorization', `Bearer ${fx.apiKey}`],
      ['Authorization', `Bearer ${fx.apiKey}`],
    ],
    () => [
      ['x-api-key', fx.apiKey],
      ['x-api-key', fx.revokedKey],
    ],
    () => [
      ['cookie', cookieHeader()],
      ['cookie', '__session=other'],
    ],
    () => [
      ['content-type', 'application/json'],
      ['content-type', 'text/plain'],
    ],
    () => [
      ['content-type', 'text/plain'],
      ['content-type', 'application/json'],
    ],
    () => [
      ['origin', fx.server.origin],
      ['origin', 'http://evil.example'],
    ],
  );
  return fc.record({
    method: fc.oneof(
      { weight: 14, arbitrary: fc.constantFrom('GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'OPTIONS') },
      {
        weight: 2,
        arbitrary: fc.constantFrom('TRACE', 'PROPFIND', 'CONNECT', 'get', 'G ET', 'M-SEARCH', 'BREW', ''),
      },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 8 }) },
    ),
    target,
    version: fc.oneof(
      { weight: 16, arbitrary: fc.constant('HTTP/1.1') },
      {
        weight: 2,
        arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.2', 'http/1.1', 'HTTP/1.1 x', ''),
      },
    ),
    hosts: fc.oneof(
      { weight: 8, arbitrary: hostValue.map((h) => [h]) },
      { weight: 1, arbitrary: fc.constant<string[]>([]) },
      { weight: 2, arbitrary: fc.tuple(hostValue, hostValue).map((hs) => [...hs]) },
    ),
    headers: fc
      .array(
        fc.oneof({ weight: 9, arbitrary: credentialLine.map((f) => f()) }, { weight: 1, arbitrary: oddLine }),
        {
          maxLength: 5,
        },
      )
      .map((lines) => lines as [string, string][]),
    repeated: fc.option(
      repeated.map((f) => f()),
      { freq: 3 },
    ),
    body: fc.oneof(fc.constant(''), shapedBody('PATCH', '/api/sessions/{sessionId}'), text(40), poisonBody),
    framing: fc.constantFrom(
      'exact',
      'exact',
      'exact',
      'exact',
      'exact',
      'exact',
      'none',
      'short',
      'long',
      'chunked',
      'bad-chunked',
      'two-lengths',
    ),
  });
};

function rawBytes(r: RawRequest): { bytes: Buffer; halfClose: boolean } {
  const lines = [`${r.method} ${r.target} ${r.version}`.trimEnd()];
  for (const host of r.hosts) lines.push(`Host: ${host}`);
  for (const [name, value] of [...(r.repeated ?? []), ...r.headers]) lines.push(`${name}: ${value}`);
  const body = Buffer.from(r.body, 'utf8');
  let payload = body;
  let halfClose = false;
  switch (r.framing) {
    case 'exact':
      if (body.length > 0) lines.push(`Content-Length: ${body.length}`);
      break;
    case 'none':
      break;
    case 'short':
      lines.push(`Content-Length: ${Math.max(0, body.length - 3)}`);
      break;
    case 'long':
      lines.push(`Content-Length: ${body.length + 10}`);
      halfClose = true;
      break;
    case 'chunked':
      lines.push('Transfer-Encoding: chunked');
      payload = Buffer.concat([
        Buffer.from(`${body.length.toString(16)}\r\n`),
        body,
        Buffer.from('\r\n0\r\n\r\n'),
      ]);
      if (body.length === 0) payload = Buffer.from('0\r\n\r\n');
      break;
    case 'bad-chunked':
      lines.push('Transfer-Encoding: chunked');
      payload = Buffer.concat([Buffer.from('zz\r\n'), body]);
      halfClose = true;
      break;
    case 'two-lengths':
      lines.push(`Content-Length: ${body.length}`, `Content-Length: ${body.length + 1}`);
      break;
  }
  lines.push('Connection: close');
  return {
    bytes: Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]),
    halfClose,
  };
}

const ALLOWED_HOSTS = () => new Set([`127.0.0.1:${fx.port}`, `localhost:${fx.port}`, `[::1]:${fx.port}`]);

// ---------------------------------------------------------------------------------------
// The properties

type Auth = 'key' | 'cookie' | 'none';
interface MatrixEntry {
  method: string;
  template: string;
  auth: Auth;
  body?: string;
}

/**
 * Bodies asking for what only the administrator may do, each sent with every credential: the
 * random bodies reach such a combination (a program chosen by a signed-in owner) too rarely to
 * be relied on.
 */
const PRIVILEGED_BODIES: Record<string, unknown[]> = {
  'PUT /api/workspaces/{organizationId}/agent': [
    { agent: 'command', command: ['sessiondesk-fuzz-no-such-program'] },
    { agent: 'command', command: ['sessiondesk-fuzz-no-such-program'], commandName: 'fuzz' },
    { agent: 'demo', command: ['sessiondesk-fuzz-no-such-program'] },
  ],
};

/** Every endpoint with every method, with a key, signed in, and neither: nothing left to chance. */
function matrix(): MatrixEntry[] {
  const auths = ['key', 'cookie', 'none'] as const;
  return fx.endpoints.flatMap(({ method: declared, path: template }) => [
    ...[...new Set([declared, ...OTHER_METHODS])].flatMap((method) =>
      auths.map((auth) => ({ method, template, auth })),
    ),
    ...(PRIVILEGED_BODIES[`${declared} ${template}`] ?? []).flatMap((body) =>
      auths.map((auth) => ({ method: declared, template, auth, body: JSON.stringify(body) })),
    ),
  ]);
}

/** Built just before it is sent: an accepted request may have revoked the key or signed out. */
function matrixRequest({ method, template, auth, body = '{}' }: MatrixEntry): FetchRequest {
  const path = template.replace(/\{(\w+)\}/gu, (_, kind: string) =>
    encodeURIComponent(idPool(kind)[0] as string),
  );
  const headers: [string, string][] =
    auth === 'key'
      ? [['x-api-key', fx.apiKey]]
      : auth === 'cookie'
        ? [
            ['cookie', cookieHeader()],
            ['origin', fx.server.origin],
          ]
        : [];
  const withBody = !['GET', 'HEAD'].includes(method);
  if (withBody) headers.push(['content-type', 'application/json']);
  return { method, path, query: '', headers, ...(withBody ? { body } : {}) };
}

describe(
  'fuzzing the HTTP API',
  // Its checks read the database itself between requests (a fingerprint of every table, and
  // the rows it repairs), on sql.js or on a team server's PostgreSQL.
  () => {
    it(
      'every endpoint and method of the API document, with a key, a sign-in, and neither',
      { timeout: 600_000 },
      async () => {
        const declared = fx.endpoints.map(({ method, path }) => `${method} ${path}`);
        expect(declared).toEqual(expect.arrayContaining(Object.keys(PRIVILEGED_BODIES)));
        for (const entry of matrix()) {
          await repairFixture();
          const request = matrixRequest(entry);
          await exchange(
            'endpoint matrix',
            request.method,
            () => sendFetch(request),
            describeRequest(request),
          );
        }
      },
    );

    it('every endpoint, any body, headers, query and ids, over fetch', { timeout: 600_000 }, async () => {
      await check(
        'fetch',
        fetchRequestArb(),
        async (request) => {
          await exchange('fetch', request.method, () => sendFetch(request), describeRequest(request));
        },
        RUNS,
      );
    });

    it(
      'raw HTTP: any Host, repeated header lines, broken framing and syntax',
      { timeout: 600_000 },
      async () => {
        await check(
          'raw',
          rawRequestArb(),
          async (request) => {
            const { bytes, halfClose } = rawBytes(request);
            const label = `raw ${JSON.stringify(bytes.toString('latin1').slice(0, 160))}`;
            let answer: Answer | null = null;
            await exchange(
              'raw',
              request.method,
              async () => {
                answer = await rawExchange(bytes, halfClose, request.method === 'HEAD');
                return answer;
              },
              label,
            );
            // A Host that is not this server's own, or none, is never served (DNS rebinding).
            const hostOk =
              request.hosts.length === 1 &&
              ALLOWED_HOSTS().has((request.hosts[0] as string).trim().toLowerCase());
            if (!hostOk && answer !== null) {
              expect(
                (answer as Answer).status,
                `${label}: served with Host ${JSON.stringify(request.hosts)}`,
              ).toBeGreaterThanOrEqual(400);
            }
            // Two different Authorization lines are ambiguous credentials: never accepted.
            const bearers = [...(request.repeated ?? []), ...request.headers]
              .filter(([name]) => name.toLowerCase() === 'authorization')
              .map(([, value]) => value.trim());
            const needsCredentials = /^\/api\/(sessions|events)\b/u.test(request.target);
            if (needsCredentials && new Set(bearers).size > 1 && answer !== null) {
              expect(
                (answer as Answer).status,
                `${label}: ambiguous credentials accepted`,
              ).toBeGreaterThanOrEqual(400);
            }
          },
          Math.ceil(RUNS / 2),
        );
      },
    );

    it('repeated header lines are never read as the first one alone', async () => {
      const own = `127.0.0.1:${fx.port}`;
      const cases: { lines: () => [string, string][]; served: boolean }[] = [
        { lines: () => [['authorization', `Bearer ${fx.apiKey}`]], served: true },
        {
          lines: () => [
            ['authorization', `Bearer ${fx.apiKey}`],
            ['authorization', `Bearer ${fx.apiKey}`],
          ],
          served: true,
        },
        {
          lines: () => [
            ['authorization', `Bearer ${fx.apiKey}`],
            ['authorization', `Bearer sdk_${'V'.repeat(43)}`],
          ],
          served: false,
        },
        {
          lines: () => [
            ['authorization', `Bearer ${fx.apiKey}`],
            ['authorization', 'Bearer'],
          ],
          served: false,
        },
        {
          lines: () => [
            ['authorization', `Bearer ${fx.apiKey}`],
            ['authorization', 'Basic dXNlcjpwYXNz'],
          ],
          served: false,
        },
        {
          lines: () => [
            ['x-api-key', fx.apiKey],
            ['x-api-key', fx.revokedKey],
          ],
          served: false,
        },
        {
          lines: () => [
            ['host', own],
            ['x-api-key', fx.apiKey],
            ['host', 'evil.example'],
          ],
          served: false,
        },
        {
          lines: () => [
            ['host', own],
            ['x-api-key', fx.apiKey],
            ['host', own],
          ],
          served: false,
        },
      ];
      for (const { lines, served } of cases) {
        const headerLines = lines();
        const hosts = headerLines.some(([name]) => name === 'host') ? [] : [`Host: ${own}`];
        const text = [
          'GET /api/sessions HTTP/1.1',
          ...hosts,
          ...headerLines.map(([name, value]) => `${name}: ${value}`),
          'Connection: close',
        ].join('\r\n');
        let answer: Answer | null = null;
        await exchange(
          'repeated headers',
          'GET',
          async () => (answer = await rawExchange(Buffer.from(`${text}\r\n\r\n`), false, false)),
          JSON.stringify(text),
        );
        expect((answer as Answer | null)?.status === 200, JSON.stringify(headerLines)).toBe(served);
      }
    });

    it('bodies around the 1 MiB limit, sparingly', { timeout: 600_000 }, async () => {
      const sizes = [BODY_LIMIT_BYTES - 64, BODY_LIMIT_BYTES, BODY_LIMIT_BYTES + 1, BODY_LIMIT_BYTES * 2];
      await check(
        'big bodies',
        fc.record({
          size: fc.constantFrom(...sizes),
          char: fc.constantFrom('a', 'é', '😀', '\\u0000'),
          target: fc.constantFrom(
            () => ({ method: 'POST', path: '/api/sessions', field: 'initialMessage', auth: 'cookie' }),
            () => ({
              method: 'PATCH',
              path: `/api/sessions/${fx.sessionIds[0]}`,
              field: 'title',
              auth: 'key',
            }),
            () => ({
              method: 'POST',
              path: `/api/sessions/${fx.sessionIds[1]}/messages`,
              field: 'content',
              auth: 'cookie',
            }),
            () => ({ method: 'POST', path: '/api/auth/sign-in', field: 'email', auth: 'none' }),
          ),
        }),
        async ({ size, char, target }) => {
          const { method, path, field, auth } = target();
          const prefix = `{"organizationId":"${fx.org}","${field}":"`;
          const room = size - Buffer.byteLength(prefix) - 2;
          const body = `${prefix}${char.repeat(Math.max(0, Math.floor(room / Buffer.byteLength(char))))}"}`;
          const headers: [string, string][] = [['content-type', 'application/json']];
          if (auth === 'cookie') headers.push(['cookie', cookieHeader()], ['origin', fx.server.origin]);
          if (auth === 'key') headers.push(['x-api-key', fx.apiKey]);
          const request: FetchRequest = { method, path, query: '', headers, body };
          await exchange(
            'big bodies',
            method,
            () => sendFetch(request),
            `${method} ${path} with ${body.length} bytes`,
          );
        },
        Math.max(6, Math.ceil(RUNS / 50)),
      );
    });

    it('the data refused requests left alone is still all there', async () => {
      const list = await fetch(`${fx.server.url}/api/sessions`, { headers: { 'x-api-key': fx.apiKey } });
      expect(list.status).toBe(200);
      const ids = ((await list.json()) as { sessions: { id: string }[] }).sessions.map((s) => s.id);
      for (const id of fx.sessionIds) expect(ids).toContain(id);
      if (fx.server.backend === 'sqljs') expect(await fx.db.integrityCheck()).toBe('ok');
    });
  },
);
