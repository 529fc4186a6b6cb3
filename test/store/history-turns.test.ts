// Reading a large history file on the server's thread: the importer hands the event loop a turn
// between lines once it has held it for its turn's time, so requests are not held behind a batch
// of MBs of tool output. (The stall it bounds is measured in `npm run bench:history`.)
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccounts } from '../../src-main/accounts/accounts.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { importSource } from '../../src-main/history/importer.js';
import { createRepositories } from '../../src-main/store/repositories.js';
import { storageOf } from '../../src-main/store/sqljs-storage.js';
import { Store } from '../../src-main/store/store.js';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';

const ANSWERS = 300;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A recorded Claude Code session with ANSWERS more answers after its own, one line each. */
function longSession(): string {
  const fixture = join(
    ROOT,
    'test',
    'fixtures',
    'history',
    'claude-code',
    '2.1.330',
    'plain-answer',
    'projects',
  );
  const project = readdirSync(fixture)[0]!;
  const name = readdirSync(join(fixture, project))[0]!;
  const lines = readFileSync(join(fixture, project, name), 'utf8')
    .trimEnd()
    .split('\n');
  const answer = lines.find((line) => line.includes('"type":"text"') && line.includes('"role":"assistant"'))!;
  const extra = Array.from({ length: ANSWERS }, (_, i) => {
    const parsed = JSON.parse(answer) as Record<string, unknown> & { message: Record<string, unknown> };
    parsed.uuid = randomUUID();
    parsed.message = {
      ...parsed.message,
      id: `msg_extra_${i}`,
      content: [{ type: 'text', text: `Answer ${i}` }],
    };
    return JSON.stringify(parsed);
  });
  const root = tempDir('history-turns-root-');
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'projects', project), { recursive: true });
  writeFileSync(join(root, 'projects', project, name), `${[...lines, ...extra].join('\n')}\n`);
  return root;
}

async function importCountingTurns(root: string, turnMs: number) {
  const dataDir = tempDir('history-turns-');
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  cleanups.push(async () => {
    await store.close({ snapshot: false });
    rmSync(dataDir, { recursive: true, force: true });
  });
  const repos = createRepositories(store.db);
  const accounts = createAccounts(storageOf(store), systemClock);
  const user = await accounts.createUser({
    email: 'ada@example.test',
    name: 'Ada',
    password: 'correct horse',
  });
  const workspace = await accounts.createWorkspace({ name: 'Acme', ownerEmail: 'ada@example.test' });
  const source = {
    id: 'hsrc_turns',
    workspaceId: workspace.organizationId,
    kind: 'claude-code' as const,
    rootDir: root,
    authorId: user.id,
    paused: false,
    sessionCount: 0,
    messageCount: 0,
    createdAt: systemClock.now().toISOString(),
  };
  await store.write(() => repos.history.insertSource(source));
  // Each line is one JSON.parse: counted, and a chain of setImmediate callbacks (one a turn of
  // the event loop) notes the most lines parsed within one turn.
  const parse = JSON.parse;
  let parses = 0;
  let atTurn = 0;
  let mostInATurn = 0;
  let counting = true;
  const turn = () => {
    mostInATurn = Math.max(mostInATurn, parses - atTurn);
    atTurn = parses;
    if (counting) setImmediate(turn);
  };
  JSON.parse = (...args: Parameters<typeof parse>) => {
    parses += 1;
    return parse(...args) as unknown;
  };
  setImmediate(turn);
  try {
    await importSource({ storage: storageOf(store), clock: systemClock }, source, { turnMs });
  } finally {
    JSON.parse = parse;
    counting = false;
  }
  turn();
  const [session] = repos.sessions.list(workspace.organizationId, {}, {});
  return { mostInATurn, messages: session?.messageCount ?? 0 };
}

describe('importing a long history file', () => {
  it('hands the event loop a turn between lines once its turn is used up, and reads the same', async () => {
    const root = longSession();
    // A turn of 0 ms is always used up: every line waits for a turn of its own.
    const cut = await importCountingTurns(root, 0);
    expect(cut.mostInATurn).toBeLessThan(10);
    // A turn longer than the import: the file's one batch is parsed in one turn.
    const whole = await importCountingTurns(root, 60_000);
    expect(whole.mostInATurn).toBeGreaterThan(ANSWERS);
    expect(cut.messages).toBe(whole.messages);
    expect(whole.messages).toBeGreaterThan(ANSWERS);
  });
});
