// `sessiondesk history import` as a process, over the real files the CLIs wrote
// (test/fixtures/history/), with and without a server holding the data directory.
import { readsOf } from '../../src-main/store/sqljs-storage.js';
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { createClaudeCodeHistoryParser } from '../../src-main/history/claude-code.js';
import { readMessagePage } from '../../src-main/sessions/transcript-reads.js';
import { createRepositories } from '../../src-main/store/repositories.js';
import { realFiles } from '../../src-main/store/file-layer.js';
import { readJournal } from '../../src-main/store/journal-reader.js';
import { Store } from '../../src-main/store/store.js';
import { ListSessionsResponseSchema, MessagesPageResponseSchema } from '../../src-shared/sessions.js';
import { CLI, ROOT, runCli } from '../helpers/cli.js';
import {
  cliEmail,
  cliIn,
  historyImportIn,
  ok,
  seedOwner,
  signInAt,
  useSandbox,
} from '../helpers/cli-extra.js';
import { PASSWORD } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const sandbox = useSandbox();
const FIXTURES = join(ROOT, 'test', 'fixtures', 'history');
const claude = (scenario: string) => join(FIXTURES, 'claude-code', '2.1.330', scenario);
const codex = (scenario: string) => join(FIXTURES, 'codex', '0.169.0', scenario);
const gemini = (scenario: string) => join(FIXTURES, 'gemini', '0.61.0', scenario);

function filesUnder(dir: string, match: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path, match);
    return match.test(name) ? [path] : [];
  });
}

/**
 * A copy of a scenario's CLI root whose files were last written an hour ago, as a finished
 * session's are: a checkout writes the fixtures now, and a file written in the last two
 * minutes is a session still going on.
 */
function finishedCopy(from: string): string {
  const to = join(sandbox.dataDir(), 'root');
  cpSync(from, to, { recursive: true });
  const anHourAgo = new Date(Date.now() - 3_600_000);
  for (const file of filesUnder(to, /./u)) utimesSync(file, anHourAgo, anHourAgo);
  return to;
}

/** A copy of a scenario's CLI root, to append to and rewrite. */
function copyRoot(from: string): string {
  const to = join(sandbox.dataDir(), 'root');
  cpSync(from, to, { recursive: true });
  return to;
}

async function withStore<T>(
  dataDir: string,
  read: (repos: ReturnType<typeof createRepositories>, store: Store) => T | Promise<T>,
) {
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  try {
    return await read(createRepositories(store.db), store);
  } finally {
    await store.close({ snapshot: false });
  }
}

/** The command in a home of its own: no default location of this machine is read. */
function historyIn(dataDir: string, env: NodeJS.ProcessEnv = {}) {
  return historyImportIn(dataDir, sandbox.dataDir(), env);
}

/**
 * The command as it runs once the files written `WRITTEN_AGO_MS` ago have gone quiet: a session
 * counts as going on for ACTIVE_WITHIN_MS after its file was written (two minutes), and this
 * shortens that, rather than waiting for the two minutes to pass.
 */
const WRITTEN_AGO_MS = 30_000;
const afterQuiet = (dataDir: string) =>
  historyIn(dataDir, { SESSIONDESK_HISTORY_ACTIVE_WITHIN_MS: String(WRITTEN_AGO_MS / 3) });

/** The one session a finished copy of a scenario gives, imported into a data directory of its own. */
async function importedOnce(flag: string, scenario: string) {
  const dataDir = sandbox.dataDir();
  const { org } = await seedOwner(dataDir);
  await ok(historyIn(dataDir)('--workspace', org, flag, finishedCopy(scenario)));
  return withStore(dataDir, (repos) => repos.sessions.list(org, {}, { limit: 1 })[0]!);
}

async function apiKey(dataDir: string, org: string): Promise<string> {
  return ok(cliIn(dataDir)('key', 'create', '--workspace', org));
}

async function get<T>(url: string, key: string, schema: { parse(v: unknown): T }): Promise<T> {
  const response = await fetch(url, { headers: { 'x-api-key': key } });
  expect(response.status).toBe(200);
  return schema.parse(await response.json());
}

// Each test runs the real CLI (several processes, 2 to 6 s each to start on a busy machine)
// and often a real server: more than the default time, which the slowest came close to.
describe('sessiondesk history import', { timeout: 90_000 }, () => {
  it('imports the three CLIs, prints a line per source, and the API shows what each session holds', async () => {
    const dataDir = sandbox.dataDir();
    const { org, email } = await seedOwner(dataDir);
    const key = await apiKey(dataDir, org);
    const history = historyIn(dataDir);
    const claudeRoot = finishedCopy(claude('plain-answer'));
    const geminiRoot = finishedCopy(gemini('write-todos'));
    const args = [
      '--workspace',
      org,
      '--claude-dir',
      claudeRoot,
      '--codex-dir',
      finishedCopy(codex('todo-list')),
    ];
    const out = await ok(history(...args, '--gemini-dir', geminiRoot));
    expect(out.split('\n')).toEqual([
      'claude-code: 1 sessions (1 new, 0 updated), 4 messages',
      expect.stringMatching(/^codex: 1 sessions \(1 new, 0 updated\), \d+ messages$/u),
      expect.stringMatching(/^gemini: 1 sessions \(1 new, 0 updated\), \d+ messages$/u),
      expect.stringMatching(/^qwen-code: no .+\/\.qwen, nothing to import$/u),
      expect.stringMatching(/^opencode: no \/.+\/\.local\/share\/opencode, nothing to import$/u),
    ]);
    // Again: nothing changed, nothing new.
    const again = await ok(history(...args, '--gemini-dir', geminiRoot));
    expect(again).toContain('claude-code: 1 sessions (0 new, 0 updated), 4 messages');

    const serve = await sandbox.serve(dataDir);
    const list = await get(
      `${serve.url}/api/sessions?organizationId=${org}`,
      key,
      ListSessionsResponseSchema,
    );
    const byAgent = new Map(list.sessions.map((s) => [s.agent, s]));
    const claudeSession = byAgent.get('claude-code')!;
    const [claudeFile] = filesUnder(claudeRoot, /\.jsonl$/u);
    expect(claudeSession).toMatchObject({
      title: 'Say hello',
      status: 'completed',
      model: 'claude-sonnet-4-5',
      metadata: { branch: 'main' },
      source: {
        kind: 'claude-code',
        path: claudeFile,
        conversationId: claudeFile!.split('/').pop()!.slice(0, -6),
      },
      // The CLI's own cost for the run.
      usage: {
        inputTokens: 120,
        outputTokens: 14,
        cacheReadTokens: 30,
        cacheWriteTokens: 40,
        costUsd: 0.000729,
      },
    });
    expect(claudeSession.createdAt < claudeSession.updatedAt).toBe(true);
    // Imported while no server ran: the server indexes it at start, and search finds its prompt.
    const search = async () => {
      const found = await fetch(`${serve.url}/api/search?q=hello&organizationId=${org}`, {
        headers: { 'x-api-key': key },
      });
      return ((await found.json()) as { hits: Array<{ sessionId: string; messageIndex: number }> }).hits;
    };
    const hits = await until(search, (found) => found.length > 0, 30_000);
    expect(hits.map((h) => [h.sessionId, h.messageIndex])).toContainEqual([claudeSession.id, 0]);

    // A follow-up without saying where to continue is refused, naming the two places.
    const cookie = await signInAt(serve.url, email);
    const followUp = await fetch(`${serve.url}/api/sessions/${claudeSession.id}/messages`, {
      method: 'POST',
      headers: { cookie, origin: serve.url, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'And now say goodbye.' }),
    });
    expect(followUp.status).toBe(409);
    const refusal = ((await followUp.json()) as { error: { message: string } }).error.message;
    expect(refusal).toContain("imported from Claude Code's own files");
    expect(refusal).toContain('"continueIn": "sandbox"');
    expect(refusal).toContain(claudeSession.source!.conversationId!);
    expect(byAgent.get('codex')).toMatchObject({ model: 'gpt-5.5', source: { kind: 'codex' } });
    // Neither records a cost: each is priced by the table, by the model its file names.
    expect(byAgent.get('codex')!.usage?.costUsd).toBeGreaterThan(0);
    expect(byAgent.get('codex')!.usage?.costUnknown).toBeUndefined();
    expect(byAgent.get('gemini')!.usage?.costUsd).toBeGreaterThan(0);

    const page = await get(
      `${serve.url}/api/sessions/${claudeSession.id}/messages?organizationId=${org}`,
      key,
      MessagesPageResponseSchema,
    );
    expect(page.messages.map((m) => m.type)).toEqual(['user', 'assistant', 'assistant', 'result']);
    const full = await fetch(`${serve.url}/api/sessions/${byAgent.get('gemini')!.id}?organizationId=${org}`, {
      headers: { 'x-api-key': key },
    });
    const body = (await full.json()) as { session: { tasks: { status: string }[]; source: unknown } };
    expect(body.session.source).toMatchObject({ kind: 'gemini' });
    expect(body.session.tasks.length).toBeGreaterThan(1);
  });

  it('goes through a running server, which shows the sessions at once; imported cost counts in costPastWeek', async () => {
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const key = await apiKey(dataDir, org);
    const serve = await sandbox.serve(dataDir);
    // The recording's runs are dated when it was made: the copy's times are moved to now, so
    // its runs ended this week.
    const root = copyRoot(claude('resume'));
    const [file] = filesUnder(root, /\.jsonl$/u);
    const now = new Date().toISOString();
    writeFileSync(
      file!,
      readFileSync(file!, 'utf8').replace(/"timestamp":"[^"]+"/gu, `"timestamp":"${now}"`),
    );
    const before = await get(
      `${serve.url}/api/sessions?organizationId=${org}`,
      key,
      ListSessionsResponseSchema,
    );
    const out = await ok(historyIn(dataDir)('--workspace', org, '--claude-dir', root));
    expect(out.split('\n')[0]).toMatch(/^claude-code: 1 sessions \(1 new, 0 updated\), \d+ messages$/u);
    const list = await get(
      `${serve.url}/api/sessions?organizationId=${org}`,
      key,
      ListSessionsResponseSchema,
    );
    expect(list.sessions).toHaveLength(1);
    expect(list.sessions[0]!.usage?.costUsd).toBeCloseTo(0.000909, 6);
    expect(list.stats.costPastWeek - before.stats.costPastWeek).toBeCloseTo(0.000909, 6);
  });

  it('settles the sessions whose files went quiet together, in one write, not one each', async () => {
    // A CLI folder copied from another machine: every file new, so every session active until
    // its file is two minutes old. Forty of them then turn completed in one store write. The
    // files were written 30 s ago: active at the first import, quiet at the second (afterQuiet).
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const root = copyRoot(claude('plain-answer'));
    const [file] = filesUnder(root, /\.jsonl$/u);
    for (let i = 0; i < 39; i += 1)
      cpSync(file!, join(file!, '..', `00000000-0000-4000-8000-${String(i).padStart(12, '0')}.jsonl`));
    const writtenAt = new Date(Date.now() - WRITTEN_AGO_MS);
    for (const path of filesUnder(root, /./u)) utimesSync(path, writtenAt, writtenAt);
    const history = historyIn(dataDir);
    await ok(history('--workspace', org, '--claude-dir', root));
    const statuses = () =>
      withStore(dataDir, (repos) => repos.sessions.list(org, {}, { limit: 100 }).map((s) => s.status));
    expect(await statuses()).toEqual(Array.from({ length: 40 }, () => 'active'));

    const journalRecords = async () => {
      const journal = readdirSync(dataDir)
        .filter((name) => /^journal-\d+\.log$/u.test(name))
        .sort()
        .at(-1)!;
      return (
        await readJournal(realFiles, join(dataDir, journal), (records) => ({ applied: records.length }))
      ).records;
    };
    const before = await journalRecords();
    expect(await ok(afterQuiet(dataDir)('--workspace', org, '--claude-dir', root))).toMatch(
      /^claude-code: 40 sessions \(0 new, 0 updated\)/u,
    );
    expect(await statuses()).toEqual(Array.from({ length: 40 }, () => 'completed'));
    // One write settles them, one notes the import.
    expect((await journalRecords()) - before).toBe(2);
  }, 60_000);

  it('leaves a snapshot after an import the next start would take long to replay, not after a small one', async () => {
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    /** The records of the newest journal: what the next start replays after the newest snapshot. */
    const toReplay = async () => {
      const names = readdirSync(dataDir);
      const journal = names
        .filter((name) => /^journal-\d+\.log$/u.test(name))
        .sort()
        .at(-1)!;
      const generation = journal.slice('journal-'.length, -'.log'.length);
      const replayed = await readJournal(realFiles, join(dataDir, journal), (records) => ({
        applied: records.length,
      }));
      return { records: replayed.records, snapshotted: names.includes(`snapshot-${generation}.db`) };
    };
    const history = historyIn(dataDir);
    await ok(history('--workspace', org, '--claude-dir', finishedCopy(claude('plain-answer'))));
    // One session: a small journal, left for the server to fold in.
    expect((await toReplay()).records).toBeGreaterThan(0);

    const root = join(sandbox.dataDir(), 'many');
    cpSync(claude('edit-and-commit'), root, { recursive: true });
    const [file] = filesUnder(root, /\.jsonl$/u);
    const sessionId = file!.split('/').pop()!.slice(0, -'.jsonl'.length);
    const text = readFileSync(file!, 'utf8');
    for (let i = 0; i < 60; i += 1) {
      const copyId = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      writeFileSync(join(file!, '..', `${copyId}.jsonl`), text.replaceAll(sessionId, copyId));
    }
    const anHourAgo = new Date(Date.now() - 3_600_000);
    for (const path of filesUnder(root, /./u)) utimesSync(path, anHourAgo, anHourAgo);
    expect(await ok(history('--workspace', org, '--claude-dir', root))).toMatch(
      /^claude-code: 61 sessions \(61 new, 0 updated\)/u,
    );
    // Many: the import ends with a snapshot, and the next start replays nothing.
    expect(await toReplay()).toEqual({ records: 0, snapshotted: true });
    const sessions = await withStore(dataDir, (repos) => repos.sessions.list(org, {}, { limit: 100 }));
    expect(sessions).toHaveLength(62);
  }, 60_000);

  it("ends a Gemini run read while it went on once its file is quiet: the run's usage and cost count", async () => {
    // Gemini CLI's file says a run ended only by the next prompt, or by going quiet. A file read
    // while its run went on, then left as it was, is not read again: its run still has to end.
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const root = copyRoot(gemini('plain-answer'));
    const writtenAt = new Date(Date.now() - WRITTEN_AGO_MS);
    for (const path of filesUnder(root, /./u)) utimesSync(path, writtenAt, writtenAt);
    const history = historyIn(dataDir);
    await ok(history('--workspace', org, '--gemini-dir', root));
    const session = () => withStore(dataDir, (repos) => repos.sessions.list(org, {}, { limit: 1 })[0]!);
    expect(await session()).toMatchObject({ status: 'active', messageCount: 2 });

    const quiet = afterQuiet(dataDir);
    expect((await ok(quiet('--workspace', org, '--gemini-dir', root))).split('\n')[2]).toMatch(
      /^gemini: 1 sessions \(0 new, 1 updated\), 3 messages$/u,
    );
    const ended = await session();
    expect(ended).toMatchObject({ status: 'completed', messageCount: 3 });
    // As one import of the quiet file gives.
    const once = await importedOnce('--gemini-dir', gemini('plain-answer'));
    expect(ended.usage).toEqual(once.usage);
    expect(ended.usage?.costUsd).toBeGreaterThan(0);
    // Read again, nothing changes.
    expect((await ok(quiet('--workspace', org, '--gemini-dir', root))).split('\n')[2]).toMatch(
      /^gemini: 1 sessions \(0 new, 0 updated\), 3 messages$/u,
    );
  }, 60_000);

  it('imports a session first read while it held only the CLI bookkeeping lines, once its messages come', async () => {
    // Claude Code writes its queue lines before the prompt: a scan in between reads no message.
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const root = copyRoot(claude('plain-answer'));
    const [file] = filesUnder(root, /\.jsonl$/u);
    const lines = readFileSync(file!, 'utf8').split('\n');
    const firstPrompt = lines.findIndex((line) => line.includes('"type":"user"'));
    expect(firstPrompt).toBeGreaterThan(0);
    writeFileSync(file!, `${lines.slice(0, firstPrompt).join('\n')}\n`);
    const history = historyIn(dataDir);
    expect(await ok(history('--workspace', org, '--claude-dir', root))).toMatch(/^claude-code: 0 sessions/u);

    appendFileSync(file!, lines.slice(firstPrompt).join('\n'));
    expect(await ok(history('--workspace', org, '--claude-dir', root))).toMatch(
      /^claude-code: 1 sessions \(1 new, 0 updated\), [1-9]\d* messages$/mu,
    );
    const [session] = await withStore(dataDir, (repos) => repos.sessions.list(org, {}, {}));
    expect(session?.title).toBe('Say hello');
  });

  it('reads only what was appended, and a rewritten file again', async () => {
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const root = copyRoot(claude('resume'));
    const [file] = filesUnder(root, /\.jsonl$/u);
    const whole = readFileSync(file!, 'utf8');
    const lines = whole.split('\n');
    const firstRunEnd = lines.findIndex((l) => l.includes('"type":"cost-state"')) + 1;
    writeFileSync(file!, `${lines.slice(0, firstRunEnd).join('\n')}\n`);
    const history = historyIn(dataDir);
    expect(await ok(history('--workspace', org, '--claude-dir', root))).toContain(
      'claude-code: 1 sessions (1 new, 0 updated), 3 messages',
    );
    appendFileSync(file!, lines.slice(firstRunEnd).join('\n'));
    expect(await ok(history('--workspace', org, '--claude-dir', root))).toContain(
      'claude-code: 1 sessions (0 new, 1 updated), 6 messages',
    );
    // Read whole once: the same session, the same messages and usage as appended in two parts.
    const row = await withStore(dataDir, (repos) => {
      const [source] = repos.history.sources(org);
      return repos.sessions.find(repos.history.file(source!.id, file!)!.sessionId!)!;
    });
    expect(row.messageCount).toBe(6);
    expect(row.usage?.costUsd).toBeCloseTo(0.000909, 9);
    // Rewritten (shorter): read again from the start, into a session of its own.
    writeFileSync(file!, `${lines.slice(0, firstRunEnd).join('\n')}\n`);
    expect(await ok(history('--workspace', org, '--claude-dir', root))).toMatch(
      /^claude-code: 1 sessions \(1 new, 0 updated\), 3 messages$/mu,
    );
  });

  it("imports Gemini CLI's older chat documents (0.19.1), a rewritten one only for its new messages, a torn one once whole", async () => {
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const history = historyIn(dataDir);
    const root = copyRoot(join(FIXTURES, 'gemini', '0.19.1', 'resume'));
    const [file] = filesUnder(root, /^session-.*\.json$/u);
    const whole = readFileSync(file!, 'utf8');
    const document = JSON.parse(whole) as { messages: unknown[] };
    const anHourAgo = new Date(Date.now() - 3_600_000);
    const write = (text: string) => {
      writeFileSync(file!, text);
      utimesSync(file!, anHourAgo, anHourAgo);
    };
    const imported = () =>
      withStore(dataDir, (repos) =>
        repos.sessions.list(org, {}, { limit: 10 }).map((s) => ({ id: s.id, messages: s.messageCount })),
      );

    // The first run of the conversation: its first prompt and answer.
    write(JSON.stringify({ ...document, messages: document.messages.slice(0, 2) }, null, 2));
    expect((await ok(history('--workspace', org, '--gemini-dir', root))).split('\n')[2]).toMatch(
      /^gemini: 1 sessions \(1 new, 0 updated\), \d+ messages$/u,
    );
    const [first] = await imported();

    // The CLI rewrote it whole with the second run: the same session grows, nothing twice.
    write(whole);
    expect((await ok(history('--workspace', org, '--gemini-dir', root))).split('\n')[2]).toMatch(
      /^gemini: 1 sessions \(0 new, 1 updated\), \d+ messages$/u,
    );
    const [grown] = await imported();
    expect(grown!.id).toBe(first!.id);
    // As many messages as one import of the whole document gives.
    const once = await importedOnce('--gemini-dir', join(FIXTURES, 'gemini', '0.19.1', 'resume'));
    expect(grown!.messages).toBe(once.messageCount);
    expect(grown!.messages).toBeGreaterThan(first!.messages);

    // Caught while the CLI rewrites it: a torn document waits for the next import.
    const torn = join(file!, '..', 'session-2026-11-25T19-00-0badc0de.json');
    writeFileSync(torn, whole.slice(0, 200));
    expect((await ok(history('--workspace', org, '--gemini-dir', root))).split('\n')[2]).toMatch(
      /^gemini: 1 sessions \(0 new, 0 updated\)/u,
    );
    writeFileSync(
      torn,
      whole.replace(/"sessionId": "[^"]+"/u, '"sessionId": "0badc0de-0000-4000-8000-000000000000"'),
    );
    expect((await ok(history('--workspace', org, '--gemini-dir', root))).split('\n')[2]).toMatch(
      /^gemini: 2 sessions \(1 new, 0 updated\)/u,
    );
    // One that has not parsed for two minutes never will: its lines are kept, as notices.
    const broken = join(file!, '..', 'session-2026-11-25T19-01-0badbeef.json');
    writeFileSync(
      broken,
      '{"sessionId": "0badbeef-0000-4000-8000-000000000000", "messages": [\n  {"id": "1", "type"',
    );
    utimesSync(broken, anHourAgo, anHourAgo);
    expect((await ok(history('--workspace', org, '--gemini-dir', root))).split('\n')[2]).toMatch(
      /^gemini: 3 sessions \(1 new, 0 updated\), \d+ messages$/u,
    );
    const notices = await withStore(dataDir, async (repos, store) => {
      const row = repos.sessions.list(org, {}, { limit: 10 }).find((s) => s.messageCount === 2);
      const page = await readMessagePage(readsOf(store), repos.sessions.find(row!.id)!, 0, 10, 1 << 20);
      return page.messages.map((m) => (JSON.parse(m.toString('utf8')) as { notice?: string }).notice);
    });
    expect(notices).toEqual(['info', 'info']);
  });

  it("shows the tool results Gemini CLI wrote into a chat document's last answer after it was read", async () => {
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const history = historyIn(dataDir);
    const root = copyRoot(join(FIXTURES, 'gemini', '0.19.1', 'edit-and-commit'));
    const [file] = filesUnder(root, /^session-.*\.json$/u);
    const whole = readFileSync(file!, 'utf8');
    type Doc = { messages: Array<{ toolCalls?: Array<Record<string, unknown>> }> };
    const document = JSON.parse(whole) as Doc;
    // Read before its calls were recorded: the CLI writes an answer's text first, then adds its
    // tool calls to that same answer (the 0.19 source's recordToolCalls), then goes on.
    const running: Doc = {
      ...document,
      messages: document.messages.slice(0, 2).map(({ toolCalls: _calls, ...message }) => message),
    };
    const anHourAgo = new Date(Date.now() - 3_600_000);
    writeFileSync(file!, JSON.stringify(running, null, 2));
    await ok(history('--workspace', org, '--gemini-dir', root));
    // The CLI rewrote the answer with its calls and their results, then went on.
    writeFileSync(file!, whole);
    utimesSync(file!, anHourAgo, anHourAgo);
    await ok(history('--workspace', org, '--gemini-dir', root));

    const blocks = await withStore(dataDir, async (repos, store) => {
      const [row] = repos.sessions.list(org, {}, { limit: 1 });
      const page = await readMessagePage(readsOf(store), repos.sessions.find(row!.id)!, 0, 100, 1 << 24);
      return page.messages.flatMap((m) => {
        const message = JSON.parse(m.toString('utf8')) as { message?: { content?: unknown } };
        return Array.isArray(message.message?.content)
          ? (message.message.content as Array<Record<string, unknown>>)
          : [];
      });
    });
    const calls = blocks.filter((b) => b.type === 'tool_use').map((b) => b.id);
    const results = blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id);
    expect(calls).toHaveLength(document.messages[1]!.toolCalls!.length);
    // Each call once, each with its result.
    expect(new Set(calls).size).toBe(calls.length);
    expect(new Set(results)).toEqual(new Set(calls));
  });

  it('a running server, and every later start, follows the sources: appends and new files', async () => {
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const key = await apiKey(dataDir, org);
    const root = copyRoot(claude('resume'));
    const [file] = filesUnder(root, /\.jsonl$/u);
    const lines = readFileSync(file!, 'utf8').split('\n');
    const firstRunEnd = lines.findIndex((l) => l.includes('"type":"cost-state"')) + 1;
    writeFileSync(file!, `${lines.slice(0, firstRunEnd).join('\n')}\n`);
    let serve = await sandbox.serve(dataDir);
    await ok(historyIn(dataDir)('--workspace', org, '--claude-dir', root));
    const list = () =>
      get(`${serve.url}/api/sessions?organizationId=${org}`, key, ListSessionsResponseSchema);
    // The follower rescans every 2 s; how soon it follows is the history bench's to measure.
    // Here it is what it reads: the list is polled until it shows it (30 s at most, on a
    // machine busy with other tests), then compared.
    const counts = async () => (await list()).sessions.map((s) => s.messageCount).sort((a, b) => a - b);
    expect((await list()).sessions[0]).toMatchObject({ messageCount: 3, status: 'active' });
    appendFileSync(file!, lines.slice(firstRunEnd).join('\n'));
    expect(await until(counts, (c) => c[0] === 6, 30_000)).toEqual([6]);
    // A new session file in a new project folder.
    const [plain] = filesUnder(claude('plain-answer'), /\.jsonl$/u);
    mkdirSync(join(root, 'projects', 'another-project'));
    cpSync(plain!, join(root, 'projects', 'another-project', 'c0ffee00-0000-4000-8000-000000000001.jsonl'));
    expect(await until(counts, (c) => c.length === 2, 30_000)).toEqual([4, 6]);
    // Stopped, a file is written; the next start follows on.
    await serve.stop();
    cpSync(plain!, join(root, 'projects', 'another-project', 'c0ffee00-0000-4000-8000-000000000002.jsonl'));
    serve = await sandbox.serve(dataDir);
    expect(await until(counts, (c) => c.length === 3, 30_000)).toEqual([4, 4, 6]);
  }, 120_000);

  it('never imports a conversation a session of its own ran', async () => {
    const dataDir = sandbox.dataDir();
    const { org, email } = await seedOwner(dataDir);
    const [file] = filesUnder(claude('plain-answer'), /\.jsonl$/u);
    const conversationId = file!.split('/').pop()!.slice(0, -'.jsonl'.length);
    await withStore(dataDir, async (repos, store) => {
      const user = repos.users.findByEmail(email)!;
      await store.write(() => {
        repos.sessions.insert({
          id: 'ses_ownrunownrunownrunownr',
          workspaceId: org,
          authorId: user.id,
          title: 'Run here',
          model: 'claude-sonnet-4-5',
          createdAt: new Date().toISOString(),
          baseBranch: 'main',
          initialMessage: 'Explain what this repository does.',
        });
        repos.sessions.setConversation('ses_ownrunownrunownrunownr', 'claude-code', conversationId);
      });
    });
    const out = await ok(historyIn(dataDir)('--workspace', org, '--claude-dir', claude('plain-answer')));
    expect(out.split('\n')[0]).toBe('claude-code: 0 sessions (0 new, 0 updated), 0 messages');
    const count = await withStore(dataDir, (repos) => repos.sessions.count(org, {}));
    expect(count).toBe(1);
  });

  it('gives clear errors with the design exit codes', async () => {
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const cli = cliIn(dataDir);
    const history = historyIn(dataDir);
    const noWorkspace = await history('--claude-dir', claude('plain-answer'));
    expect(noWorkspace.code).toBe(2);
    const unknown = await cli(
      'history',
      'import',
      '--workspace',
      'org_nonenonenonenonenonen',
      '--claude-dir',
      claude('plain-answer'),
    );
    expect({ code: unknown.code, stderr: unknown.stderr }).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('There is no workspace "org_nonenonenonenonenonen"'),
    });
    await ok(cli('user', 'create', '--email', cliEmail('stranger'), '--name', 'S', '--password', PASSWORD));
    const stranger = await cli(
      'history',
      'import',
      '--workspace',
      org,
      '--author',
      'stranger@example.test',
      '--claude-dir',
      claude('plain-answer'),
    );
    expect({ code: stranger.code, stderr: stranger.stderr }).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('is not a member'),
    });
    const missing = await cli(
      'history',
      'import',
      '--workspace',
      org,
      '--claude-dir',
      claude('plain-answer'),
      '--codex-dir',
      join(dataDir, 'nowhere'),
    );
    // A named folder that is not there is a mistake in the command line.
    expect({ code: missing.code, stderr: missing.stderr }).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(`--codex-dir: There is no folder ${join(dataDir, 'nowhere')}.`),
    });
    // An error imports nothing, not even the sources named before it.
    expect(await withStore(dataDir, (repos) => repos.sessions.count(org, {}))).toBe(0);
    // Default locations that are not there are notes.
    const home = sandbox.dataDir();
    const defaults = await runCli(['history', 'import', '--workspace', org, '--data-dir', dataDir], {
      HOME: home,
      CLAUDE_CONFIG_DIR: '',
      CODEX_HOME: '',
      QWEN_HOME: '',
      QWEN_RUNTIME_DIR: '',
      XDG_DATA_HOME: '',
    });
    expect(defaults.code).toBe(0);
    expect(defaults.stdout.split('\n').filter(Boolean)).toEqual([
      `claude-code: no ${join(home, '.claude')}, nothing to import`,
      `codex: no ${join(home, '.codex')}, nothing to import`,
      `gemini: no ${join(home, '.gemini')}, nothing to import`,
      `qwen-code: no ${join(home, '.qwen')}, nothing to import`,
      `opencode: no ${join(home, '.local', 'share', 'opencode')}, nothing to import`,
    ]);
  }, 90_000);

  it('killed in the middle of a large file, shows only whole batches, and the next run completes it', async () => {
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const root = copyRoot(claude('plain-answer'));
    const [file] = filesUnder(root, /\.jsonl$/u);
    const lines = readFileSync(file!, 'utf8').trimEnd().split('\n');
    const prompt = lines.find((l) => l.includes('"type":"user"'))!;
    const answer = lines.find((l) => l.includes('"type":"assistant"') && l.includes('"text"'))!;
    // About 60 MB of real lines: the recorded prompt and answer, many times over.
    const padded = answer.replace('"text":"', `"text":"${'lorem ipsum '.repeat(250)}`);
    const block = `${prompt}\n${padded}\n`.repeat(2000);
    const out = [lines.join('\n'), '\n'];
    for (let i = 0; i < 10; i += 1) out.push(block);
    writeFileSync(file!, out.join(''));
    const child = spawn(
      process.execPath,
      [CLI, 'history', 'import', '--workspace', org, '--claude-dir', root, '--data-dir', dataDir],
      {
        stdio: 'ignore',
      },
    );
    const exited = new Promise((resolve) => child.on('exit', resolve));
    // Kill it once some batches are committed: the journal grows with each.
    const started = Date.now();
    while (Date.now() - started < 60_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const journal = readdirSync(dataDir).filter((n) => n.startsWith('journal'));
      const bytes = journal.reduce((sum, n) => sum + statSync(join(dataDir, n)).size, 0);
      if (bytes > 20_000_000) break;
    }
    child.kill('SIGKILL');
    await exited;
    // What the store holds is exactly the file's messages up to the recorded offset.
    await withStore(dataDir, (repos) => {
      const [source] = repos.history.sources(org);
      const progress = repos.history.file(source!.id, file!);
      expect(progress).not.toBeNull();
      expect(progress!.offset).toBeLessThan(statSync(file!).size);
      const parser = createClaudeCodeHistoryParser();
      const prefix = readFileSync(file!).subarray(0, progress!.offset).toString('utf8');
      const expected = prefix
        .split('\n')
        .flatMap((l) => parser.line(l))
        .filter((e) => e.kind !== 'tasks' && e.kind !== 'run');
      expect(repos.sessions.find(progress!.sessionId!)!.messageCount).toBe(expected.length);
    });
    const done = await ok(historyIn(dataDir)('--workspace', org, '--claude-dir', root));
    expect(done).toMatch(/^claude-code: 1 sessions \(0 new, 1 updated\), 40,004 messages$/mu);
  }, 180_000);
});
