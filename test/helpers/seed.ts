import { createAccounts } from '../../src-main/accounts/accounts.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { newId } from '../../src-main/accounts/secrets.js';
import type { Storage } from '../../src-main/store/storage.js';
import { Store } from '../../src-main/store/store.js';
import type { Message, Task } from '../../src-shared/sessions.js';
import { PASSWORD } from './server.js';
import { storageOf } from '../../src-main/store/sqljs-storage.js';

/** A transcript with every kind of message and block the dashboard renders. */
export const FULL_TRANSCRIPT: Message[] = [
  { type: 'user', message: { content: 'Fix the flaky login test. It fails on CI about once a day.' } },
  {
    type: 'assistant',
    message: {
      content: [
        {
          type: 'thinking',
          thinking: 'The test probably races the session cookie. Check the fixture first.',
        },
        { type: 'text', text: 'I will read the **login test** and its fixture, then run it in a loop.' },
        { type: 'tool_use', id: 'tu_read', name: 'Read', input: { file_path: 'test/login.test.ts' } },
        {
          type: 'tool_use',
          id: 'tu_bash',
          name: 'Bash',
          input: { command: 'npm test -- login --repeat 50' },
        },
      ],
    },
  },
  {
    type: 'assistant',
    message: {
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'tu_read',
          content: Array.from({ length: 60 }, (_, i) => `${i + 1}  line of the login test`).join('\n'),
        },
        {
          type: 'tool_result',
          tool_use_id: 'tu_bash',
          content: 'FAIL login.test.ts (3 of 50)\nTimeout waiting for cookie',
          is_error: true,
        },
      ],
    },
  },
  {
    type: 'assistant',
    message: {
      content: [
        {
          type: 'text',
          text: 'Found it: the fixture does not wait for the cookie.\n\n```ts\nawait page.waitForResponse("/api/auth/sign-in");\n```',
        },
      ],
    },
  },
  {
    type: 'result',
    subtype: 'success',
    is_error: false,
    result: 'The login test waits for sign-in now; 50 of 50 runs pass.',
    duration_ms: 84_000,
    num_turns: 6,
  },
];

export const FULL_TASKS: Task[] = [
  { id: 'task-1', title: 'Read the login test and fixture', status: 'completed' },
  { id: 'task-2', title: 'Reproduce the flake in a loop', status: 'in_progress' },
  { id: 'task-3', title: 'Open a pull request', status: 'pending' },
];

export interface Seeded {
  email: string;
  password: string;
  organizationId: string;
  secondOrganizationId: string;
  transcriptSessionId: string;
  /** seedManySessions only: an active session with an open tool call. */
  activeSessionId?: string;
}

/**
 * Opens a data directory's sql.js store, hands its storage to `seed` and closes it: the
 * seeding below writes through Storage, so the same seeding fills a team server's PostgreSQL.
 * Under the PostgreSQL pass (SESSIONDESK_TEST_DATABASE=postgres) it is the team database of
 * the directory's commands and servers (test/helpers/cli.ts) that is seeded.
 */
export async function withDataDirStorage<T>(
  dataDir: string,
  seed: (storage: Storage) => Promise<T>,
): Promise<T> {
  if (process.env.SESSIONDESK_TEST_DATABASE === 'postgres') {
    // Loaded only here: they read vitest's injected cluster, which Playwright's workers lack.
    const { databaseFor } = await import('./test-database.js');
    const { connect } = await import('../../src-main/store-postgres/connect.js');
    const { createPostgresStorage } = await import('../../src-main/store-postgres/storage.js');
    const sql = await connect(await databaseFor(dataDir), { max: 2 });
    try {
      return await seed(createPostgresStorage(sql));
    } finally {
      await sql.end({ timeout: 5 });
    }
  }
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  try {
    return await seed(storageOf(store));
  } finally {
    await store.close();
  }
}

/** A data directory with a user in two workspaces and a session carrying FULL_TRANSCRIPT. */
export function seedDataDir(dataDir: string, email = 'ada@example.test'): Promise<Seeded> {
  return withDataDirStorage(dataDir, (storage) => seedStorage(storage, email));
}

/** seedDataDir's data, written through any Storage. */
export async function seedStorage(storage: Storage, email = 'ada@example.test'): Promise<Seeded> {
  const accounts = createAccounts(storage, systemClock);
  await accounts.createUser({ email, name: 'Ada Lovelace', password: PASSWORD });
  const first = await accounts.createWorkspace({ name: 'Acme', ownerEmail: email });
  const second = await accounts.createWorkspace({ name: 'Side project', ownerEmail: email });
  const user = (await storage.repos.users.findByEmail(email))!;
  const id = newId('session');
  const at = new Date().toISOString();
  await storage.write(async (tx) => {
    await tx.sessions.insert({
      id,
      workspaceId: first.organizationId,
      authorId: user.id,
      title: 'Fix the flaky login test',
      model: 'claude-opus-4-6',
      createdAt: at,
      baseBranch: 'main',
      repoUrl: 'https://github.com/acme/web',
      repository: 'acme/web',
    });
    for (const message of FULL_TRANSCRIPT) {
      await tx.sessions.appendMessage(
        id,
        first.organizationId,
        message,
        message.type === 'user' ? user.id : null,
        at,
      );
    }
    await tx.sessions.replaceTasks(id, FULL_TASKS);
    await tx.sessions.setBranch(id, 'agent/fix-flaky-login-test', at);
    await tx.sessions.updatePullRequest(
      id,
      { number: 42, url: 'https://github.com/acme/web/pull/42', status: 'open' },
      at,
    );
    await tx.sessions.update(id, { status: 'completed' }, at);
  });
  return {
    email,
    password: PASSWORD,
    organizationId: first.organizationId,
    secondOrganizationId: second.organizationId,
    transcriptSessionId: id,
  };
}

/**
 * A data directory like seedDataDir's, plus `count` more sessions in the first workspace:
 * every third failed, the rest completed; two about a flaky test; repositories acme/web and
 * acme/api by turns. Created a second apart, newest last, so the order is known.
 */
export function seedManySessions(dataDir: string, count: number): Promise<Seeded> {
  return withDataDirStorage(dataDir, (storage) => seedManyInStorage(storage, count));
}

/** seedManySessions' data, written through any Storage. */
export async function seedManyInStorage(storage: Storage, count: number): Promise<Seeded> {
  const seeded = await seedStorage(storage);
  const user = (await storage.repos.users.findByEmail(seeded.email))!;
  const start = Date.now() - (count + 10) * 1000;
  await storage.write(async (tx) => {
    for (let n = 0; n < count; n += 1) {
      const id = newId('session');
      const at = new Date(start + n * 1000).toISOString();
      const repository = n % 2 === 0 ? 'acme/web' : 'acme/api';
      const prompt = n === 7 || n === 30 ? `Quarantine flaky test number ${n}` : `Routine change number ${n}`;
      await tx.sessions.insert({
        id,
        workspaceId: seeded.organizationId,
        authorId: user.id,
        title: prompt,
        model: 'claude-opus-4-6',
        createdAt: at,
        baseBranch: 'main',
        repoUrl: `https://github.com/${repository}`,
        repository,
        initialMessage: prompt,
      });
      await tx.sessions.update(id, { status: n % 3 === 0 ? 'failed' : 'completed' }, at);
    }
    // The newest: left active mid-run (no agent is running it), a tool call without its
    // result and tasks still open.
    const id = newId('session');
    const at = new Date().toISOString();
    await tx.sessions.insert({
      id,
      workspaceId: seeded.organizationId,
      authorId: user.id,
      title: 'Migrate the build to the new runner',
      model: 'claude-opus-4-6',
      createdAt: at,
      baseBranch: 'main',
      initialMessage: 'Migrate the build to the new runner',
    });
    const run: Message = {
      type: 'assistant',
      message: {
        content: [
          { type: 'text', text: 'Starting with the **build script**.' },
          { type: 'tool_use', id: 'tu_build', name: 'Bash', input: { command: 'npm run build' } },
        ],
      },
    };
    await tx.sessions.appendMessage(id, seeded.organizationId, run, null, at);
    await tx.sessions.replaceTasks(id, [
      { id: 'task-1', title: 'Read the build script', status: 'completed' },
      { id: 'task-2', title: 'Switch the runner', status: 'in_progress' },
      { id: 'task-3', title: 'Check the build', status: 'pending' },
    ]);
    seeded.activeSessionId = id;
  });
  return seeded;
}

/**
 * Adds a completed session holding `messages` to a data directory seeded by seedDataDir, in the
 * first workspace, with no server running (the store is opened and closed here).
 */
export function addSession(
  dataDir: string,
  seeded: Seeded,
  title: string,
  messages: Message[],
): Promise<string> {
  return withDataDirStorage(dataDir, (storage) => addSessionInStorage(storage, seeded, title, messages));
}

/** addSession's session, written through any Storage. */
export async function addSessionInStorage(
  storage: Storage,
  seeded: Seeded,
  title: string,
  messages: Message[],
): Promise<string> {
  const user = (await storage.repos.users.findByEmail(seeded.email))!;
  const id = newId('session');
  const at = new Date().toISOString();
  await storage.write(async (tx) => {
    await tx.sessions.insert({
      id,
      workspaceId: seeded.organizationId,
      authorId: user.id,
      title,
      model: 'claude-opus-4-6',
      createdAt: at,
      baseBranch: 'main',
    });
    for (const message of messages)
      await tx.sessions.appendMessage(id, seeded.organizationId, message, null, at);
    await tx.sessions.update(id, { status: 'completed' }, at);
  });
  return id;
}
