import type { ApprovalOption } from '../../../../src-shared/approvals.js';
import { tokenCost } from '../../../../src-shared/model-prices.js';
import { reviewCommentsIn } from '../../../../src-shared/review.js';
import type { AssistantMessage, ContentBlock, Task, Usage } from '../../../../src-shared/sessions.js';
import { collapseWhitespace, makeTitle } from '../../../../src-shared/text.js';
import { seededRandom } from '../../../seeded-random.js';
import { editDiff } from '../../approval-detail.js';
import {
  branchName,
  pause,
  resultMessage,
  type AgentRunner,
  type ApprovalAnswer,
  type RunContext,
  type RunOutcome,
} from '../../types.js';
import { demoGit, prepareDemoFolder, readFolderFile, writeFolderFile } from './sample-project.js';

export function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * What the agent calls the request in its own sentences: the prompt's first sentence without
 * its full stop (the title rule), with "…" when the rule had to cut it short.
 */
export function subjectOf(prompt: string): string {
  const title = makeTitle(prompt);
  const firstLine = collapseWhitespace(prompt.trim().split(/\r?\n/u)[0] ?? '');
  const sentence = /^.*?[.!?](?=\s|$)/u.exec(firstLine)?.[0] ?? firstLine;
  return sentence.replace(/[\p{P}\s]+$/u, '').length > title.length ? `${title}…` : title;
}

/** A price for models the price table lacks: the usage is simulated, its cost only believable. */
const FALLBACK_PRICED_MODEL = 'claude-sonnet-4-5';

/** Believable tokens and cost for a simulated run of `turns` tool calls, on `model`. */
export function simulatedUsage(rand: () => number, turns: number, model: string): Usage {
  const tokens = {
    inputTokens: 1_500 + Math.floor(rand() * 3_000) + turns * 400,
    outputTokens: 600 + Math.floor(rand() * 1_500) + turns * 250,
    cacheReadTokens: turns * (12_000 + Math.floor(rand() * 8_000)),
    cacheWriteTokens: 6_000 + Math.floor(rand() * 6_000),
  };
  const cost = tokenCost(model, tokens) ?? tokenCost(FALLBACK_PRICED_MODEL, tokens) ?? 0;
  return { ...tokens, costUsd: Math.round(cost * 10_000) / 10_000 };
}

/** Prompts that ask the demo agent to fail, so failure can be shown on purpose. */
export const FAILING_PROMPT = /\b(fail|crash|break)\b/iu;

/** The file the demo agent edits, and the setting in it. */
const CONFIG_FILE = 'src/config.js';
const RETRIES = /^(\s*retries:\s*)(\d+)(,?)$/mu;

/** The note the demo agent writes of a session's work: one per session title. */
function notePath(title: string): string {
  const slug = title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/gu, '-')
    .replace(/^-+|-+$/gu, '')
    .split('-')
    .slice(0, 6)
    .join('-');
  return `notes/${slug || 'session'}.md`;
}

/** A prompt as the note quotes it: its first paragraph, on one line, not too long. */
function quoted(prompt: string): string {
  const paragraph = collapseWhitespace(prompt.trim().split(/\n\s*\n/u)[0] ?? '');
  return paragraph.length > 300 ? `${paragraph.slice(0, 297)}...` : paragraph;
}

/** Lines numbered as Claude Code's Read tool shows them. */
function numbered(text: string): string {
  return text
    .replace(/\n$/u, '')
    .split('\n')
    .map((line, i) => `${String(i + 1).padStart(6)}\t${line}`)
    .join('\n');
}

/** The choices the demo agent offers, as an ACP agent's: once, for the rest of the run, or no. */
function choices(kind: 'edit' | 'execute'): ApprovalOption[] {
  return [
    { id: 'allow', kind: 'allow_once', label: 'Allow once' },
    {
      id: 'allow-always',
      kind: 'allow_always',
      label: kind === 'edit' ? 'Allow all edits' : 'Allow all commands',
    },
    { id: 'reject', kind: 'reject_once', label: 'Reject' },
  ];
}

const allowed = (answer: ApprovalAnswer) =>
  answer.decision === 'allow_once' || answer.decision === 'allow_always';

/**
 * What a tool result says of a request that was not allowed, with the message that came with
 * the rejection (a person's, or Session Desk's when no one decided in time).
 */
function notAllowed(answer: ApprovalAnswer, what: string): string {
  const why =
    answer.decision === 'cancelled' || answer.decision === 'expired'
      ? 'No one allowed it before the run ended'
      : 'Rejected';
  return `${why}: ${what}${answer.message === undefined ? '' : `\n\nMessage: ${answer.message}`}`;
}

/**
 * The built-in offline agent. It runs no model and no program of its own: it works in a clone
 * of Session Desk's sample project in the session's folder (sample-project.ts), where it reads a
 * file, edits it, writes a note and commits, as its transcript narrates, so the session's
 * changes are real; a review's follow-up it answers on each commented line, in the file's own
 * comment form. Where the workspace asks before agents act, it asks before each edit and
 * each command, as an agent of the Agent Client Protocol does (kinds `edit` and `execute`), and
 * a request not allowed is not carried out. Deterministic given its seed and the prompt;
 * `paceMs` spaces the steps so the dashboard shows them arriving.
 */
export function createDemoAgent(options: {
  paceMs: number;
  seed?: number;
  /** The allow-listed environment agents run with: git runs with it. */
  environment: NodeJS.ProcessEnv;
  /** Told each run's simulated usage when it ends, to be counted like a real run's. */
  usage?: (sessionId: string, usage: Usage) => Promise<void>;
}): AgentRunner {
  const seedBase = options.seed ?? 1;
  const env = options.environment;

  async function play(ctx: RunContext, prompt: string, followUp: boolean): Promise<RunOutcome> {
    const started = Date.now();
    const seed = hash(`${seedBase}:${prompt}`);
    const rand = seededRandom(seed);
    const dir = ctx.sandboxDir;
    const step = () => pause(options.paceMs, ctx.signal);
    const say = (content: ContentBlock[]): Promise<void> => {
      const message: AssistantMessage = { type: 'assistant', message: { content } };
      return ctx.sink.assistant(message);
    };
    const text = (words: string) => say([{ type: 'text', text: words }]);
    let turns = 0;
    let calls = 0;
    /** Says the call, then its result once `work` has it (or once a request was answered). */
    const tool = async (
      name: string,
      input: Record<string, unknown>,
      work: () => Promise<{ output: string; isError?: boolean }>,
    ) => {
      calls += 1;
      const id = `toolu_demo_${seed.toString(36)}_${calls}`;
      await say([{ type: 'tool_use', id, name, input }]);
      await step();
      const { output, isError = false } = await work();
      await say([{ type: 'tool_result', tool_use_id: id, content: output, is_error: isError }]);
      turns += 1;
    };
    /** Kinds the person allowed for the rest of the run. */
    const allowedAlways = new Set<string>();
    /** Asks first where the workspace asks; allowed at once elsewhere. */
    const ask = async (
      kind: 'edit' | 'execute',
      name: string,
      title: string,
      input: Record<string, unknown>,
      detail: string,
    ): Promise<ApprovalAnswer> => {
      if (!ctx.askApproval || allowedAlways.has(kind)) return { decision: 'allow_once' };
      const answer = await ctx.askApproval({
        title,
        tool: { kind, name, input },
        options: choices(kind),
        detail,
        subject:
          typeof input.command === 'string'
            ? { command: input.command }
            : { paths: [input.file_path as string] },
      });
      if (answer.decision === 'allow_always') allowedAlways.add(kind);
      return answer;
    };
    /** An edit of a file, asked first: made only when allowed. Returns whether it was. */
    const edit = async (path: string, before: string | undefined, after: string): Promise<boolean> => {
      let made = false;
      const input: Record<string, unknown> =
        before === undefined
          ? { file_path: path, content: after }
          : { file_path: path, ...replacement(before, after) };
      const name = before === undefined ? 'Write' : 'Edit';
      await tool(name, input, async () => {
        const answer = await ask(
          'edit',
          name,
          `${name} ${path}`,
          input,
          editDiff(path, before ?? null, after),
        );
        if (!allowed(answer)) {
          return {
            output: notAllowed(
              answer,
              before === undefined ? `${path} was not written.` : `${path} is unchanged.`,
            ),
            isError: true,
          };
        }
        await writeFolderFile(dir, path, after);
        made = true;
        return {
          output:
            before === undefined
              ? `File created successfully at: ${path}`
              : `The file ${path} has been updated.`,
        };
      });
      return made;
    };
    const fails = FAILING_PROMPT.test(prompt);
    const subject = subjectOf(prompt);
    // A review's follow-up names lines of the files: the demo agent answers each comment there.
    const comments = followUp ? reviewCommentsIn(prompt) : [];
    /** The result, with the run's simulated usage on it and told to whoever counts usage. */
    const finish = async (success: boolean, words: string): Promise<RunOutcome> => {
      const usage = simulatedUsage(rand, turns, ctx.session.model);
      await options.usage?.(ctx.session.id, usage);
      return { result: { ...resultMessage(success, words, Date.now() - started, turns), usage } };
    };

    const branch = branchName(ctx.session.title, ctx.session.id);
    const cloned = await prepareDemoFolder({
      dir,
      branch,
      baseBranch: ctx.session.baseBranch,
      env,
      identity: ctx.session.author,
      signal: ctx.signal,
    });
    if (cloned) await ctx.sink.branch(branch);
    await step();
    const where = ctx.session.repository
      ? ` (not in ${ctx.session.repository}: the demo agent works offline)`
      : '';
    await say([
      {
        type: 'thinking',
        thinking: `The request: "${subject}". Look at the code first, then change as little as possible.`,
      },
      {
        type: 'text',
        text:
          comments.length > 0
            ? `Picking up the review: ${comments.length === 1 ? 'one comment' : `${comments.length} comments`} on lines of the changes.`
            : followUp
              ? `Picking up the follow-up: “${subject}”.`
              : `I'm the demo agent: I work in a clone of Session Desk's sample project, a tiny upload client${where}. I'll read the code involved first, then make the change in small steps.`,
      },
    ]);
    await step();

    const plan =
      comments.length > 0
        ? ['Read the commented files', 'Answer the comments', 'Commit the work']
        : followUp
          ? ['Read the notes', 'Add the follow-up to them', 'Commit the work']
          : ['Read the code involved', 'Make the change', 'Write down what changed', 'Commit the work'];
    const tasks: Task[] = plan.map((title, i) => ({ id: `task-${i + 1}`, title, status: 'pending' }));
    const todo = async () => {
      await tool(
        'TodoWrite',
        { todos: tasks.map((t) => ({ content: t.title, status: t.status })) },
        async () => ({
          output: 'Todos updated',
        }),
      );
      await ctx.sink.tasks(tasks.map((t) => ({ ...t })));
    };
    /** Moves on to the next task: the one before done, this one under way. */
    const next = async (i: number) => {
      if (i > 0) tasks[i - 1]!.status = 'completed';
      tasks[i]!.status = 'in_progress';
      await todo();
      await step();
    };
    await todo();

    const note = notePath(ctx.session.title);
    /** What the run changed, for its last words. */
    const done: string[] = [];
    const refused: string[] = [];
    if (comments.length > 0) {
      await next(0);
      const files = new Map<string, string>();
      for (const path of new Set(comments.filter((c) => c.side === 'new').map((c) => c.path))) {
        const content = await readFolderFile(dir, path).catch(() => undefined);
        await tool('Read', { file_path: path }, async () =>
          content === undefined
            ? { output: `File does not exist: ${path}`, isError: true }
            : { output: numbered(content) },
        );
        if (content !== undefined) files.set(path, content);
      }
      await next(1);
      for (const [path, before] of files) {
        const lines = before.split('\n');
        const mine = comments.filter((c) => c.side === 'new' && c.path === path && c.line <= lines.length);
        for (const comment of mine)
          lines[comment.line - 1] = answered(lines[comment.line - 1]!, path, comment.words);
        if (mine.length === 0) continue;
        if (await edit(path, before, lines.join('\n'))) {
          done.push(`answered ${mine.length === 1 ? 'the comment' : `${mine.length} comments`} on ${path}`);
        } else refused.push(`the edit of ${path}`);
      }
      const onBase = comments.filter((c) => c.side === 'old');
      if (onBase.length > 0) {
        await text(
          `The removed lines you commented on (${onBase.map((c) => `${c.path}:${c.line}`).join(', ')}) stay removed.`,
        );
      }
    } else if (followUp) {
      await next(0);
      const before = await readFolderFile(dir, note);
      await tool('Read', { file_path: note }, async () =>
        before === undefined
          ? { output: `File does not exist: ${note}`, isError: true }
          : { output: numbered(before) },
      );
      await next(1);
      const addition = `## Follow-up\n\n${quoted(prompt)}\n`;
      const after =
        before === undefined ? `# ${ctx.session.title}\n\n${addition}` : `${before.trimEnd()}\n\n${addition}`;
      if (await edit(note, before, after)) done.push(`added the follow-up to ${note}`);
      else refused.push(`the note ${note}`);
    } else {
      await next(0);
      const config = await readFolderFile(dir, CONFIG_FILE);
      await tool('Read', { file_path: CONFIG_FILE }, async () =>
        config === undefined
          ? { output: `File does not exist: ${CONFIG_FILE}`, isError: true }
          : { output: numbered(config) },
      );
      await next(1);
      const found = config === undefined ? null : RETRIES.exec(config);
      const was = Number(found?.[2] ?? 0);
      const now = was + 1 + Math.floor(rand() * 3);
      let changed = false;
      if (config !== undefined && found) {
        changed = await edit(CONFIG_FILE, config, config.replace(RETRIES, `$1${now}$3`));
        if (changed)
          done.push(
            `set \`retries\` in ${CONFIG_FILE} to ${now} (it was ${was}), so uploads are tried again`,
          );
        else refused.push(`the edit of ${CONFIG_FILE}`);
      } else {
        await text(`${CONFIG_FILE} has no \`retries\` setting any more, so I leave it as it is.`);
      }
      await next(2);
      const before = await readFolderFile(dir, note);
      const body = [
        `# ${subject}`,
        '',
        `Asked in Session Desk: ${quoted(prompt)}`,
        '',
        changed
          ? `- \`${CONFIG_FILE}\`: uploads are tried again up to ${now} times (\`retries\`, was ${was}).`
          : `- \`${CONFIG_FILE}\` is unchanged.`,
        '',
      ].join('\n');
      if (await edit(note, before, body)) done.push(`wrote ${note}`);
      else refused.push(`the note ${note}`);
    }

    const commitTask = tasks.length - 1;
    await next(commitTask);
    if (fails) {
      return finish(
        false,
        `Stopped before committing, on purpose: the demo agent fails when a prompt asks it to (fail, crash or break). What it changed stays uncommitted in the session's folder.`,
      );
    }
    const status = await demoGit(dir, env, ['status', '--porcelain']);
    let committed = false;
    if (status.code === 0 && status.output === '') {
      await text('Nothing changed, so there is nothing to commit.');
    } else {
      const message =
        comments.length > 0 ? 'Answer the review' : followUp ? `Follow-up: ${subject}` : subject;
      const command = `git add --all && git commit --no-verify -m ${JSON.stringify(message)}`;
      const input = { command, description: 'Commit the work' };
      let failed = '';
      await tool('Bash', input, async () => {
        const answer = await ask('execute', 'Bash', command, input, `$ ${command}`);
        if (!allowed(answer)) {
          refused.push('the commit');
          return { output: notAllowed(answer, 'the command did not run.'), isError: true };
        }
        const added = await demoGit(dir, env, ['add', '--all']);
        const commit =
          added.code === 0
            ? await demoGit(dir, env, ['commit', '--no-verify', '-m', message], { config: identity(ctx) })
            : added;
        if (commit.code !== 0) {
          failed = commit.output.split('\n').at(-1) ?? '';
          return { output: commit.output, isError: true };
        }
        committed = true;
        return { output: commit.output };
      });
      if (failed !== '') return finish(false, `The commit failed: ${failed}`);
    }
    tasks[commitTask]!.status = 'completed';
    await todo();
    await step();
    const summary = [
      done.length > 0 ? `Done: I ${done.join(', and ')}.` : 'I changed nothing.',
      refused.length > 0
        ? `Not done, as it was not allowed: ${refused.join(', ')}.${committed ? '' : ' What I changed is left uncommitted in the session’s folder, to look at in Changes.'}`
        : committed
          ? `It is committed on ${branch}: see Changes.`
          : '',
    ]
      .filter((part) => part !== '')
      .join(' ');
    await text(summary);
    turns += 1;
    return finish(true, refused.length > 0 ? `Finished, in part: ${subject}` : `Finished: ${subject}`);
  }

  return {
    kind: 'demo',
    asksApproval: true,
    start: (ctx, prompt) => play(ctx, prompt ?? ctx.session.title, false),
    followUp: (ctx, text) => play(ctx, text, true),
  };
}

/** A commented line with the demo agent's answer to the comment on it, in the file's own comment form. */
function answered(line: string, path: string, words: string): string {
  const short = collapseWhitespace(words);
  const note = `reviewed: ${short.length > 80 ? `${short.slice(0, 77)}...` : short}`;
  const spaced = line.trimEnd() === '' ? '' : `${line.trimEnd()} `;
  if (/\.(?:md|txt)$/u.test(path)) return `${spaced}(${note})`;
  if (/\.(?:py|sh|rb|ya?ml|toml)$/u.test(path)) return `${spaced}# ${note}`;
  return `${spaced}// ${note}`;
}

/** An edit as Claude Code's Edit tool names it: the lines that change, and what they become. */
function replacement(before: string, after: string): { old_string: string; new_string: string } {
  const a = before.split('\n');
  const b = after.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail += 1;
  // Some text of the old file, so the old string is one the file has (an addition at its end
  // takes the line before it along).
  let from = Math.max(0, Math.min(head, a.length - tail - 1));
  while (
    from > 0 &&
    a
      .slice(from, a.length - tail)
      .join('\n')
      .trim() === ''
  )
    from -= 1;
  return {
    old_string: a.slice(from, a.length - tail).join('\n'),
    new_string: b.slice(from, b.length - tail).join('\n'),
  };
}

/** The commit's author when the session has none: git would refuse to commit without one. */
function identity(ctx: RunContext): string[] {
  return ctx.session.author ? [] : ['user.name=Session Desk demo', 'user.email=demo@sessiondesk.local'];
}
