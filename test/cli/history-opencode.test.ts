// OpenCode's own history, its SQLite database, imported by `sessiondesk history import
// --opencode-dir` as a process and followed by a running server: over the database the real
// OpenCode wrote (test/fixtures/history/opencode/), and what a hostile program can put in its place.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import {
  ListSessionsResponseSchema,
  MessagesPageResponseSchema,
  type ContentBlock,
} from '../../src-shared/sessions.js';
import { ROOT, runCli } from '../helpers/cli.js';
import { cliIn, ok, seedOwner, signInAt, useSandbox } from '../helpers/cli-extra.js';
import { until } from '../helpers/until.js';

const sandbox = useSandbox();
const FIXTURE = join(ROOT, 'test', 'fixtures', 'history', 'opencode', '1.18.33', 'write-and-continue');
const CONVERSATION = 'ses_de5d26561ffeXPn7pSTpiya3hx';

/** A copy of the recorded data folder (the database with its WAL, as OpenCode left it). */
function copyRoot(): string {
  const root = join(sandbox.dataDir(), 'opencode');
  cpSync(FIXTURE, root, { recursive: true });
  return root;
}

/**
 * The command in a home of its own (no default place of this machine is read); a session
 * counts as going on for a second after OpenCode last wrote it, not two minutes.
 */
function historyIn(dataDir: string) {
  const home = sandbox.dataDir();
  return (...args: string[]) =>
    runCli(['history', 'import', ...args, '--data-dir', dataDir], {
      HOME: home,
      XDG_DATA_HOME: '',
      CLAUDE_CONFIG_DIR: '',
      CODEX_HOME: '',
      SESSIONDESK_HISTORY_ACTIVE_WITHIN_MS: '1000',
    });
}

async function ownerWithKey(dataDir: string) {
  const owner = await seedOwner(dataDir);
  const key = await ok(cliIn(dataDir)('key', 'create', '--workspace', owner.org));
  return { ...owner, key };
}

async function get<T>(url: string, key: string, schema: { parse(v: unknown): T }): Promise<T> {
  const response = await fetch(url, { headers: { 'x-api-key': key } });
  expect(response.status, url).toBe(200);
  return schema.parse(await response.json());
}

/** The transcript's blocks, each as [type, what it says], in order. */
function blocksOf(page: { messages: unknown[] }) {
  return page.messages.flatMap((m): [string, string, unknown?][] => {
    const { type, message } = m as { type: string; message?: { content: unknown } };
    if (!message) return [[type, '']];
    if (typeof message.content === 'string') return [[type, message.content]];
    return (message.content as ContentBlock[]).map((block): [string, string, unknown?] => {
      if (block.type === 'text') return [type, block.text];
      if (block.type === 'thinking') return ['thinking', block.thinking];
      if (block.type === 'tool_use') return ['tool_use', block.name, block.input];
      return ['tool_result', String(block.content)];
    });
  });
}

describe('sessiondesk history import --opencode-dir', { timeout: 120_000 }, () => {
  it("imports OpenCode's database: prompts, answers, thinking, tool calls with their results, and usage", async () => {
    const dataDir = sandbox.dataDir();
    const { org, email, key } = await ownerWithKey(dataDir);
    const root = copyRoot();
    const history = historyIn(dataDir);
    const out = await ok(history('--workspace', org, '--opencode-dir', root));
    expect(out).toMatch(/^opencode: 1 sessions \(1 new, 0 updated\), \d+ messages$/mu);
    // Again: nothing changed, nothing new.
    expect(await ok(history('--workspace', org, '--opencode-dir', root))).toMatch(
      /^opencode: 1 sessions \(0 new, 0 updated\)/mu,
    );

    const serve = await sandbox.serve(dataDir);
    const list = await get(
      `${serve.url}/api/sessions?organizationId=${org}`,
      key,
      ListSessionsResponseSchema,
    );
    expect(list.sessions).toHaveLength(1);
    const session = list.sessions[0]!;
    expect(session).toMatchObject({
      title: 'Scripted title',
      status: 'completed',
      model: 'scripted-model',
      agent: 'acp',
      acpAgent: 'opencode',
      source: { kind: 'opencode', conversationId: CONVERSATION, path: `${root}/opencode.db#${CONVERSATION}` },
      // The four model steps' tokens, as OpenCode recorded them; it priced the scripted model at 0.
      usage: { inputTokens: 4400, outputTokens: 71, cacheReadTokens: 1000, cacheWriteTokens: 0 },
    });
    expect(session.createdAt).toBe(new Date(1795735526047).toISOString());
    // The ACP agent filter finds it with the sessions OpenCode ran through Session Desk.
    const filtered = await get(
      `${serve.url}/api/sessions?organizationId=${org}&agent=acp:opencode`,
      key,
      ListSessionsResponseSchema,
    );
    expect(filtered.sessions.map((s) => s.id)).toEqual([session.id]);

    const page = await get(
      `${serve.url}/api/sessions/${session.id}/messages?organizationId=${org}`,
      key,
      MessagesPageResponseSchema,
    );
    const blocks = blocksOf(page);
    expect(blocks).toEqual([
      ['user', expect.stringContaining('then copy it to COPY.md. OPENCODE-HISTORY')],
      ['thinking', 'Write the notes first.'],
      ['assistant', 'I will write the notes file.'],
      ['tool_use', 'write', { filePath: expect.stringMatching(/\/NOTES\.md$/u), content: 'First line\n' }],
      ['tool_result', 'Wrote file successfully.'],
      ['tool_use', 'bash', { command: 'cp NOTES.md COPY.md', description: 'Copy the notes' }],
      ['tool_result', '(no output)'],
      ['assistant', 'Wrote NOTES.md and copied it.'],
      ['result', expect.any(String)],
      ['user', expect.stringContaining('What does the notes file say?')],
      ['assistant', 'The notes file says: First line.'],
      ['result', expect.any(String)],
    ]);

    // A follow-up is refused, saying how it can go on: OpenCode's own resume.
    const cookie = await signInAt(serve.url, email);
    const followUp = await fetch(`${serve.url}/api/sessions/${session.id}/messages`, {
      method: 'POST',
      headers: { cookie, origin: serve.url, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'And now?' }),
    });
    expect(followUp.status).toBe(409);
    const refusal = ((await followUp.json()) as { error: { message: string } }).error.message;
    expect(refusal).toContain(`opencode --session ${CONVERSATION}`);
    await serve.stop();
  });

  it('refuses a folder that is not OpenCode’s, and names OpenCode’s folder given as another CLI’s', async () => {
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const history = historyIn(dataDir);
    const gemini = join(ROOT, 'test', 'fixtures', 'history', 'gemini', '0.61.0', 'plain-answer');
    const notOpencode = await history('--workspace', org, '--opencode-dir', gemini);
    expect(notOpencode.code).toBe(2);
    expect(notOpencode.stderr).toContain('has no OpenCode conversations');
    expect(notOpencode.stderr).toContain('looks like a Gemini CLI folder');
    const notGemini = await history('--workspace', org, '--gemini-dir', copyRoot());
    expect(notGemini.code).toBe(2);
    expect(notGemini.stderr).toContain('OpenCode folder');
  });
});

/** OpenCode's row shapes, written as it writes them: a prompt and a one-step answer. */
function appendTurn(db: DatabaseSync, prompt: string, answer: string, at: number): void {
  // OpenCode's ids and times grow as it writes: the answer's come after the prompt's.
  let time = at;
  const row = (table: string, id: string, data: object, extra: Record<string, string> = {}) => {
    const columns = ['id', 'session_id', ...Object.keys(extra), 'time_created', 'time_updated', 'data'];
    time += 1;
    db.prepare(
      `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
    ).run(id, CONVERSATION, ...Object.values(extra), time, time, JSON.stringify(data));
  };
  const user = `msg_zz${at}a`;
  const reply = `msg_zz${at}b`;
  row('message', user, { role: 'user', time: { created: at } });
  row('part', `prt_zz${at}a`, { type: 'text', text: prompt }, { message_id: user });
  const tokens = { input: 10, output: 2, reasoning: 0, cache: { read: 0, write: 0 } };
  row('message', reply, {
    role: 'assistant',
    modelID: 'scripted-model',
    tokens,
    cost: 0.5,
    time: { created: at, completed: at },
  });
  row('part', `prt_zz${at}b`, { type: 'text', text: answer }, { message_id: reply });
  db.prepare('UPDATE session SET time_updated = ? WHERE id = ?').run(time, CONVERSATION);
}

describe('a followed OpenCode folder', { timeout: 120_000 }, () => {
  it('picks up what a running OpenCode commits to its database, WAL and all', async () => {
    const dataDir = sandbox.dataDir();
    const { org, email, key } = await ownerWithKey(dataDir);
    const root = copyRoot();
    const serve = await sandbox.serveWithEnv(['--port', '0', '--data-dir', dataDir], {
      SESSIONDESK_HISTORY_ACTIVE_WITHIN_MS: '1000',
    });
    const cookie = await signInAt(serve.url, email);
    const added = await fetch(`${serve.url}/api/workspaces/${org}/history-sources`, {
      method: 'POST',
      headers: { cookie, origin: serve.url, 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'opencode', rootDir: root }),
    });
    expect(added.status, await added.clone().text()).toBe(201);
    const sessions = () =>
      get(`${serve.url}/api/sessions?organizationId=${org}`, key, ListSessionsResponseSchema);
    const [session] = (await until(sessions, (l) => l.sessions.length === 1, 30_000)).sessions;

    // A writer that keeps the database open in WAL mode, as OpenCode does while it runs, and
    // waits out a reader's short lock (its busy timeout) as a program sharing its database does.
    const writer = new DatabaseSync(join(root, 'opencode.db'), { timeout: 5000 });
    try {
      expect((writer.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode).toBe(
        'wal',
      );
      appendTurn(writer, 'FOLLOWED-PROMPT', 'FOLLOWED-ANSWER', Date.now());
      const messages = () =>
        get(
          `${serve.url}/api/sessions/${session!.id}/messages?organizationId=${org}`,
          key,
          MessagesPageResponseSchema,
        );
      const page = await until(messages, (p) => JSON.stringify(p).includes('FOLLOWED-ANSWER'), 30_000);
      expect(blocksOf(page).slice(-2)).toEqual([
        ['user', 'FOLLOWED-PROMPT'],
        ['assistant', 'FOLLOWED-ANSWER'],
      ]);
      // OpenCode's own cost for the new run, once the session went quiet and the run ended.
      const after = await until(sessions, (l) => l.sessions[0]?.usage?.costUsd === 0.5, 30_000);
      expect(after.sessions[0]!.usage).toMatchObject({ inputTokens: 4410, outputTokens: 73 });
    } finally {
      writer.close();
    }
    await serve.stop();
  });
});

describe('a hostile OpenCode folder', { timeout: 120_000 }, () => {
  /** A folder whose opencode.db is what `plant` puts there. */
  function plantedRoot(plant: (db: string) => void): string {
    const root = join(sandbox.dataDir(), 'planted');
    mkdirSync(root);
    plant(join(root, 'opencode.db'));
    return root;
  }

  it('is answered with a notice for a link, a pipe, a damaged database and one not OpenCode’s', async () => {
    const outside = copyRoot();
    const cases: [string, (db: string) => void, string][] = [
      ['a link', (db) => symlinkSync(join(outside, 'opencode.db'), db), 'opencode.db: a symbolic link'],
      ['a pipe', (db) => execFileSync('mkfifo', [db]), 'opencode.db: a named pipe'],
      [
        'a truncated database',
        (db) => {
          cpSync(join(FIXTURE, 'opencode.db'), db);
          truncateSync(db, 5000);
        },
        "opencode.db: it cannot be read as OpenCode's database",
      ],
      [
        'not a database',
        (db) => writeFileSync(db, 'not SQLite at all\n'.repeat(100)),
        "opencode.db: it cannot be read as OpenCode's database",
      ],
      [
        'a database without its tables',
        (db) => new DatabaseSync(db).exec('CREATE TABLE other (x); INSERT INTO other VALUES (1)'),
        "opencode.db: it cannot be read as OpenCode's database: no such table: session",
      ],
    ];
    const dataDir = sandbox.dataDir();
    const { org, key } = await ownerWithKey(dataDir);
    const history = historyIn(dataDir);
    for (const [what, plant, said] of cases) {
      const root = plantedRoot(plant);
      const run = await history('--workspace', org, '--opencode-dir', root);
      expect({ what, code: run.code, stderr: run.stderr }).toMatchObject({ what, code: 0, stderr: '' });
      expect(run.stdout, what).toContain(`  skipped ${said}`);
      rmSync(root, { recursive: true });
    }
    const serve = await sandbox.serve(dataDir);
    const list = await get(
      `${serve.url}/api/sessions?organizationId=${org}`,
      key,
      ListSessionsResponseSchema,
    );
    expect(list.sessions).toHaveLength(0);
    await serve.stop();
  });

  it('imports odd rows as far as they make sense, and the rest as notices', async () => {
    const root = copyRoot();
    const db = new DatabaseSync(join(root, 'opencode.db'));
    const at = Date.now() - 3_600_000;
    db.prepare('UPDATE session SET title = ?, directory = ?, time_created = ? WHERE id = ?').run(
      'Odd\u0007 title',
      'not/absolute',
      'yesterday',
      CONVERSATION,
    );
    const insert = db.prepare(
      'INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)',
    );
    insert.run('msg_zz1', CONVERSATION, at, at, 'not JSON at all');
    const tokens = { input: -5, output: 1e300, cache: { read: 'many' } };
    insert.run(
      'msg_zz2',
      CONVERSATION,
      at + 1,
      at + 1,
      JSON.stringify({ role: 'assistant', tokens, cost: -3, time: { completed: at } }),
    );
    insert.run('msg_zz3', CONVERSATION, at + 2, at + 2, JSON.stringify({ role: 'moderator' }));
    db.prepare('UPDATE session SET time_updated = ? WHERE id = ?').run(at + 2, CONVERSATION);
    db.close();

    const dataDir = sandbox.dataDir();
    const { org, key } = await ownerWithKey(dataDir);
    await ok(historyIn(dataDir)('--workspace', org, '--opencode-dir', root));
    const serve = await sandbox.serve(dataDir);
    const list = await get(
      `${serve.url}/api/sessions?organizationId=${org}`,
      key,
      ListSessionsResponseSchema,
    );
    const session = list.sessions[0]!;
    expect(session.title).toBe('Odd title');
    expect(session.source?.cwd).toBeUndefined();
    const page = await get(
      `${serve.url}/api/sessions/${session.id}/messages?organizationId=${org}`,
      key,
      MessagesPageResponseSchema,
    );
    expect(JSON.stringify(page)).toContain('not JSON at all');
    expect(JSON.stringify(page)).toContain('moderator');
    expect(session.usage!.inputTokens).toBeGreaterThanOrEqual(4400);
    expect(Number.isFinite(session.usage!.outputTokens)).toBe(true);
    await serve.stop();
  });
});
