import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parseRepoUrl } from '../../../src-shared/repo-url.js';
import type { ContinueIn } from '../../../src-shared/sessions.js';
import { conflict } from '../../errors.js';
import { rootOfSessionFile } from '../../history/run-holds.js';
import type { SessionService } from '../../sessions/service.js';
import type { Repositories } from '../../store/repositories.js';
import type { SessionRow } from '../../store/sessions.js';
import { createCliAgent } from '../kinds/cli/cli-agent.js';
import { personCliFolder } from '../kinds/cli/cli-homes.js';
import { isInside, realOf } from '../folders.js';
import { CLI_KIND_SPECS } from '../kinds/cli-kinds.js';
import { CLI_KINDS, type CliKind } from '../kinds/cli-kind-names.js';
import { createCliRunStore } from '../kinds/cli/cli-run-store.js';
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
function repoUrlOf(session: SessionRow): string | undefined {
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
      if (parsed && parsed.repository === session.repository) return parsed.url;
    } catch {
      // No origin any more: the repository's name is what is left.
    }
  }
  return session.repository ? `https://github.com/${session.repository}` : undefined;
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

/**
 * Decides how a follow-up to an imported session goes on, or refuses (409) saying why. The
 * session's own kind decides the CLI, whatever agent the workspace chose; `original` runs it in
 * the folder it ran in, `sandbox` in a fresh clone of its repository.
 */
export function planContinuation(
  session: SessionRow,
  where: ContinueIn | undefined,
  host: {
    /** The agents' allow-listed environment. */
    env: NodeJS.ProcessEnv;
    /** Agents never work in these: Session Desk's own data, and other sessions' sandboxes. */
    dataDir: string;
    sandboxRoot: string;
  },
): Continuation {
  const { env } = host;
  const source = session.source;
  if (!source) throw new Error(`${session.id} was not imported`);
  const kind = source.kind;
  const name = CLI_KIND_SPECS[kind].name;
  const folder = source.cwd ?? 'its working folder';
  const repository = session.repository
    ? `a fresh clone of ${session.repository}`
    : 'a fresh clone of its repository';
  if (where === undefined) {
    throw conflict(
      `This session was imported from ${name}'s own files${source.conversationId ? ` (conversation ${source.conversationId})` : ''}. ` +
        `Say where to continue it: "continueIn": "original" ` +
        `resumes the conversation with ${COMMANDS[kind]}'s own resume in ${folder}, your own work tree, where the ` +
        `agent may change files; "continueIn": "sandbox" resumes it in ${repository} in the session's sandbox.`,
    );
  }
  if (!source.conversationId) {
    throw conflict(`${name}'s file of this session names no conversation id, so there is nothing to resume.`);
  }
  const base = { where, kind, conversationId: source.conversationId, conversationFile: source.path };
  if (where === 'original') {
    if (!source.cwd)
      throw conflict(`${name} recorded no working folder for this session; continue it in a sandbox.`);
    if (!isFolder(source.cwd)) {
      throw conflict(
        `The folder ${source.cwd} this session ran in is gone; continue it in a sandbox (a fresh clone) instead.`,
      );
    }
    const refusal = originalFolderRefusal(
      source.cwd,
      [
        { path: host.dataDir, what: "Session Desk's data directory" },
        { path: host.sandboxRoot, what: "Session Desk's sandboxes" },
        ...CLI_KINDS.map((cli) => ({
          path: personCliFolder(cli, env),
          what: `${CLI_KIND_SPECS[cli].name}'s own folder`,
        })),
        {
          path: rootOfSessionFile(kind, source.path),
          what: `the ${name} folder this session was imported from`,
        },
      ],
      env.HOME,
    );
    if (refusal) throw conflict(`${refusal} Continue it in a sandbox (a fresh clone) instead.`);
    return { ...base, cwd: source.cwd };
  }
  const repoUrl = repoUrlOf(session);
  if (!repoUrl) {
    throw conflict(
      `This session has no repository to clone (its folder ${folder} had no origin on a code host); continue it in its original folder.`,
    );
  }
  return { ...base, repoUrl };
}

/**
 * The CLI of an imported session's own kind, whatever the workspace chose, resuming the
 * conversation from its file (or the one a run of ours continued it in since).
 */
export function createContinuationRunner(
  plan: Continuation,
  deps: {
    service: SessionService;
    repos: Repositories;
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
      previous(sessionId) {
        const own = runs.previous(sessionId);
        if (own.conversationId !== undefined) return own;
        return {
          conversationId: plan.conversationId,
          usageBefore: deps.repos.sessions.conversationUsage(sessionId, plan.conversationId),
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
