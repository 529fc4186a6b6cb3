import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parseRepoUrl } from '../../../src-shared/repo-url.js';
import { CLI_NAMES, type ContinueIn, type SessionSource } from '../../../src-shared/sessions.js';
import { conflict } from '../../errors.js';
import { rootOfSessionFile } from '../../history/run-holds.js';
import type { SessionService } from '../../sessions/service.js';
import type { Repos } from '../../store/storage.js';
import type { SessionRow } from '../../store/session-row.js';
import { createCliAgent } from '../kinds/cli/cli-agent.js';
import { personCliFolder } from '../kinds/cli/cli-homes.js';
import { isInside, realOf } from '../folders.js';
import { CLI_KIND_SPECS } from '../kinds/cli-kinds.js';
import { CLI_KINDS, isCliKind, type CliKind } from '../kinds/cli-kind-names.js';
import { createCliRunStore } from '../kinds/cli/cli-run-store.js';
import type { Located } from '../executables.js';
import { runProgram } from '../sandbox/session-folder.js';
import type { AgentRunner } from '../types.js';

/** Where and how a run resumes the conversation of a session imported from a CLI's files. */
export interface Continuation {
  where: ContinueIn;
  kind: CliKind;
  conversationId: string;
  /** `original`: the folder the CLI ran in, the person's own work tree. */
  cwd?: string;
  /** `sandbox`: the repository cloned into the session's sandbox. */
  repoUrl?: string;
  /** The conversation's file, copied into the session's CLI home, where the CLI resumes it. */
  conversationFile: string;
}

const COMMANDS: Record<CliKind, string> = {
  'claude-code': 'claude',
  codex: 'codex',
  gemini: 'gemini',
};

/** The folder is there and is a folder. */
function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The address to clone: the working folder's `origin` while it is still there and names
 * `<owner>/<repo>` on a host, else the repository on GitHub.
 */
function repoUrlOf(session: SessionRow, repository: string): string {
  const cwd = session.source?.cwd;
  if (cwd && isFolder(cwd)) {
    try {
      const origin = execFileSync('git', ['-C', cwd, 'config', '--get', 'remote.origin.url'], {
        encoding: 'utf8',
        timeout: 5000,
        stdio: ['ignore', 'pipe', 'ignore'],
      })
        .trim()
        .replace(/^git@([^:]+):(.+)$/u, 'https://$1/$2');
      const parsed = parseRepoUrl(origin);
      if (parsed && parsed.repository === repository) return parsed.url;
    } catch {
      // No origin any more: the repository's name is what is left.
    }
  }
  return `https://github.com/${repository}`;
}

/**
 * Why an agent may not work in a person's folder, or null. A continuation binds the folder
 * writable in the run's sandbox, so the folder must not be the whole file system, the home
 * folder or one holding it, nor hold (or lie in) Session Desk's own data or an agent CLI's
 * folder, where what an agent writes would run outside any sandbox later.
 */
export function originalFolderRefusal(
  folder: string,
  reserved: { path: string; what: string }[],
  home: string | undefined,
): string | null {
  const real = realOf(folder);
  if (real === '/' || (home !== undefined && isInside(realOf(home), real))) {
    return `The folder ${folder} this session ran in is ${real === '/' ? 'the root of the file system' : 'your home folder or holds it'}: an agent is never given all of it.`;
  }
  for (const { path, what } of reserved) {
    const other = realOf(path);
    if (isInside(real, other) || isInside(other, real)) {
      return `The folder ${folder} this session ran in ${isInside(real, other) ? 'lies in' : 'holds'} ${what} (${path}), where an agent never writes.`;
    }
  }
  return null;
}

/** What the checks of a continuation need of the agent host. */
export interface ContinuationHost {
  /** The agents' allow-listed environment. */
  env: NodeJS.ProcessEnv;
  /** Agents never work in these: Session Desk's own data, and other sessions' sandboxes. */
  dataDir: string;
  sandboxRoot: string;
  /** Where the CLI's program is, as a run finds it, or why it is not there. */
  locate: (kind: CliKind) => Located;
}

/** Why an imported session cannot go on one way, and the other way to suggest. */
interface Refusal {
  why: string;
  instead: string;
}

/** The conversation its CLI resumes here, or what keeps it from going on either way. */
function resumable(
  source: SessionSource,
  host: ContinuationHost,
): { conversationId: string } | { why: string } {
  const name = CLI_NAMES[source.kind];
  if (!isCliKind(source.kind)) {
    // Qwen Code and OpenCode run only as ACP agents here, and an ACP session is started afresh
    // by the agent: nothing resumes a conversation from the CLI's own history (OpenCode's is its
    // whole database, which a run would have to be given), so an imported one is read-only.
    const command = source.kind === 'opencode' ? 'opencode --session' : 'qwen --resume';
    const resume = source.conversationId ? ` (${command} ${source.conversationId})` : '';
    return {
      why: `Session Desk cannot continue a session imported from ${name}'s own history: it runs ${name} only through the Agent Client Protocol, which starts a new conversation. Resume it in ${name} itself${resume}, or start a new session.`,
    };
  }
  if (!source.conversationId) {
    return { why: `${name}'s file of this session names no conversation id, so there is nothing to resume.` };
  }
  const located = host.locate(source.kind);
  if (!located.found) return { why: `It goes on only with ${name}'s own resume: ${located.problem}` };
  return { conversationId: source.conversationId };
}

/** The person's folder it goes on in, or why it cannot. */
function originalFolder(source: SessionSource, host: ContinuationHost): { cwd: string } | Refusal {
  const name = CLI_NAMES[source.kind];
  const instead = 'Continue it in a sandbox (a fresh clone) instead.';
  if (!source.cwd) return { why: `${name} recorded no working folder for this session.`, instead };
  if (!isFolder(source.cwd)) {
    return {
      why: `The folder ${source.cwd} this session ran in is gone; it can go on there once the folder is back.`,
      instead,
    };
  }
  const refusal = originalFolderRefusal(
    source.cwd,
    [
      { path: host.dataDir, what: "Session Desk's data directory" },
      { path: host.sandboxRoot, what: "Session Desk's sandboxes" },
      ...CLI_KINDS.map((cli) => ({
        path: personCliFolder(cli, host.env),
        what: `${CLI_KIND_SPECS[cli].name}'s own folder`,
      })),
      {
        path: rootOfSessionFile(source.kind, source.path),
        what: `the ${name} folder this session was imported from`,
      },
    ],
    host.env.HOME,
  );
  return refusal ? { why: refusal, instead } : { cwd: source.cwd };
}

/**
 * The repository a fresh clone is made of, as recorded at the import (its address is asked of
 * the folder's git only when the clone is made), or why there is none.
 */
function cloneOf(session: SessionRow): { repository: string } | Refusal {
  if (session.repository) return { repository: session.repository };
  return {
    why: `This session has no repository to clone (its folder${session.source?.cwd ? ` ${session.source.cwd}` : ''} had no origin on a code host when it was imported).`,
    instead: 'Continue it in its original folder.',
  };
}

/**
 * Decides how a follow-up to an imported session goes on, or refuses (409) saying why. The
 * session's own kind decides the CLI, whatever agent the workspace chose; `original` runs it in
 * the folder it ran in, `sandbox` in a fresh clone of its repository.
 */
export function planContinuation(
  session: SessionRow,
  where: ContinueIn | undefined,
  host: ContinuationHost,
): Continuation {
  const source = session.source;
  if (!source) throw new Error(`${session.id} was not imported`);
  const kind = source.kind;
  if (!isCliKind(kind)) {
    const refused = resumable(source, host);
    throw conflict('why' in refused ? refused.why : `${CLI_NAMES[kind]} sessions cannot be continued here.`);
  }
  const name = CLI_KIND_SPECS[kind].name;
  if (where === undefined) {
    const folder = source.cwd ?? 'its working folder';
    const repository = session.repository
      ? `a fresh clone of ${session.repository}`
      : 'a fresh clone of its repository';
    throw conflict(
      `This session was imported from ${name}'s own files${source.conversationId ? ` (conversation ${source.conversationId})` : ''}. ` +
        `Say where to continue it: "continueIn": "original" ` +
        `resumes the conversation with ${COMMANDS[kind]}'s own resume in ${folder}, your own work tree, where the ` +
        `agent may change files; "continueIn": "sandbox" resumes it in ${repository} in the session's sandbox.`,
    );
  }
  const way = where === 'original' ? originalFolder(source, host) : cloneOf(session);
  if ('why' in way) throw conflict(`${way.why} ${way.instead}`);
  const conversation = resumable(source, host);
  if ('why' in conversation) throw conflict(conversation.why);
  return {
    where,
    kind,
    conversationId: conversation.conversationId,
    conversationFile: source.path,
    ...('repository' in way ? { repoUrl: repoUrlOf(session, way.repository) } : way),
  };
}

/** Which ways an imported session can go on here, and why not where it cannot (each alone). */
export function continuationChoices(
  session: SessionRow,
  host: ContinuationHost,
): { blocked: string | null; original: string | null; sandbox: string | null } {
  const source = session.source;
  if (!source) throw new Error(`${session.id} was not imported`);
  const conversation = resumable(source, host);
  const original = originalFolder(source, host);
  const sandbox = cloneOf(session);
  return {
    blocked: 'why' in conversation ? conversation.why : null,
    original: 'why' in original ? original.why : null,
    sandbox: 'why' in sandbox ? sandbox.why : null,
  };
}

/**
 * The CLI of an imported session's own kind, whatever the workspace chose, resuming the
 * conversation from its file (or the one a run of ours continued it in since).
 */
export function createContinuationRunner(
  plan: Continuation,
  deps: {
    service: SessionService;
    repos: Repos;
    /** The agents' allow-listed environment. */
    env: NodeJS.ProcessEnv;
    lookupEnv: NodeJS.ProcessEnv;
    timeoutMs: number;
  },
): AgentRunner {
  const runs = createCliRunStore(plan.kind, deps.service, deps.repos);
  return createCliAgent({
    spec: CLI_KIND_SPECS[plan.kind],
    env: deps.env,
    conversationFile: plan.conversationFile,
    lookupEnv: deps.lookupEnv,
    timeoutMs: deps.timeoutMs,
    runs: {
      ...runs,
      async previous(sessionId) {
        const own = await runs.previous(sessionId);
        if (own.conversationId !== undefined) return own;
        return {
          conversationId: plan.conversationId,
          usageBefore: await deps.repos.sessions.conversationUsage(sessionId, plan.conversationId),
        };
      },
    },
  });
}

/**
 * The branch a sandbox clones for an imported session: the one the CLI recorded when the
 * repository has it (a branch only in the person's own clone is not there), else the
 * repository's default branch. Asked of git (`ls-remote`, the agents' git configuration).
 */
export async function branchToClone(
  repoUrl: string,
  recorded: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  try {
    const heads = await runProgram(
      'git',
      ['ls-remote', '--symref', '--', repoUrl, 'HEAD', `refs/heads/${recorded}`],
      { cwd: tmpdir(), env: { ...env, GIT_TERMINAL_PROMPT: '0' } },
    );
    if (heads.code !== 0) return recorded; // The clone says what is wrong, in git's words.
    const lines = heads.stdout.split('\n');
    if (lines.some((line) => line.endsWith(`\trefs/heads/${recorded}`))) return recorded;
    const head = /^ref: refs\/heads\/(\S+)\tHEAD$/mu.exec(heads.stdout);
    return head?.[1] ?? recorded;
  } catch {
    return recorded;
  }
}
