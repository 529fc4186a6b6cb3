import type { AssistantMessage, Message, PrStatus, SessionStatus, Task } from '../../src-shared/sessions.js';
import { DEFAULT_MODEL } from '../../src-shared/constants.js';
import { makeTitle } from '../../src-shared/text.js';
import type { Accounts } from '../accounts/accounts.js';
import { branchName } from '../agents/types.js';
import type { Clock } from '../clock.js';
import type { Storage } from '../store/storage.js';
import type { Store } from '../store/store.js';
import { DEMO, PEOPLE } from './people.js';
import { sampleRun } from './sample-runs.js';
import { newDemoPassword, setDemoPassword } from './sign-in.js';

const PROMPTS: [prompt: string, repo: string | null][] = [
  ['Fix the flaky login test. It fails on CI about once a day.', 'acme/web'],
  ['Add retries with backoff to the upload client.', 'acme/uploads'],
  ['Upgrade the date library and fix what breaks.', 'acme/web'],
  ['Write docs for the public API endpoints.', 'acme/api'],
  ['Make the settings page keyboard accessible.', 'acme/web'],
  ['Find why the nightly export is slow and speed it up.', 'acme/exporter'],
  ['Add a dark mode to the dashboard.', 'acme/web'],
  ['Remove the unused feature flags.', 'acme/api'],
  ['Port the billing cron job to the new queue.', 'acme/billing'],
  ['Add pagination to the audit log endpoint.', 'acme/api'],
  ['Investigate the memory leak in the worker. It grows 50 MB an hour.', 'acme/worker'],
  ['Rename the Customer model to Account everywhere.', 'acme/api'],
  ['Add integration tests for the webhook handler.', 'acme/api'],
  ['Explain how the cache invalidation works.', null],
  ['Draft a migration plan for the new database.', null],
  ['Crash the build on purpose to test the alerts.', 'acme/web'],
  ['Speed up the CI pipeline; it takes 25 minutes.', 'acme/infra'],
  ['Add CSV import to the contacts page.', 'acme/web'],
  ['Fix the timezone bug in the weekly report.', 'acme/exporter'],
  ['Bump Node to 22 in every service.', 'acme/infra'],
];

const DAY = 24 * 60 * 60 * 1000;

/**
 * A run paused half-way for its person: the transcript up to the task list the agent wrote
 * on moving to a middle task, then a question; the tasks are that list, so the transcript
 * and the task panel agree. No agent runs it: a follow-up carries on.
 */
function pausedRun(
  messages: AssistantMessage[],
  taskLists: { messageCount: number; tasks: Task[] }[],
): { messages: AssistantMessage[]; tasks: Task[] } {
  const middle = taskLists[Math.ceil((taskLists.length - 1) / 2)] ?? { messageCount: 0, tasks: [] };
  const next = middle.tasks.find((t) => t.status === 'in_progress');
  const question: AssistantMessage = {
    type: 'assistant',
    message: {
      content: [
        {
          type: 'text',
          text: `Before I go on${next ? ` with “${next.title}”` : ''}, one question: should the old behaviour stay available behind a setting, or go? Answer with a follow-up and I'll carry on.`,
        },
      ],
    },
  };
  return { messages: [...messages.slice(0, middle.messageCount), question], tasks: middle.tasks };
}

/**
 * A successful run turned into one that failed at its last test run: the transcript up to
 * that `npm test`, whose output now reports failures, and nothing after it.
 */
function failedRun(messages: AssistantMessage[]): AssistantMessage[] {
  const testRun = messages.findLastIndex((m) =>
    m.message.content.some((b) => b.type === 'tool_use' && b.name === 'Bash'),
  );
  if (testRun < 0 || testRun + 1 >= messages.length) return messages;
  const failedOutput: AssistantMessage = {
    type: 'assistant',
    message: {
      content: messages[testRun + 1]!.message.content.map((block) =>
        block.type === 'tool_result'
          ? {
              ...block,
              content:
                'FAIL test/client.test.ts\n  ✕ keeps the old behaviour (41 ms)\nTests: 1 failed, 37 passed',
              is_error: true,
            }
          : block,
      ),
    },
  };
  // The todo list the agent wrote just before the test run had every task done: not so.
  const beforeTests = messages.slice(0, testRun);
  const isTodo = (m: AssistantMessage) =>
    m.message.content.some((b) => b.type === 'tool_use' && b.name === 'TodoWrite');
  if (beforeTests.length >= 2 && isTodo(beforeTests.at(-2)!)) beforeTests.splice(-2, 2);
  return [...beforeTests, messages[testRun]!, failedOutput];
}

function demoSessionId(n: number): string {
  return `ses_demo-session-${String(n).padStart(5, '0')}`.padEnd(26, '0');
}

/**
 * Creates the demo workspace: a few people and about 40 sessions over three weeks, in all
 * three statuses and all four pull-request states, some merged this week, with transcripts
 * and tasks, so every stat has something to show offline. Does nothing when it exists.
 */
export async function seedDemo(deps: {
  store: Store;
  storage: Storage;
  accounts: Accounts;
  clock: Clock;
}): Promise<{ created: boolean }> {
  const { store, storage, accounts, clock } = deps;
  const { repos } = storage;
  if (await repos.workspaces.findById(DEMO.organizationId)) return { created: false };

  for (const person of PEOPLE) {
    if (!(await repos.users.findByEmail(person.email))) {
      // Only the demo owner's password is ever shown; the others' are never known to anyone.
      await accounts.createUser({ email: person.email, name: person.name, password: newDemoPassword() });
    }
  }
  await setDemoPassword(store, storage);
  const userIds = await Promise.all(
    PEOPLE.map(async (p) => (await repos.users.findByEmail(p.email))?.id ?? ''),
  );
  const now = clock.now().getTime();

  const plans: {
    n: number;
    prompt: string;
    repo: string | null;
    author: string;
    createdAt: number;
    status: SessionStatus;
    pr: PrStatus | null;
    mergedAt?: number;
  }[] = [];
  for (let n = 0; n < 40; n += 1) {
    const [prompt, repo] = PROMPTS[n % PROMPTS.length] as [string, string | null];
    const status: SessionStatus =
      /crash|fail|break/iu.test(prompt) || n % 9 === 4 ? 'failed' : n % 13 === 1 ? 'active' : 'completed';
    // A session still being worked on was started minutes ago, not weeks.
    const createdAt =
      status === 'active'
        ? now - (4 + n) * 60_000
        : now - Math.round(((n * 37) % 21) * DAY + ((n * 13) % 24) * 3_600_000 + 600_000);
    const prCycle: (PrStatus | null)[] = ['merged', 'open', 'draft', 'closed', 'merged', null];
    const pr =
      repo && status === 'completed'
        ? (prCycle[n % prCycle.length] ?? null)
        : repo && status === 'active' && n % 2 === 0
          ? 'draft'
          : null;
    plans.push({
      n,
      prompt,
      repo,
      author: userIds[n % userIds.length] as string,
      createdAt,
      status,
      pr,
      ...(pr === 'merged' ? { mergedAt: Math.min(now - 60_000, createdAt + 2 * 3_600_000) } : {}),
    });
  }

  const sessions = plans.map((plan) => {
    const id = demoSessionId(plan.n);
    const repoUrl = plan.repo ? `https://github.com/${plan.repo}` : undefined;
    return { plan, id, repoUrl, ...sampleRun(plan.prompt, DEFAULT_MODEL) };
  });

  await storage.write(async (tx) => {
    await tx.workspaces.insert({
      id: DEMO.organizationId,
      name: DEMO.workspaceName,
      createdAt: new Date(now - 30 * DAY).toISOString(),
    });
    // Its own setting, so that an agent command set for the installation never runs here.
    await tx.workspaces.putSettings(DEMO.organizationId, { agent: 'demo' });
    for (const [i, userId] of userIds.entries()) {
      await tx.workspaces.addMember(
        DEMO.organizationId,
        userId,
        i === 0 ? 'owner' : 'member',
        new Date(now - 30 * DAY).toISOString(),
      );
    }
    for (const { plan, id, repoUrl, messages, tasks, taskLists, result } of sessions) {
      const at = (offsetMs: number) => new Date(plan.createdAt + offsetMs).toISOString();
      const title = makeTitle(plan.prompt);
      await tx.sessions.insert({
        id,
        workspaceId: DEMO.organizationId,
        authorId: plan.author,
        title,
        model: DEFAULT_MODEL,
        createdAt: at(0),
        baseBranch: 'main',
        initialMessage: plan.prompt,
        ...(repoUrl && plan.repo ? { repoUrl, repository: plan.repo } : {}),
      });
      // Written by the simulated agent: labelled so, like a session the demo agent runs.
      await tx.sessions.setAgentKind(id, 'demo');
      // An active session waits for its person half-way through. A failed one ends where its
      // tests failed, never on the agent saying they pass.
      const paused = plan.status === 'active' ? pausedRun(messages, taskLists) : null;
      const shown = paused
        ? paused.messages
        : plan.status === 'failed' && !result.is_error
          ? failedRun(messages)
          : messages;
      for (const [i, m] of shown.entries()) {
        await tx.sessions.appendMessage(id, DEMO.organizationId, m as Message, null, at((i + 1) * 20_000));
      }
      const last = (shown.length + 1) * 20_000;
      if (plan.status !== 'active') {
        const ending =
          plan.status === 'failed' && !result.is_error
            ? {
                ...result,
                subtype: 'error' as const,
                is_error: true,
                result: 'The tests failed after the change; see the Bash output.',
              }
            : result;
        await tx.sessions.appendMessage(id, DEMO.organizationId, ending, null, at(last));
        // Its simulated usage counts like a real run's, kept apart as simulated.
        if (result.usage) {
          await tx.sessions.recordRun(id, DEMO.organizationId, {
            kind: 'demo',
            usage: result.usage,
            endedAt: at(last),
          });
        }
      }
      await tx.sessions.replaceTasks(
        id,
        paused
          ? paused.tasks
          : plan.status === 'failed' && !result.is_error
            ? tasks.map((t: Task, i: number): Task =>
                i === tasks.length - 1 ? { ...t, status: 'in_progress' } : t,
              )
            : tasks,
      );
      if (repoUrl) await tx.sessions.setBranch(id, branchName(title, id), at(10_000));
      if (plan.pr && plan.repo) {
        const number = 100 + plan.n;
        await tx.sessions.updatePullRequest(
          id,
          {
            number,
            url: `https://github.com/${plan.repo}/pull/${number}`,
            status: plan.pr,
            ...(plan.mergedAt ? { mergedAt: new Date(plan.mergedAt).toISOString() } : {}),
          },
          at(last),
        );
      }
      if (plan.status !== 'active') await tx.sessions.update(id, { status: plan.status }, at(last));
    }
  });
  return { created: true };
}
