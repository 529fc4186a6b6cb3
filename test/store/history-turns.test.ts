// Reading a large history file on the server's thread: the importer hands the event loop a turn
// between lines once it has held it for its turn's time, so requests are not held behind a batch
// of MBs of tool output. (The stall it bounds is measured in `npm run bench:history`.)
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src-main/clock.js';
import { importSource } from '../../src-main/history/importer.js';
import { readAllMessages } from '../../src-main/sessions/transcript-reads.js';
import { SLICE_CHARS } from '../../src-main/store/sliced-payload.js';
import { readsOf } from '../../src-main/store/sqljs-storage.js';
import { useCleanups } from '../helpers/cleanups.js';
import { ROOT } from '../helpers/cli.js';
import { storeWithHistorySource } from '../helpers/history-source.js';
import { tempDir } from '../helpers/server.js';

const ANSWERS = 300;
const cleanup = useCleanups();

/** The recorded Claude Code session these tests grow: its project folder, file name and lines. */
function recordedSession() {
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
  return { project, name, text: readFileSync(join(fixture, project, name), 'utf8') };
}

/** A recorded Claude Code session with ANSWERS more answers after its own, one line each. */
function longSession(): string {
  const { project, name, text } = recordedSession();
  const lines = text.trimEnd().split('\n');
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
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'projects', project), { recursive: true });
  writeFileSync(join(root, 'projects', project, name), `${[...lines, ...extra].join('\n')}\n`);
  return root;
}

async function importCountingTurns(root: string, turnMs: number) {
  const { deps, source, sessions } = await storeWithHistorySource(root, cleanup);
  // Each line is one JSON.parse: the most lines parsed within one turn. Each message stored is
  // one JSON.stringify: the most messages encoded within one turn (the write's included).
  let encoded = 0;
  const { mostInATurn } = await callsPerTurn(JSON, 'parse', async () => {
    const isMessage = (value: unknown) => typeof value === 'object' && value !== null && 'message' in value;
    const import_ = () => importSource(deps, source, { turnMs });
    encoded = (await callsPerTurn(JSON, 'stringify', import_, isMessage)).mostInATurn;
  });
  return { mostInATurn, encoded, messages: sessions()[0]?.messages ?? 0 };
}

describe('importing a long history file', () => {
  it('hands the event loop a turn between lines and between messages encoded, once its turn is used up, and reads the same', async () => {
    const root = longSession();
    // A turn of 0 ms is always used up: every line waits for a turn of its own.
    const cut = await importCountingTurns(root, 0);
    expect(cut.mostInATurn).toBeLessThan(10);
    expect(cut.encoded).toBeLessThan(10);
    // A turn longer than the import: the file's one batch is parsed in one turn.
    const whole = await importCountingTurns(root, 60_000);
    expect(whole.mostInATurn).toBeGreaterThan(ANSWERS);
    expect(whole.encoded).toBeGreaterThan(ANSWERS);
    expect(cut.messages).toBe(whole.messages);
    expect(whole.messages).toBeGreaterThan(ANSWERS);
  });
});

describe('importing a history file with a line of MBs', () => {
  it('encodes its message a slice at a time, between turns, and stores it whole', async () => {
    const { project, name, text } = recordedSession();
    const lines = text.trimEnd().split('\n');
    const answer = lines.find(
      (line) => line.includes('"type":"text"') && line.includes('"role":"assistant"'),
    )!;
    const parsed = JSON.parse(answer) as Record<string, unknown> & { message: Record<string, unknown> };
    const output = `line "one"\n\t${'0123456789abcdef'.repeat(200_000)}`;
    parsed.message = { ...parsed.message, id: 'msg_large', content: [{ type: 'text', text: output }] };
    const root = tempDir('history-turns-large-');
    cleanup(() => rmSync(root, { recursive: true, force: true }));
    mkdirSync(join(root, 'projects', project), { recursive: true });
    writeFileSync(
      join(root, 'projects', project, name),
      `${[...lines, JSON.stringify(parsed)].join('\n')}\n`,
    );
    const { deps, source, sessionIds, store } = await storeWithHistorySource(root, cleanup);
    // The longest JSON encoded at once while importing: a slice of the output, not all of it.
    const stringify = JSON.stringify;
    let longest = 0;
    JSON.stringify = ((...args: unknown[]) => {
      const json = (stringify as (...a: unknown[]) => string)(...args);
      longest = Math.max(longest, json?.length ?? 0);
      return json;
    }) as typeof JSON.stringify;
    try {
      await importSource(deps, source, { turnMs: 0 });
    } finally {
      JSON.stringify = stringify;
    }
    expect(longest).toBeLessThan(SLICE_CHARS + 1024);
    const messages = await readAllMessages(readsOf(store), sessionIds()[0]!);
    expect(messages.at(-1)).toEqual({
      type: 'assistant',
      message: { content: [{ type: 'text', text: output }] },
    });
  });
});

const FILES = 200;

/** FILES copies of a recorded Claude Code session, each a conversation of its own. */
function manySessions(): string {
  const { project, name, text } = recordedSession();
  const conversation = name.replace(/\.jsonl$/u, '');
  const root = tempDir('history-turns-many-');
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'projects', project), { recursive: true });
  for (let i = 0; i < FILES; i += 1) {
    const id = randomUUID();
    writeFileSync(join(root, 'projects', project, `${id}.jsonl`), text.replaceAll(conversation, id));
  }
  return root;
}

/**
 * Runs `work` while counting the calls of `target[method]` (those whose first argument is
 * `counted`) made within each turn of the event loop (a chain of setImmediate callbacks, one a
 * turn): the most in one turn, and all of them.
 */
async function callsPerTurn<T extends object>(
  target: T,
  method: keyof T,
  work: () => Promise<unknown>,
  counted: (first: unknown) => boolean = () => true,
) {
  const original = target[method] as (...args: unknown[]) => unknown;
  let calls = 0;
  let atTurn = 0;
  let mostInATurn = 0;
  let counting = true;
  const turn = () => {
    mostInATurn = Math.max(mostInATurn, calls - atTurn);
    atTurn = calls;
    if (counting) setImmediate(turn);
  };
  (target as Record<keyof T, unknown>)[method] = (...args: unknown[]) => {
    if (counted(args[0])) calls += 1;
    return original.apply(target, args);
  };
  setImmediate(turn);
  try {
    await work();
  } finally {
    (target as Record<keyof T, unknown>)[method] = original;
    counting = false;
  }
  turn();
  return { calls, mostInATurn };
}

describe('scanning a history of many files', () => {
  it('hands the event loop a turn between files, and settles many sessions a hundred at a time', async () => {
    const root = manySessions();
    const { deps, source, sessions } = await storeWithHistorySource(root, cleanup);
    await importSource(deps, source, { turnMs: 60_000 });
    expect(sessions()).toHaveLength(FILES);
    // Just written, the files' sessions are shown active.
    const completed = () => sessions().filter((one) => one.status === 'completed').length;
    expect(completed()).toBe(0);

    // A scan that finds nothing changed looks each file up in the store once.
    const history = deps.storage.repos.history;
    const scan = await callsPerTurn(history, 'file', () => importSource(deps, source, { turnMs: 0 }));
    expect(scan.calls).toBeGreaterThanOrEqual(FILES);
    expect(scan.mostInATurn).toBeLessThan(10);

    // An hour later, the files unchanged: every session turns completed, at most a hundred
    // within one turn.
    const later: Clock = { now: () => new Date(Date.now() + 3_600_000) };
    let seen = 0;
    let mostInATurn = 0;
    let counting = true;
    const turn = () => {
      const now = completed();
      mostInATurn = Math.max(mostInATurn, now - seen);
      seen = now;
      if (counting) setImmediate(turn);
    };
    setImmediate(turn);
    try {
      await importSource({ ...deps, clock: later }, source, { turnMs: 0 });
    } finally {
      counting = false;
    }
    turn();
    expect(seen).toBe(FILES);
    expect(mostInATurn).toBeGreaterThan(0);
    expect(mostInATurn).toBeLessThanOrEqual(100);
    expect(sessions()).toHaveLength(FILES);
  });
});
