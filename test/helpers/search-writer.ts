import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { tempDir } from './server.js';

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
 * Holds the index writer, as a long merge would, until the returned function is called: what
 * is written to the store meanwhile waits to be indexed. The thread sleeps between looks at a
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
  return () => writeFileSync(release, '');
}
