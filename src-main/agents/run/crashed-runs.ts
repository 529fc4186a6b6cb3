/**
 * What a restart does about the runs the server's last stop cut off: their orphaned processes
 * ended, their sessions closed off as failed (open tool calls answered, the usage their CLIs
 * logged recorded), and the runs that waited for a place handed back to be queued again. Apart
 * from the agent host because it runs once, before any run of this server starts, on nothing
 * but what the last one left in the store and on disk.
 */
import type { AssistantMessage, Message, Usage } from '../../../src-shared/sessions.js';
import type { Logger } from '../../clock.js';
import type { SessionService } from '../../sessions/service.js';
import { readMessagePage, settledRow, type TranscriptReads } from '../../sessions/transcript-reads.js';
import type { Repos } from '../../store/storage.js';
import type { AgentProcess, QueuedRun } from '../../store/runs.js';
import type { RunLeases } from './leases.js';
import { OpenToolCalls } from '../agent-events.js';
import { roundedUsage } from '../kinds/cli/cli-agent.js';
import { cliHomeEnv } from '../kinds/cli/cli-homes.js';
import { CLI_KIND_SPECS } from '../kinds/cli-kinds.js';
import { isCliKind } from '../kinds/cli-kind-names.js';
import { endOrphans } from '../process/orphans.js';
import { resultMessage } from '../types.js';

/** What the recovery reads, writes and asks of the agent host. */
export interface RecoveryDeps {
  service: SessionService;
  repos: Repos;
  /** Where a crashed run's transcript is read from. */
  transcripts: TranscriptReads;
  logger: Logger;
  /** A session's own folder, where processes its run left may still be working. */
  sandboxOf: (sessionId: string) => string;
  /** The session's home for its CLIs' state, where their session files are. */
  cliHomeOf: (sessionId: string) => string;
  /** The environment agents run with. */
  agentEnvironment: () => NodeJS.ProcessEnv;
  /** Reads an imported session's file again, and follows it again. */
  releaseFile: (sessionId: string) => Promise<void>;
  /** Which runs are this process's to recover: those whose lease it takes (leases.ts). */
  leases: RunLeases;
  /** Runs going on or waiting in this very process: never recovered. */
  isActive: (sessionId: string) => boolean;
}

export interface Recovered {
  /** How many sessions were marked failed. */
  marked: number;
  /** Those sessions. */
  failed: string[];
  /** The runs that waited for a place and still do, in their order, for the queue. */
  queued: QueuedRun[];
}

/**
 * After a restart: the process groups of runs a crash cut off, still running, are ended
 * (only those verified to be theirs); then sessions whose agent was cut off are marked
 * failed, with a result message saying so (after error results for the tool calls the run
 * left open), and the queued runs that still stand are returned, in order, to be queued again.
 */
export async function recoverInterrupted(deps: RecoveryDeps): Promise<Recovered> {
  const { repos, service, leases } = deps;
  // Another process's runs are its own while it lives (it holds their leases); a lease this
  // process holds already is a run of its own about to start.
  const ours = async (id: string) => !deps.isActive(id) && (await leases.take(id)) === 'acquired';
  /** Whether a session whose lease was just taken is still in that state and long unchanged. */
  const stillLeft = async (id: string, state: 'running' | 'queued') => {
    const row = await repos.sessions.find(id);
    const quiet = row !== null && Date.now() - Date.parse(row.updatedAt) >= leases.quietForMs;
    if ((await repos.sessions.agentState(id)) === state && quiet) return true;
    // A run that ended meanwhile, or a session a process is about to take: not a crash.
    await leases.release(id);
    return false;
  };
  const ids: string[] = [];
  for (const id of await repos.sessions.runningIds()) {
    if ((await ours(id)) && (await stillLeft(id, 'running'))) ids.push(id);
  }
  // The process groups those runs left, and any left by a session no longer marked running.
  const crashed = new Set(ids);
  const orphans: AgentProcess[] = [];
  const strays: string[] = [];
  for (const p of await repos.runs.processes()) {
    if (crashed.has(p.sessionId)) orphans.push(p);
    else if (await ours(p.sessionId)) {
      orphans.push(p);
      strays.push(p.sessionId);
    }
  }
  const ended = await endOrphans(orphans, deps.logger, deps.sandboxOf);
  await service.forgetProcesses(orphans.map((p) => p.sessionId));
  for (const id of strays) await leases.release(id);
  for (const id of ids) {
    const run = await lastRun(deps.transcripts, id);
    for (const closing of unfinishedToolResults(run)) await service.appendMessage(id, closing, null);
    const text = ended.has(id)
      ? 'Session Desk stopped unexpectedly while the agent was running; the agent, still running, was ended. Send a follow-up to resume.'
      : 'Session Desk stopped while the agent was running; send a follow-up to resume.';
    const result = resultMessage(false, text, 0, 0);
    const usage = await recordCrashedUsage(deps, id, run);
    if (usage) result.usage = usage;
    await service.finish(id, result, 'failed');
    // A continuation of an imported session: what its CLI wrote to the session's file is in
    // the transcript as the run printed it, so the file is read past it, not imported again.
    if ((await repos.sessions.find(id))?.source) await deps.releaseFile(id);
    await leases.release(id);
  }
  const queued: QueuedRun[] = [];
  for (const waiting of await repos.runs.queued()) {
    if (!(await ours(waiting.sessionId)) || !(await stillLeft(waiting.sessionId, 'queued'))) continue;
    if (waiting.mode === 'follow-up' && (await repos.sessions.find(waiting.sessionId))?.source) {
      // Where to continue an imported session was chosen for that follow-up and not kept; the
      // continuation never started, so the session keeps the status its import gave.
      await service.finish(
        waiting.sessionId,
        resultMessage(
          false,
          'Session Desk restarted while this follow-up waited for a place; send it again, choosing where to continue.',
          0,
          0,
        ),
        waiting.statusBefore ?? 'failed',
      );
      await leases.release(waiting.sessionId);
      continue;
    }
    queued.push(waiting);
  }
  return { marked: ids.length, failed: ids, queued };
}

/**
 * What a run a crash cut off used, as its CLI logged it in its own session file (what it
 * printed went with the server): recorded as the run's, and returned for its result.
 */
async function recordCrashedUsage(deps: RecoveryDeps, id: string, run: LastRun): Promise<Usage | undefined> {
  const { repos, service } = deps;
  const conversation = await repos.sessions.conversation(id);
  const { prompt } = run;
  if (!conversation || !isCliKind(conversation.kind) || prompt === undefined) return undefined;
  const { loggedUsage } = CLI_KIND_SPECS[conversation.kind];
  if (!loggedUsage) return undefined;
  // An imported session's conversation is its own file (the run saw it in the session's home).
  const source = (await repos.sessions.find(id))?.source;
  const file = source?.conversationId === conversation.id ? source.path : undefined;
  const read = (env: NodeJS.ProcessEnv) =>
    loggedUsage({
      env,
      file,
      conversationId: conversation.id,
      prompt,
    }).catch(() => null);
  // A run of an earlier version kept its files in the person's own folders.
  const env = deps.agentEnvironment();
  const logged = (await read({ ...env, ...cliHomeEnv(deps.cliHomeOf(id)) })) ?? (await read(env));
  if (!logged || (logged.inputTokens === 0 && logged.outputTokens === 0)) return undefined;
  const usage = roundedUsage(logged);
  await service.recordRun(id, { kind: conversation.kind, conversationId: conversation.id, usage });
  return usage;
}

/** Messages read at a time, from the end, looking for where the last run started. */
const WINDOW = 200;

/** A session's last run as its transcript holds it: its prompt, and its messages since. */
interface LastRun {
  /** The person's message the run answered; none when no prompt follows the last result. */
  prompt?: string;
  messages: Message[];
}

/**
 * A session's last run: the messages after its last prompt or result. Read from the end, a
 * window at a time, so a long transcript is not read whole.
 */
async function lastRun(source: TranscriptReads, sessionId: string): Promise<LastRun> {
  const row = await settledRow(source, sessionId);
  if (!row) return { messages: [] };
  let tail: Message[] = [];
  for (let end = row.messageCount; end > 0;) {
    const from = Math.max(0, end - WINDOW);
    const page = await readMessagePage(source, row, from, end - from, Infinity);
    const messages = page.messages.map((bytes) => JSON.parse(bytes.toString('utf8')) as Message);
    tail = [...messages, ...tail];
    end = from;
    const start = messages.findLastIndex((m) => m.type === 'user' || m.type === 'result');
    if (start < 0) continue;
    const first = messages[start];
    const run = { messages: tail.slice(start + 1) };
    return first?.type === 'user' ? { prompt: first.message.content, ...run } : run;
  }
  return { messages: tail };
}

/**
 * Error results for the tool calls a run cut off by a crash of the server left open, one
 * message per parent, as a run's own end gives them; none when every call has its result.
 */
function unfinishedToolResults(run: LastRun): AssistantMessage[] {
  const open = new OpenToolCalls();
  for (const message of run.messages) {
    if (message.type !== 'assistant') continue;
    for (const block of message.message.content) {
      if (block.type === 'tool_use') open.opened(block.id, message.parent_tool_use_id ?? undefined);
      else if (block.type === 'tool_result') open.closed(block.tool_use_id);
    }
  }
  return open.closeAll().flatMap((event) => {
    if (event.kind !== 'assistant') return [];
    const closing: AssistantMessage = { type: 'assistant', message: { content: event.content } };
    if (event.parentToolUseId !== undefined) closing.parent_tool_use_id = event.parentToolUseId;
    return [closing];
  });
}
