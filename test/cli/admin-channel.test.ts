import { writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServe } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';
import { sqljsOnly } from '../helpers/require-tools.js';

/**
 * A stale server.json: the server that wrote it is gone, its pid is alive again (here, this
 * test's own process holds the lock), and another program listens on the recorded port.
 */
describe('the admin channel proves the server before sending anything secret', () => {
  const dataDir = tempDir('sessiondesk-stale-');
  const received: Buffer[] = [];
  let listener: Server;
  const token = 'the-admin-token-of-a-server-that-is-gone';
  const password = 'a new users secret password';

  beforeAll(async () => {
    listener = createServer((socket) => {
      socket.on('data', (d: Buffer) => {
        received.push(d);
        // Answers like a server would, with a made-up proof.
        const body = JSON.stringify({ proof: '0'.repeat(64) });
        socket.end(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
        );
      });
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as { port: number }).port;
    writeFileSync(join(dataDir, 'sessiondesk.lock'), JSON.stringify({ pid: process.pid }));
    writeFileSync(
      join(dataDir, 'server.json'),
      JSON.stringify({ url: `http://127.0.0.1:${port}`, host: '127.0.0.1', port, pid: process.pid }),
    );
    writeFileSync(join(dataDir, 'admin.token'), token, { mode: 0o600 });
  });
  afterAll(async () => {
    listener.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it(
    'user create, key create and export refuse, and the listener receives neither the token nor the password',
    sqljsOnly(
      'on a team database the commands write to the database itself, never through a serving process',
    ),
    async () => {
      const runs = [
        ['user', 'create', '--email', 'eve@example.test', '--name', 'Eve', '--password', password],
        ['key', 'create', '--workspace', 'org_AAAAAAAAAAAAAAAAAAAAAA'],
        ['export', '--workspace', 'org_AAAAAAAAAAAAAAAAAAAAAA'],
      ];
      for (const args of runs) {
        const result = await runCli([...args, '--data-dir', dataDir]);
        expect(result.code, args.join(' ')).toBe(1);
        expect(result.stderr).toContain('did not prove it is the Session Desk server');
      }
      const seen = Buffer.concat(received).toString('latin1');
      expect(seen).toContain('/api/admin/proof?challenge=');
      expect(seen).not.toContain(token);
      expect(seen).not.toContain(password);
      expect(seen.toLowerCase()).not.toContain('x-sessiondesk-admin-token');
    },
  );

  it('a real server proves itself, and the commands go through it', { timeout: 60_000 }, async () => {
    const real = tempDir('sessiondesk-real-');
    try {
      const served = await startServe(real, ['--log-level', 'silent']);
      try {
        const result = await runCli([
          'user',
          'create',
          '--email',
          'ada@example.test',
          '--name',
          'Ada',
          '--password',
          password,
          '--data-dir',
          real,
        ]);
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
      } finally {
        await served.stop();
      }
    } finally {
      await rm(real, { recursive: true, force: true });
    }
  });
});
