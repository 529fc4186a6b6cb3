import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { assistantText } from './messages.js';
import { tempDir, type TestServer } from './server.js';

/**
 * Runs `expression` on the live search index writer thread of this process, through the
 * inspector, as a crash or a long SQLite step there would: the writer is a thread of the
 * server's own, with no other way in.
 */
export async function onWriter(expression: string): Promise<void> {
  const session = new Session();
  session.connect();
  try {
    const attached = new Promise<string>((resolve) =>
      session.on('NodeWorker.attachedToWorker', ({ params }) => {
        if (params.workerInfo.title.endsWith('search index writer')) resolve(params.sessionId);
      }),
    );
    const answered = new Promise<void>((resolve) =>
      session.on('NodeWorker.receivedMessageFromWorker', () => resolve()),
    );
    await session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    const sessionId = await attached;
    await session.post('NodeWorker.sendMessageToWorker', {
      sessionId,
      message: JSON.stringify({
        id: 1,
        method: 'Runtime.evaluate',
        params: { expression: `${expression}; 0` },
      }),
    });
    await answered;
  } finally {
    session.disconnect();
  }
}

/**
 * Holds the index writer, as a long merge would, until the returned function is called (once
 * or more): what is written to the store meanwhile waits to be indexed. The thread sleeps between looks at a
 * file of the test's, so holding it costs no CPU.
 */
export async function holdWriter(): Promise<() => void> {
  const dir = tempDir('sessiondesk-hold-');
  const release = join(dir, 'release');
  await onWriter(
    `setImmediate(() => {
      const { existsSync, rmSync } = process.getBuiltinModule('node:fs');
      const nap = new Int32Array(new SharedArrayBuffer(4));
      while (!existsSync(${JSON.stringify(release)})) Atomics.wait(nap, 0, 0, 20);
      rmSync(${JSON.stringify(dir)}, { recursive: true, force: true });
    })`,
  );
  let released = false;
  return () => {
    if (released) return;
    released = true;
    writeFileSync(release, '');
  };
}

/**
 * `count` sessions of one message saying `words`, in the workspace, written as one import
 * would: a backlog for the index, within the caller's `store.write`.
 */
export function writeBacklog(
  server: TestServer,
  workspace: { organizationId: string; user: { userId: string } },
  count: number,
  words: string,
): void {
  for (let n = 0; n < count; n += 1) {
    const id = `session_${workspace.organizationId.slice(-6)}backlog${String(n).padStart(4, '0')}`;
    server.repos.sessions.insert({
      id,
      workspaceId: workspace.organizationId,
      authorId: workspace.user.userId,
      title: `Backlog ${n}`,
      model: 'claude-sonnet-4-5',
      createdAt: new Date().toISOString(),
      baseBranch: 'main',
      initialMessage: `Backlog ${n}`,
    });
    server.repos.sessions.appendMessage(
      id,
      workspace.organizationId,
      assistantText(words),
      null,
      new Date().toISOString(),
    );
  }
}

/** A log stream for a test server (`log: { stream }`), and what was written to it. */
export function captureLog() {
  let log = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      log += chunk.toString();
      done();
    },
  });
  return { stream, text: () => log, count: (what: string) => log.split(what).length - 1 };
}
