import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseRepoUrl } from '../../src-shared/repo-url.js';
import type { HistoryKind, Message, SessionStatus, Task } from '../../src-shared/sessions.js';
import type { Clock } from '../clock.js';
import type { EventBus } from '../events/event-bus.js';
import type { HistoryFileRecord, HistorySourceRecord } from '../store/history.js';
import type { Repositories } from '../store/repositories.js';
import type { Store } from '../store/store.js';
import { newSession } from '../sessions/new-session.js';
import { toSummary } from '../sessions/summary.js';
import { createClaudeCodeHistoryParser, subAgentParent } from './claude-code.js';
import { createCodexHistoryParser } from './codex.js';
import { fingerprintOf, readLines, startOffset } from './file-reader.js';
import { createGeminiHistoryParser } from './gemini.js';
import { readChatDocument } from './gemini-document.js';
import type { HistoryEvent, HistoryParser } from './history-events.js';

const run = promisify(execFile);

/**
 * A session is `active` while its file was written this recently: two minutes, or
 * SESSIONDESK_HISTORY_ACTIVE_WITHIN_MS (whole milliseconds), which lets a test see a file go
 * quiet without waiting for two minutes to pass.
 */
export const ACTIVE_WITHIN_MS = activeWithin(process.env.SESSIONDESK_HISTORY_ACTIVE_WITHIN_MS);

function activeWithin(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return 2 * 60_000;
  const ms = Number(value);
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new Error(
      `SESSIONDESK_HISTORY_ACTIVE_WITHIN_MS must be a whole number of milliseconds, not "${value}"`,
    );
  }
  return ms;
}

export interface HistoryDeps {
  store: Store;
  repos: Repositories;
  clock: Clock;
  /** The running server's live events; absent when the command opens the data directory itself. */
  events?: EventBus | undefined;
  /**
   * Sessions a run of Session Desk's own is resuming: that run's output is their record, so
   * what its CLI writes to their files meanwhile is not imported (see run-holds.ts).
   */
  holds?: ReadonlySet<string> | undefined;
}

/** One session file of a source: a sub-agent's file names its session's file and the call. */
interface SessionFile {
  path: string;
  /** A Claude Code sub-agent file: its session's own file, and the call that started it. */
  parent?: { path: string; toolUseId: string | undefined };
  /** The working folder the CLI recorded beside the file (Gemini CLI's `.project_root`). */
  cwd?: string;
  /** Gemini CLI's older chat file: one JSON document, rewritten whole (gemini-document.ts). */
  document?: boolean;
}

/** What importing one source did. */
export interface SourceCounts {
  sessions: number;
  newSessions: number;
  updatedSessions: number;
  messages: number;
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch {
    return [];
  }
}

/** The session files under a CLI's root folder, sessions before their sub-agents. */
export async function sessionFiles(kind: HistoryKind, rootDir: string): Promise<SessionFile[]> {
  const files: SessionFile[] = [];
  if (kind === 'claude-code') {
    const projects = join(rootDir, 'projects');
    for (const project of await listDir(projects)) {
      const dir = join(projects, project);
      for (const name of await listDir(dir)) {
        if (!name.endsWith('.jsonl')) continue;
        const path = join(dir, name);
        files.push({ path });
        const subagents = join(dir, name.slice(0, -'.jsonl'.length), 'subagents');
        for (const sub of await listDir(subagents)) {
          if (!sub.endsWith('.jsonl')) continue;
          const meta = join(subagents, sub.replace(/\.jsonl$/u, '.meta.json'));
          const toolUseId = existsSync(meta) ? subAgentParent(readFileSync(meta, 'utf8')) : undefined;
          files.push({ path: join(subagents, sub), parent: { path, toolUseId } });
        }
      }
    }
  } else if (kind === 'codex') {
    const walk = async (dir: string, depth: number): Promise<void> => {
      for (const name of await listDir(dir)) {
        const path = join(dir, name);
        if (depth < 3) await walk(path, depth + 1);
        else if (name.startsWith('rollout-') && name.endsWith('.jsonl')) files.push({ path });
      }
    };
    await walk(join(rootDir, 'sessions'), 0);
  } else {
    const tmp = join(rootDir, 'tmp');
    for (const project of await listDir(tmp)) {
      const rootFile = join(tmp, project, '.project_root');
      const cwd = existsSync(rootFile) ? readFileSync(rootFile, 'utf8').trim() : undefined;
      for (const name of await listDir(join(tmp, project, 'chats'))) {
        if (!name.startsWith('session-')) continue;
        const document = name.endsWith('.json');
        if (document || name.endsWith('.jsonl'))
          files.push({
            path: join(tmp, project, 'chats', name),
            ...(cwd ? { cwd } : {}),
            ...(document ? { document } : {}),
          });
      }
    }
  }
  return files;
}

function parserFor(kind: HistoryKind, file: SessionFile, state: string | undefined): HistoryParser {
  if (kind === 'codex') return createCodexHistoryParser(state);
  if (kind === 'gemini') return createGeminiHistoryParser(state);
  return createClaudeCodeHistoryParser(file.parent?.toolUseId, state);
}

/** `<owner>/<repo>` of the working folder's `origin` when it names one on a code host. */
async function repositoryOf(cwd: string | undefined): Promise<string | undefined> {
  if (!cwd || !existsSync(cwd)) return undefined;
  try {
    const { stdout } = await run('git', ['-C', cwd, 'config', '--get', 'remote.origin.url'], {
      timeout: 5000,
    });
    const url = stdout.trim().replace(/^git@([^:]+):(.+)$/u, 'https://$1/$2');
    return parseRepoUrl(url)?.repository;
  } catch {
    return undefined;
  }
}

export interface ImportOptions {
  /** Bytes of lines per store write (default: the reader's 4 MB). */
  batchBytes?: number;
  /** Following: note the source's import only when something changed. */
  quiet?: boolean;
  /** Only the files of this session, held or not (the others are left for the next scan). */
  only?: string;
  /**
   * With `only`: read what was appended without recording it (a run of ours already did),
   * so the file's offset and its parser's state move past it.
   */
  discard?: boolean;
  /**
   * Sessions whose files went quiet, to settle together once every file is read (a scan's one
   * write) rather than a write each: without it, each is settled as its file is read.
   */
  settle?: Settling[];
  /**
   * Following: the import stops between batches once `until` (a `Date.now()` time) has passed,
   * setting `stopped`; the next scan reads on from there. A scan of a large first import then
   * never keeps a line just appended to a session waiting behind it.
   */
  budget?: ScanBudget;
}

/** A scan's time: until when it reads, whether it read anything, whether it stopped early. */
export interface ScanBudget {
  until: number;
  stopped: boolean;
  /** Set once a batch is read: a scan always gets that far, however short its time. */
  read?: boolean;
}

/** A session shown active whose file has not been written for ACTIVE_WITHIN_MS. */
interface Settling {
  sessionId: string;
  failed: boolean;
}

/** Whether the parser state saved for a file says its CLI recorded an error end. */
function recordedFailure(file: HistoryFileRecord): boolean {
  try {
    return (JSON.parse(file.parserState ?? '{}') as { facts?: { failed?: boolean } }).facts?.failed === true;
  } catch {
    return false;
  }
}

/**
 * Sessions still shown active whose files went quiet turn completed (or failed), in one write:
 * a folder copied from another machine can make thousands of them at once.
 */
async function settleStatuses(deps: HistoryDeps, settling: Settling[]): Promise<void> {
  const due = settling.filter(
    // The run resuming a held session decides its status.
    ({ sessionId }) =>
      !deps.holds?.has(sessionId) && deps.repos.sessions.find(sessionId)?.status === 'active',
  );
  if (due.length === 0) return;
  const settled = await deps.store.write(() =>
    due.flatMap(({ sessionId, failed }) => {
      const row = deps.repos.sessions.find(sessionId);
      if (!row || row.status !== 'active') return [];
      const status: SessionStatus = failed ? 'failed' : 'completed';
      deps.repos.sessions.update(sessionId, { status }, row.updatedAt);
      deps.repos.history.setSessionFacts(sessionId, { updatedAt: row.updatedAt });
      return [sessionId];
    }),
  );
  for (const sessionId of settled) publish(deps, sessionId, false);
}

interface Pending {
  messages: { message: Message; authorId: string | null; at: string }[];
  tasks?: Task[];
  runs: { usage: Extract<HistoryEvent, { kind: 'run' }>; at: string }[];
  firstPrompt?: string;
}

function collect(pending: Pending, events: HistoryEvent[], at: string, authorId: string): void {
  for (const event of events) {
    switch (event.kind) {
      case 'prompt':
        pending.firstPrompt ??= event.text;
        pending.messages.push({ message: { type: 'user', message: { content: event.text } }, authorId, at });
        break;
      case 'assistant':
        pending.messages.push({
          message: {
            type: 'assistant',
            message: { content: event.content },
            ...(event.parentToolUseId ? { parent_tool_use_id: event.parentToolUseId } : {}),
          },
          authorId: null,
          at,
        });
        break;
      case 'notice':
        pending.messages.push({
          message: {
            type: 'assistant',
            message: { content: [{ type: 'text', text: event.text }] },
            notice: event.level,
          },
          authorId: null,
          at,
        });
        break;
      case 'result':
        pending.messages.push({ message: event.result, authorId: null, at });
        break;
      case 'tasks':
        pending.tasks = event.tasks;
        break;
      case 'run':
        pending.runs.push({ usage: event, at });
        break;
    }
  }
}

/**
 * Imports one session file from where the last import stopped. Each batch of lines is one store
 * write holding its messages, tasks, runs and the file's new offset and parser state, so what the
 * store holds is always a whole prefix of the file; a session is created in the write of its
 * file's first batch, so it never shows before its first messages. A file whose conversation a
 * session Session Desk ran already holds is only remembered. Returns whether a session was
 * created or grew.
 */
export async function importFile(
  deps: HistoryDeps,
  source: HistorySourceRecord,
  file: SessionFile,
  options: ImportOptions = {},
): Promise<'new' | 'updated' | 'unchanged'> {
  const { store, repos, clock } = deps;
  const info = await stat(file.path);
  const last = repos.history.file(source.id, file.path) ?? undefined;
  const owner = file.parent
    ? (repos.history.file(source.id, file.parent.path)?.sessionId ?? null)
    : (last?.sessionId ?? null);
  if (options.only !== undefined ? owner !== options.only : owner !== null && deps.holds?.has(owner))
    return 'unchanged';
  const discard = options.discard === true && options.only !== undefined;
  const stale = clock.now().getTime() - info.mtimeMs >= ACTIVE_WITHIN_MS;
  // A chat document's offset counts its messages: it is read whole whenever it changed.
  const readWhole = file.document === true || last?.offset === info.size;
  // Unchanged, and nothing left for the file's end to close: a run that was going on when the
  // file was last read (Gemini CLI's) ends once the file is quiet, by the read below, which
  // reads nothing new and closes it.
  const closes = () => stale && parserFor(source.kind, file, last?.parserState).flush().length > 0;
  if (last && last.size === info.size && last.mtimeMs === info.mtimeMs && readWhole && !closes()) {
    // A session still shown active turns completed (or failed) once its file is stale.
    if (stale && last.sessionId && !file.parent) {
      const settling = { sessionId: last.sessionId, failed: recordedFailure(last) };
      if (options.settle) options.settle.push(settling);
      else await settleStatuses(deps, [settling]);
    }
    return 'unchanged';
  }
  const chat = file.document ? await readChatDocument(file.path, stale) : null;
  // A chat document that does not parse yet is being rewritten: the next scan reads it.
  if (file.document && chat === null) return 'unchanged';
  let from = chat ? chat.resumeAt(last) : await startOffset(file.path, last);
  let sessionId = last?.sessionId ?? null;
  let state = from > 0 ? last?.parserState : undefined;
  if (last && from === 0 && last.offset > 0) {
    // Rewritten or shortened: read again into a session of its own, the old one stays as it was.
    sessionId = null;
    state = undefined;
  }
  if (file.parent) {
    const parentSession = repos.history.file(source.id, file.parent.path)?.sessionId ?? null;
    if (!parentSession) return 'unchanged';
    sessionId = parentSession;
  }
  const parser = parserFor(source.kind, file, state);
  const fingerprint = chat ? chat.fingerprint : await fingerprintOf(file.path);
  let outcome: 'new' | 'updated' | 'unchanged' = 'unchanged';
  // A file read before without a session of its own is either only remembered (a session Session
  // Desk ran holds its conversation) or had no message yet (a CLI writes its bookkeeping lines
  // first, and the file was read in between): that one is read on, into a session of its own.
  let skipped = false;
  if (last !== undefined && last.sessionId === null && last.offset > 0 && !file.parent) {
    const conversationId = parser.facts.conversationId;
    const holder = conversationId
      ? repos.history.sessionForConversation(source.workspaceId, conversationId)
      : null;
    skipped = holder !== null && !holder.imported;
  }
  const commit = async (lines: string[], end: number, final: boolean) => {
    const pending: Pending = { messages: [], runs: [] };
    for (const line of lines)
      collect(pending, parser.line(line), parser.facts.lastAt ?? clock.now().toISOString(), source.authorId);
    if (final && stale && !discard)
      collect(pending, parser.flush(), parser.facts.lastAt ?? clock.now().toISOString(), source.authorId);
    if (discard) {
      pending.messages = [];
      pending.runs = [];
      delete pending.tasks;
    }
    const facts = parser.facts;
    const repository = sessionId === null && !skipped ? await repositoryOf(facts.cwd ?? file.cwd) : undefined;
    const status: SessionStatus = !stale ? 'active' : facts.failed ? 'failed' : 'completed';
    const created = await store.write(() => {
      let isNew = false;
      if (sessionId === null && !skipped && facts.conversationId) {
        // Never twice: a session Session Desk ran holds this conversation, and its record wins.
        const holder = repos.history.sessionForConversation(source.workspaceId, facts.conversationId);
        if (holder && !holder.imported) skipped = true;
      }
      if (sessionId === null && !skipped && (pending.messages.length > 0 || pending.runs.length > 0)) {
        const session = newSession({
          workspaceId: source.workspaceId,
          authorId: source.authorId,
          title: facts.title,
          firstPrompt: pending.firstPrompt,
          model: facts.model ?? 'unknown',
          baseBranch: facts.branch,
          repository,
        });
        sessionId = session.id;
        repos.sessions.insert({ ...session, createdAt: facts.firstAt ?? clock.now().toISOString() });
        repos.history.setSessionSource(sessionId, {
          kind: source.kind,
          path: file.path,
          cwd: facts.cwd ?? file.cwd,
          conversationId: facts.conversationId,
        });
        isNew = true;
      }
      if (sessionId !== null && !skipped) {
        for (const m of pending.messages)
          repos.sessions.appendMessage(sessionId, source.workspaceId, m.message, m.authorId, m.at);
        if (pending.tasks) repos.sessions.replaceTasks(sessionId, pending.tasks);
        for (const r of pending.runs) {
          const { usage, costUsd } = r.usage;
          repos.sessions.recordRun(sessionId, source.workspaceId, {
            kind: source.kind,
            conversationId: facts.conversationId,
            usage: { ...usage, ...(costUsd === null ? {} : { costUsd }) },
            endedAt: r.at,
          });
        }
        if (!file.parent && !discard && !deps.holds?.has(sessionId)) {
          repos.history.setSessionFacts(sessionId, {
            createdAt: facts.firstAt,
            updatedAt: facts.lastAt,
            model: facts.model,
            title: facts.title,
            branch: facts.branch,
          });
          repos.sessions.update(sessionId, { status }, facts.lastAt ?? clock.now().toISOString());
          repos.history.setSessionFacts(sessionId, { updatedAt: facts.lastAt });
        }
      }
      const record: HistoryFileRecord = {
        sourceId: source.id,
        path: file.path,
        sessionId: skipped ? null : sessionId,
        offset: end,
        fingerprint,
        size: info.size,
        mtimeMs: info.mtimeMs,
        parserState: parser.state(),
      };
      repos.history.putFile(record);
      return isNew;
    });
    if (
      sessionId !== null &&
      !skipped &&
      (pending.messages.length > 0 || pending.runs.length > 0 || created)
    ) {
      outcome = outcome === 'new' || created ? 'new' : 'updated';
      publish(deps, sessionId, created);
    }
  };
  const batches = chat ? chat.batches(from) : readLines(file.path, from, options.batchBytes);
  for await (const batch of batches) {
    if (options.budget?.read && Date.now() >= options.budget.until) {
      // Out of time: this batch is read again by the next scan, which goes on from `from`.
      options.budget.stopped = true;
      return outcome;
    }
    from = batch.end;
    await commit(batch.lines, batch.end, false);
    if (options.budget) options.budget.read = true;
  }
  // The end for now: closes what only the file's end closes, and records status and size.
  await commit([], from, true);
  return outcome;
}

/**
 * The files in the order to read them: the sessions written most recently first (what the
 * person is working on now), each session's sub-agent files right after their parent's file.
 */
async function newestFirst(files: SessionFile[]): Promise<SessionFile[]> {
  const groups: { files: SessionFile[]; mtimeMs: number }[] = [];
  for (const file of files) {
    const mtimeMs = await stat(file.path).then(
      (info) => info.mtimeMs,
      () => 0,
    );
    const group = file.parent ? groups.at(-1) : undefined;
    if (group && group.files[0]?.path === file.parent?.path) {
      group.files.push(file);
      group.mtimeMs = Math.max(group.mtimeMs, mtimeMs);
    } else groups.push({ files: [file], mtimeMs });
  }
  return groups.sort((a, b) => b.mtimeMs - a.mtimeMs).flatMap((group) => group.files);
}

function publish(deps: HistoryDeps, sessionId: string, created: boolean): void {
  if (!deps.events) return;
  const row = deps.repos.sessions.find(sessionId);
  if (!row) return;
  deps.events.publish(row.workspaceId, {
    type: created ? 'session.created' : 'session.updated',
    sessionId,
    session: toSummary(row, 'both'),
  });
}

/** Imports of a source going on in this process: one at a time, or a file would be read twice. */
const sourceLocks = new Map<string, Promise<unknown>>();

/** Runs `work` once no other import of the source goes on (and holds the others off meanwhile). */
export function withSourceLock<T>(sourceId: string, work: () => Promise<T>): Promise<T> {
  const previous = sourceLocks.get(sourceId) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(work);
  sourceLocks.set(sourceId, next);
  void next
    .finally(() => {
      if (sourceLocks.get(sourceId) === next) sourceLocks.delete(sourceId);
    })
    .catch(() => undefined);
  return next;
}

/** Imports every file of a source from where the last import stopped. */
export function importSource(
  deps: HistoryDeps,
  source: HistorySourceRecord,
  options: ImportOptions = {},
): Promise<SourceCounts> {
  return withSourceLock(source.id, () => importSourceNow(deps, source, options));
}

async function importSourceNow(
  deps: HistoryDeps,
  source: HistorySourceRecord,
  options: ImportOptions,
): Promise<SourceCounts> {
  const counts: SourceCounts = { sessions: 0, newSessions: 0, updatedSessions: 0, messages: 0 };
  let changed = false;
  const settle: Settling[] = [];
  for (const file of await newestFirst(await sessionFiles(source.kind, source.rootDir))) {
    // Every scan reads at least a batch, however short its time: the files read whole are passed.
    if (options.budget?.read && Date.now() >= options.budget.until) {
      options.budget.stopped = true;
      break;
    }
    const outcome = await importFile(deps, source, file, { ...options, settle });
    if (outcome !== 'unchanged') changed = true;
    if (file.parent) continue;
    if (outcome === 'new') counts.newSessions += 1;
    else if (outcome === 'updated') counts.updatedSessions += 1;
  }
  await settleStatuses(deps, settle);
  // Following rescans often: it notes an import only when a file changed.
  if (changed || !options.quiet) {
    await deps.store.write(() => deps.repos.history.noteImport(source.id, deps.clock.now().toISOString()));
  }
  const after = deps.repos.history.source(source.id);
  counts.sessions = after?.sessionCount ?? 0;
  counts.messages = after?.messageCount ?? 0;
  return counts;
}

/** The default root of each CLI: its environment variable, else its folder in the home. */
export function defaultRoot(kind: HistoryKind, env: NodeJS.ProcessEnv, home: string): string {
  if (kind === 'claude-code') return env.CLAUDE_CONFIG_DIR || join(home, '.claude');
  if (kind === 'codex') return env.CODEX_HOME || join(home, '.codex');
  return join(home, '.gemini');
}
