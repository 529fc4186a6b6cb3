import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, startServe, type ServeProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';

let first: ServeProcess | null = null;
let dataDir = '';
afterEach(async () => {
  await first?.stop();
  first = null;
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a second serve on a data directory a server already holds', () => {
  it('says Session Desk is running there and at which URL, on its port or another', async () => {
    dataDir = tempDir();
    first = await startServe(dataDir);
    const port = new URL(first.url).port;
    for (const args of [
      ['--port', port],
      ['--port', '0'],
    ]) {
      const second = await runCli(['serve', '--data-dir', dataDir, ...args]);
      expect(second.code, args.join(' ')).toBe(1);
      expect(second.stderr).toBe(
        `sessiondesk: Session Desk is already running on this data directory, at ${first.url} ` +
          `(pid ${first.child.pid}). Open that URL, or stop it first.\n`,
      );
    }
  });
});
