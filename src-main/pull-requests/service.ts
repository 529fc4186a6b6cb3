import type { OpenPullRequestBody, PullRequest } from '../../src-shared/pull-requests.js';
import { PR_BODY_MAX_CHARS } from '../../src-shared/pull-requests.js';
import type { Task } from '../../src-shared/sessions.js';
import type { AgentHost } from '../agents/run/host.js';
import { sandboxPath } from '../agents/sandbox/session-folder.js';
import type { Logger } from '../clock.js';
import { DEMO } from '../demo/people.js';
import { conflict } from '../errors.js';
import type { SessionService } from '../sessions/service.js';
import type { Repos } from '../store/storage.js';
import type { SessionRow } from '../store/session-row.js';
import { ghAvailability, signedInGh, type PullRequestState } from './gh.js';
import { checkBranchToPush, pushBranch } from './git.js';
import { belongsToRepository, isGitHubRepository, pullRequestsIn } from './urls.js';

export interface PullRequestOutcome {
  row: SessionRow;
  pullRequest: PullRequest;
  /** False when the session already had it (or GitHub already had one for the branch). */
  created: boolean;
}

const TASK_MARK: Record<Task['status'], string> = { completed: 'x', in_progress: ' ', pending: ' ' };

/** The default description: the prompt that started the session, and its tasks as a checklist. */
export function defaultBody(firstPrompt: string | undefined, tasks: Task[], sessionId: string): string {
  const parts: string[] = [];
  if (firstPrompt !== undefined)
    parts.push(
      firstPrompt
        .split('\n')
        .map((line) => `> ${line}`)
        .join('\n'),
    );
  if (tasks.length > 0) parts.push(tasks.map((t) => `- [${TASK_MARK[t.status]}] ${t.title}`).join('\n'));
  const footer = `Opened from Session Desk (session ${sessionId}).`;
  const text = parts.join('\n\n');
  const room = PR_BODY_MAX_CHARS - footer.length - 10;
  return `${text.length > room ? `${text.slice(0, room)}\n\n…` : text}${text ? '\n\n' : ''}${footer}`;
}

/**
 * Opening and refreshing a session's pull request through git and the GitHub CLI. The push
 * and the pull request are made with the credentials of the user running Session Desk.
 */
export function createPullRequests(deps: {
  service: SessionService;
  repos: Repos;
  agents: AgentHost;
  /** The server's environment: where gh is found and signed in. */
  serverEnv: NodeJS.ProcessEnv;
  logger: Logger;
}) {
  const { service, repos, agents, logger } = deps;
  /** One action per session at a time: a second click while one runs gets its answer. */
  const inFlight = new Map<string, Promise<PullRequestOutcome>>();

  async function recorded(id: string): Promise<{ row: SessionRow; pullRequest: PullRequest } | null> {
    const row = await repos.sessions.find(id);
    if (!row || row.prNumber === undefined || row.prUrl === undefined) return null;
    const mergedAt = row.prStatus === 'merged' ? await repos.sessions.pullRequestMergedAt(id) : undefined;
    return {
      row,
      pullRequest: {
        number: row.prNumber,
        url: row.prUrl,
        status: row.prStatus ?? 'open',
        ...(mergedAt ? { mergedAt } : {}),
      },
    };
  }

  async function record(id: string, state: PullRequestState, created: boolean): Promise<PullRequestOutcome> {
    await service.updatePullRequest(id, state);
    const now = await recorded(id);
    if (!now) throw new Error(`session ${id} vanished`);
    return { ...now, created };
  }

  function refuseDemo(row: SessionRow): void {
    if (row.workspaceId === DEMO.organizationId || row.agentKind === 'demo') {
      throw conflict(
        "This session was run by the demo agent: the demo's pull requests are simulated (it has no code host), so nothing is pushed and none is opened or read. Its work stays on its branch in the session's folder, shown in Changes.",
      );
    }
  }

  async function open(row: SessionRow, body: OpenPullRequestBody): Promise<PullRequestOutcome> {
    const existing = await recorded(row.id);
    if (existing) return { ...existing, created: false };
    refuseDemo(row);
    const input = await repos.sessions.agentInput(row.id);
    const repoUrl = input?.repoUrl;
    if (!input || !repoUrl || !row.repository) {
      throw conflict('The session has no repository, so there is no branch to open a pull request from.');
    }
    if (!isGitHubRepository(repoUrl)) {
      throw conflict(
        `Pull requests are opened on GitHub with the GitHub CLI; ${repoUrl} is not on github.com. Open it on its own host.`,
      );
    }
    if (agents.isActive(row.id)) {
      throw conflict(
        'The agent is still working on this session, or waiting for its turn; wait for it to finish, or stop it, first.',
      );
    }
    if (row.branch === undefined) throw conflict('The session has no branch yet.');
    const dir = sandboxPath(agents.sandboxRoot, row.id);
    const gitEnv = agents.agentEnvironment();
    const branch = row.branch;
    await checkBranchToPush({ dir, env: gitEnv, repoUrl, branch, baseBranch: input.baseBranch });
    const gh = await signedInGh(deps.serverEnv);
    await pushBranch({ dir, env: gitEnv, repoUrl, branch });
    const made = await gh.create({
      repository: row.repository,
      head: branch,
      base: input.baseBranch,
      title: body.title?.trim() ?? row.title,
      body: body.body ?? defaultBody(input.firstMessage, await repos.sessions.tasks(row.id), row.id),
      draft: body.draft ?? false,
    });
    if (!belongsToRepository(made.pr, repoUrl)) {
      throw conflict(`gh answered with ${made.pr.url}, which is not a pull request of ${row.repository}.`);
    }
    const state: PullRequestState = made.created
      ? { number: made.pr.number, url: made.pr.url, status: body.draft ? 'draft' : 'open' }
      : await gh.view(made.pr.url);
    logger.info(`Session ${row.id}: pull request ${state.url} ${made.created ? 'opened' : 'found open'}.`);
    return record(row.id, state, made.created);
  }

  async function refresh(row: SessionRow): Promise<PullRequestOutcome> {
    const existing = await recorded(row.id);
    if (!existing) throw conflict('The session has no pull request to refresh; open one first.');
    refuseDemo(row);
    const [ref] = pullRequestsIn(existing.pullRequest.url);
    if (!ref || ref.host !== 'github.com') {
      throw conflict(
        `Pull-request status is read from GitHub with the GitHub CLI; ${existing.pullRequest.url} is not on github.com.`,
      );
    }
    // A merged pull request stays merged: nothing to ask GitHub.
    if (existing.pullRequest.status === 'merged') return { ...existing, created: false };
    const gh = await signedInGh(deps.serverEnv);
    return record(row.id, await gh.view(existing.pullRequest.url), false);
  }

  /** Runs one action per session at a time; a call while one is under way shares its answer. */
  function once(id: string, action: () => Promise<PullRequestOutcome>): Promise<PullRequestOutcome> {
    const running = inFlight.get(id);
    if (running) return running.then((outcome) => ({ ...outcome, created: false }));
    const promise = action().finally(() => inFlight.delete(id));
    inFlight.set(id, promise);
    return promise;
  }

  return {
    open: (row: SessionRow, body: OpenPullRequestBody) => once(row.id, () => open(row, body)),
    refresh: (row: SessionRow) => once(row.id, () => refresh(row)),
    /** Whether gh is there to open pull requests with, before anyone tries. */
    tool: () => ghAvailability(deps.serverEnv),
  };
}
export type PullRequests = ReturnType<typeof createPullRequests>;
