import { execFile } from 'node:child_process';
import type { Stats } from 'node:fs';
import { lstat, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseRepoUrl } from '../../src-shared/repo-url.js';
import type { HistoryKind, SessionStatus } from '../../src-shared/sessions.js';
import type { HistoryFileRecord, HistorySourceRecord } from '../store/history.js';
import { newSession } from '../sessions/new-session.js';
import { normalTimestamp } from '../sessions/timestamps.js';
import { createClaudeCodeHistoryParser, subAgentParent } from './claude-code.js';
import { createCodexHistoryParser } from './codex.js';
import { fingerprintOf, readLines, startOffset } from './file-reader.js';
import type { HistoryDeps } from './history-deps.js';
import { createGeminiHistoryParser } from './gemini.js';
import { createOpencodeHistoryParser } from './opencode.js';
import { chatOf, storedExtent, type SessionExtent } from './opencode-store.js';
import { plainNotice, type HistoryEvent, type HistoryParser } from './history-events.js';
import { createQwenCodeHistoryParser } from './qwen-code.js';
import { appendRead, collect, type Pending } from './pending-writes.js';
import { entryKind, ONLY_REGULAR, openRegularFile, SkippedEntry } from './safe-files.js';
import { sessionFiles, sideFile, Skips, type SessionFile } from './session-files.js';
import { publish, recordedFailure, settleStatuses, type Settling } from './session-updates.js';
import { importedAgent } from '../store/imported-agent.js';
import { SLICE_CHARS, slicedPayload } from '../store/sliced-payload.js';
import { messagePayload } from '../store/transcript-format.js';
import { storedFacts, storedFolder } from './stored-values.js';
import { IMPORT_TURN_MS, Turns } from '../turns.js';

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

/** What importing one source did, and what of its folder it did not read (and why). */
export interface SourceCounts {
  sessions: number;
  newSessions: number;
  updatedSessions: number;
  messages: number;
  skipped: { path: string; reason: string }[];
  skippedCount: number;
}

/** The parser of a file; a Claude Code sub-agent's marks its content with the call that started it. */
function parserFor(kind: HistoryKind, state: string | undefined, toolUseId?: string): HistoryParser {
  if (kind === 'codex') return createCodexHistoryParser(state);
  if (kind === 'gemini') return createGeminiHistoryParser(state);
  if (kind === 'qwen-code') return createQwenCodeHistoryParser(state);
  if (kind === 'opencode') return createOpencodeHistoryParser(state);
  return createClaudeCodeHistoryParser(toolUseId, state);
}

/** A line's events; a line its parser fails on (a shape not foreseen) is kept as it is, as a notice. */
function readLine(parser: HistoryParser, line: string): HistoryEvent[] {
  try {
    return parser.line(line);
  } catch {
    return plainNotice(line);
  }
}

/** `<owner>/<repo>` of the working folder's `origin` when it names one on a code host. */
async function repositoryOf(cwd: string | undefined): Promise<string | undefined> {
  if (
    !cwd ||
    !(await stat(cwd).then(
      (info) => info.isDirectory(),
      () => false,
    ))
  )
    return undefined;
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
  /** Where the files not read (links, pipes, unreadable) are noted for the report. */
  skips?: Skips;
  /**
   * The file's lstat as the scan found it when ordering the files (null: gone since it was
   * listed), so that a scan stats each file once; without it, the file is stat'ed here.
   */
  listed?: Stats | null;
  /**
   * How long a read holds the event loop before it hands over a turn (default IMPORT_TURN_MS):
   * between lines, and between parsing a batch and writing it. One line's parse, or one
   * batch's write, is not cut.
   */
  turnMs?: number;
}

/** A scan's time: until when it reads, whether it read anything, whether it stopped early. */
export interface ScanBudget {
  until: number;
  stopped: boolean;
  /** Set once a batch is read: a scan always gets that far, however short its time. */
  read?: boolean;
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
  const { clock } = deps;
  const { repos } = deps.storage;
  // Only what a file's size and time say; its content is read only through the checked handle.
  const info = file.database
    ? await storedExtent(source.rootDir, file.database.sessionId, options.skips)
    : options.listed !== undefined
      ? options.listed
      : await lstatIfThere(file.path);
  if (!info) return 'unchanged';
  if (!file.database && !(info as Stats).isFile()) {
    options.skips?.add(file.path, `${entryKind(info as Stats)}: ${ONLY_REGULAR}`);
    return 'unchanged';
  }
  const last = (await repos.history.file(source.id, file.path)) ?? undefined;
  const owner = file.parent
    ? ((await repos.history.file(source.id, file.parent.path))?.sessionId ?? null)
    : (last?.sessionId ?? null);
  if (options.only !== undefined ? owner !== options.only : owner !== null && deps.holds?.has(owner))
    return 'unchanged';
  const stale = clock.now().getTime() - info.mtimeMs >= ACTIVE_WITHIN_MS;
  // A chat document's offset counts its messages: it is read whole whenever it changed.
  const readWhole = file.document === true || file.database !== undefined || last?.offset === info.size;
  // Unchanged, and nothing left for the file's end to close: a run that was going on when the
  // file was last read (Gemini CLI's) ends once the file is quiet, by the read below, which
  // reads nothing new and closes it.
  const closes = () => stale && parserFor(source.kind, last?.parserState).flush().length > 0;
  if (last && last.size === info.size && last.mtimeMs === info.mtimeMs && readWhole && !closes()) {
    // A session still shown active turns completed (or failed) once its file is stale.
    if (stale && last.sessionId && !file.parent) {
      const settling = { sessionId: last.sessionId, failed: recordedFailure(last) };
      if (options.settle) options.settle.push(settling);
      else await settleStatuses(deps, [settling]);
    }
    return 'unchanged';
  }
  if (file.database) return readFile(deps, source, file, info, { ...options, last, stale });
  let handle: FileHandle;
  try {
    handle = await openRegularFile(source.rootDir, file.path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'unchanged';
    // One file that cannot be read is noted; the others are read.
    if (err instanceof SkippedEntry) options.skips?.add(err.path, err.reason);
    else options.skips?.add(file.path, `it cannot be read: ${(err as Error).message}`);
    return 'unchanged';
  }
  try {
    return await readFile(deps, source, file, handle, { ...options, last, stale });
  } finally {
    await handle.close();
  }
}

/** importFile's reading of a file it opened, from where the last read stopped. */
async function readFile(
  deps: HistoryDeps,
  source: HistorySourceRecord,
  file: SessionFile,
  opened: FileHandle | SessionExtent,
  options: ImportOptions & { last: HistoryFileRecord | undefined; stale: boolean },
): Promise<'new' | 'updated' | 'unchanged'> {
  const { storage, clock } = deps;
  const { repos } = storage;
  const { last, stale } = options;
  const handle = 'fd' in opened ? opened : null;
  const info = handle ? await handle.stat() : (opened as SessionExtent);
  const discard = options.discard === true && options.only !== undefined;
  const chat = await chatOf(source.rootDir, file, handle, info.size, stale, options.skips);
  // A chat document that does not parse yet is being rewritten: the next scan reads it.
  if ((file.document || file.database) && chat === null) return 'unchanged';
  let from = chat ? chat.resumeAt(last) : await startOffset(handle!, info.size, last);
  let sessionId = last?.sessionId ?? null;
  let state = from > 0 ? last?.parserState : undefined;
  if (last && from === 0 && last.offset > 0) {
    // Rewritten or shortened: read again into a session of its own, the old one stays as it was.
    sessionId = null;
    state = undefined;
  }
  if (file.parent) {
    const parentSession = (await repos.history.file(source.id, file.parent.path))?.sessionId ?? null;
    if (!parentSession) return 'unchanged';
    sessionId = parentSession;
  }
  const meta = file.parent && (await sideFile(source.rootDir, file.parent.meta, options.skips));
  const parser = parserFor(source.kind, state, meta ? subAgentParent(meta) : undefined);
  const marker = file.marker && (await sideFile(source.rootDir, file.marker, options.skips));
  const fingerprint = chat ? chat.fingerprint : await fingerprintOf(handle!);
  let outcome: 'new' | 'updated' | 'unchanged' = 'unchanged';
  // A file read before without a session of its own is either only remembered (a session Session
  // Desk ran holds its conversation) or had no message yet (a CLI writes its bookkeeping lines
  // first, and the file was read in between): that one is read on, into a session of its own.
  let skipped = false;
  if (last !== undefined && last.sessionId === null && last.offset > 0 && !file.parent) {
    const conversationId = storedFacts(parser.facts).conversationId;
    const holder = conversationId
      ? await repos.history.sessionForConversation(source.workspaceId, conversationId)
      : null;
    skipped = holder !== null && !holder.imported;
  }
  // A file's lines arrive a MB at a time and a line may be MBs: the reading of them is cut into
  // turns, or a batch of large tool output would hold every request behind it (bench:history).
  const turns = new Turns(options.turnMs ?? IMPORT_TURN_MS);
  const commit = async (lines: string[], end: number, final: boolean) => {
    const pending: Pending = { messages: [], runs: [] };
    const at = () => normalTimestamp(parser.facts.lastAt) ?? clock.now().toISOString();
    for (const line of lines) {
      await turns.pause();
      collect(pending, readLine(parser, line), at(), source.authorId);
    }
    if (final && stale && !discard) collect(pending, parser.flush(), at(), source.authorId);
    if (discard) {
      pending.messages = [];
      pending.runs = [];
      delete pending.tasks;
    }
    // Encoded between turns, not in the write: a large tool output's JSON takes tens of ms, and
    // one in a line longer than a slice is encoded a slice at a time.
    const sliced = lines.some((line) => line.length > SLICE_CHARS);
    for (const m of pending.messages) {
      await turns.pause();
      m.payload = sliced ? await slicedPayload(m.message, () => turns.pause()) : messagePayload(m.message);
    }
    // Every value the file gave is put in the API's form, or left out, before it is stored.
    const facts = storedFacts(parser.facts);
    const cwd = facts.cwd ?? storedFolder(marker?.trim());
    const repository = sessionId === null && !skipped ? await repositoryOf(cwd) : undefined;
    const status: SessionStatus = !stale ? 'active' : facts.failed ? 'failed' : 'completed';
    await turns.pause();
    const created = await storage.write(async (tx) => {
      let isNew = false;
      if (sessionId === null && !skipped && facts.conversationId) {
        // Never twice: a session Session Desk ran holds this conversation, and its record wins.
        const holder = await tx.history.sessionForConversation(source.workspaceId, facts.conversationId);
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
        await tx.sessions.insert({ ...session, createdAt: facts.firstAt ?? clock.now().toISOString() });
        await tx.history.setSessionSource(sessionId, {
          kind: source.kind,
          path: file.path,
          cwd,
          conversationId: facts.conversationId,
        });
        isNew = true;
      }
      if (sessionId !== null && !skipped) {
        for (const m of pending.messages) await appendRead(tx, sessionId, source.workspaceId, m);
        if (pending.tasks) await tx.sessions.replaceTasks(sessionId, pending.tasks);
        for (const r of pending.runs) {
          const { usage, costUsd, model } = r.usage;
          await tx.sessions.recordRun(sessionId, source.workspaceId, {
            kind: importedAgent(source.kind).agent,
            conversationId: facts.conversationId,
            usage: { ...usage, ...(costUsd === null ? {} : { costUsd }) },
            model,
            endedAt: r.at,
          });
        }
        if (!file.parent && !discard && !deps.holds?.has(sessionId)) {
          await tx.history.setSessionFacts(sessionId, {
            createdAt: facts.firstAt,
            updatedAt: facts.lastAt,
            model: facts.model,
            title: facts.title,
            branch: facts.branch,
          });
          await tx.sessions.update(sessionId, { status }, facts.lastAt ?? clock.now().toISOString());
          await tx.history.setSessionFacts(sessionId, { updatedAt: facts.lastAt });
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
      await tx.history.putFile(record);
      return isNew;
    });
    if (
      sessionId !== null &&
      !skipped &&
      (pending.messages.length > 0 || pending.runs.length > 0 || created)
    ) {
      outcome = outcome === 'new' || created ? 'new' : 'updated';
      await publish(deps, sessionId, created);
    }
  };
  const batches = chat
    ? chat.batches(from)
    : readLines(handle!, from, options.batchBytes, parser.unreadPrefixes);
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

/** A session file as a scan listed it, with its lstat then (undefined: it could not be stat'ed). */
interface Listed {
  file: SessionFile;
  info: Stats | null | undefined;
}

/** A file's lstat, or null when it is gone (since its folder was listed). */
function lstatIfThere(path: string): Promise<Stats | null> {
  return lstat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
}

/**
 * The files in the order to read them: the sessions written most recently first (what the
 * person is working on now), each session's sub-agent files right after their parent's file.
 */
async function newestFirst(files: SessionFile[]): Promise<Listed[]> {
  const groups: { files: Listed[]; mtimeMs: number }[] = [];
  for (const file of files) {
    // Kept for importFile: a scan at rest (every file unchanged) costs one lstat a file.
    const info = await lstatIfThere(file.path).catch(() => undefined);
    const listed: Listed = { file, info };
    const mtimeMs = info?.mtimeMs ?? 0;
    const group = file.parent ? groups.at(-1) : undefined;
    if (group && group.files[0]?.file.path === file.parent?.path) {
      group.files.push(listed);
      group.mtimeMs = Math.max(group.mtimeMs, mtimeMs);
    } else groups.push({ files: [listed], mtimeMs });
  }
  return groups.sort((a, b) => b.mtimeMs - a.mtimeMs).flatMap((group) => group.files);
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
  let changed = false;
  const settle: Settling[] = [];
  const skips = new Skips(source.rootDir);
  const counts = { newSessions: 0, updatedSessions: 0 };
  // A file found unchanged costs no I/O, only store lookups that answer at once: a scan of
  // thousands of them would hold the event loop for one long turn (bench:history) without these.
  const turns = new Turns(options.turnMs ?? IMPORT_TURN_MS);
  for (const { file, info } of await newestFirst(await sessionFiles(source.kind, source.rootDir, skips))) {
    await turns.pause();
    // Every scan reads at least a batch, however short its time: the files read whole are passed.
    if (options.budget?.read && Date.now() >= options.budget.until) {
      options.budget.stopped = true;
      break;
    }
    const outcome = await importFile(deps, source, file, {
      ...options,
      settle,
      skips,
      ...(info === undefined ? {} : { listed: info }),
    });
    if (outcome !== 'unchanged') changed = true;
    if (file.parent) continue;
    if (outcome === 'new') counts.newSessions += 1;
    else if (outcome === 'updated') counts.updatedSessions += 1;
  }
  await settleStatuses(deps, settle, options.turnMs);
  // Following rescans often: it notes an import only when a file changed.
  if (changed || !options.quiet) {
    await deps.storage.write((tx) => tx.history.noteImport(source.id, deps.clock.now().toISOString()));
  }
  const after = await deps.storage.repos.history.source(source.id);
  return {
    ...counts,
    sessions: after?.sessionCount ?? 0,
    messages: after?.messageCount ?? 0,
    skipped: skips.named,
    skippedCount: skips.count,
  };
}

/** The default root of each CLI: its environment variable, else its folder in the home. */
export function defaultRoot(kind: HistoryKind, env: NodeJS.ProcessEnv, home: string): string {
  if (kind === 'claude-code') return env.CLAUDE_CONFIG_DIR || join(home, '.claude');
  // Qwen Code writes its chats under its runtime folder: QWEN_RUNTIME_DIR, else its own folder,
  // QWEN_HOME, else ~/.qwen (Storage.getRuntimeBaseDir / getGlobalQwenDir in its bundle).
  if (kind === 'qwen-code') return env.QWEN_RUNTIME_DIR || env.QWEN_HOME || join(home, '.qwen');
  if (kind === 'codex') return env.CODEX_HOME || join(home, '.codex');
  if (kind === 'opencode') return join(env.XDG_DATA_HOME || join(home, '.local', 'share'), 'opencode');
  return join(home, '.gemini');
}
