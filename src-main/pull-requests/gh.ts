import { tmpdir } from 'node:os';
import { z } from 'zod';
import type { PrStatus } from '../../src-shared/sessions.js';
import { locateExecutable } from '../agents/executables.js';
import { AppError } from '../errors.js';
import { lastLines, runTool, type ToolResult } from './run-tool.js';
import { pullRequestsIn, type PullRequestRef } from './urls.js';

const GH = { name: 'GitHub CLI', program: 'gh', envVar: 'SESSIONDESK_GH_BIN' };
const GH_TIMEOUT_MS = 60_000;
const HOST = 'github.com';

/** A pull request as GitHub reports it, in the specification's states. */
export interface PullRequestState {
  number: number;
  url: string;
  status: PrStatus;
  mergedAt?: string;
}

/**
 * `gh` runs with the server's environment (its sign-in lives there: GH_TOKEN, or its config
 * under HOME), minus Session Desk's own settings, never prompting, outside any sandbox.
 */
function ghEnvironment(serverEnv: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(serverEnv)) {
    if (value !== undefined && !/^SESSIONDESK_/iu.test(name)) env[name] = value;
  }
  return { ...env, GH_PROMPT_DISABLED: '1', GH_NO_UPDATE_NOTIFIER: '1', NO_COLOR: '1' };
}

const unavailable = (message: string) => new AppError(424, 'gh_unavailable', message);

function failed(what: string, result: ToolResult): AppError {
  const said = lastLines(result.stderr || result.stdout);
  const why = result.timedOut ? ` It did not answer within ${GH_TIMEOUT_MS / 1000} s.` : '';
  return new AppError(502, 'gh_failed', `${what} failed.${why}${said ? `\n\n${said}` : ''}`);
}

const installHint =
  'Pull requests are opened with it: install it from https://cli.github.com, then sign in with `gh auth login`.';

/**
 * Whether the server finds the GitHub CLI, without running it: what a page says before anyone
 * clicks. Whether it is signed in is learnt when it is used (asking runs gh, which may be slow).
 */
export function ghAvailability(serverEnv: NodeJS.ProcessEnv): { available: boolean; problem?: string } {
  const located = locateExecutable(GH, serverEnv);
  return located.found
    ? { available: true }
    : { available: false, problem: `${located.problem} ${installHint}` };
}

/** The GitHub CLI as this server finds it, signed in; or a 424 saying what is missing and how to fix it. */
export async function signedInGh(serverEnv: NodeJS.ProcessEnv) {
  const located = locateExecutable(GH, serverEnv);
  if (!located.found) throw unavailable(`${located.problem} ${installHint}`);
  const env = ghEnvironment(serverEnv);
  const run = (args: string[]) =>
    runTool(located.path, args, { cwd: tmpdir(), env, timeoutMs: GH_TIMEOUT_MS });
  const status = await run(['auth', 'status', '--hostname', HOST]);
  if (status.startError) throw unavailable(`${located.path} could not run: ${status.startError.message}`);
  if (status.code !== 0) {
    const said = lastLines(status.stderr || status.stdout, 3);
    throw unavailable(
      `The GitHub CLI is not signed in to ${HOST}: run \`gh auth login\` as the user running Session Desk (or set GH_TOKEN in its environment).${said ? `\n\n${said}` : ''}`,
    );
  }

  return {
    /**
     * `gh pr create`: the PR's address is the last line gh prints. When one is already open
     * for the branch, gh names it; that one is returned, marked as not new.
     */
    async create(options: {
      repository: string;
      head: string;
      base: string;
      title: string;
      body: string;
      draft: boolean;
    }): Promise<{ pr: PullRequestRef; created: boolean }> {
      const result = await run([
        'pr',
        'create',
        `--repo=${options.repository}`,
        `--head=${options.head}`,
        `--base=${options.base}`,
        `--title=${options.title}`,
        `--body=${options.body}`,
        ...(options.draft ? ['--draft'] : []),
      ]);
      const printed = pullRequestsIn(result.stdout).at(-1);
      if (result.code === 0 && printed) return { pr: printed, created: true };
      const existing = /already exists/iu.test(result.stderr)
        ? pullRequestsIn(result.stderr).at(-1)
        : undefined;
      if (existing) return { pr: existing, created: false };
      throw failed(`Opening the pull request for ${options.head} (gh pr create)`, result);
    },

    /** `gh pr view <url> --json …`, in the specification's states. */
    async view(url: string): Promise<PullRequestState> {
      const result = await run(['pr', 'view', url, '--json', 'state,isDraft,mergedAt,closedAt,number,url']);
      if (result.code !== 0) throw failed(`Reading ${url} (gh pr view)`, result);
      const parsed = GhPullRequestSchema.safeParse(safeJson(result.stdout));
      if (!parsed.success) {
        throw new AppError(
          502,
          'gh_failed',
          `gh pr view answered something that is not a pull request's state.`,
        );
      }
      return toState(parsed.data);
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The fields asked of `gh pr view --json`; gh prints null for times that have not happened. */
const GhPullRequestSchema = z.object({
  number: z.number().int(),
  url: z.string(),
  state: z.enum(['OPEN', 'CLOSED', 'MERGED']),
  isDraft: z.boolean(),
  mergedAt: z.string().nullable().optional(),
  closedAt: z.string().nullable().optional(),
});

/** GitHub's OPEN (draft or not), MERGED and CLOSED as `draft`, `open`, `merged`, `closed`. */
export function toState(pr: z.infer<typeof GhPullRequestSchema>): PullRequestState {
  const base = { number: pr.number, url: pr.url };
  if (pr.state === 'MERGED') {
    const at = pr.mergedAt ? new Date(pr.mergedAt) : null;
    return {
      ...base,
      status: 'merged',
      ...(at && !Number.isNaN(at.getTime()) ? { mergedAt: at.toISOString() } : {}),
    };
  }
  if (pr.state === 'CLOSED') return { ...base, status: 'closed' };
  return { ...base, status: pr.isDraft ? 'draft' : 'open' };
}
