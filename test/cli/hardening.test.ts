import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServe } from '../helpers/cli.js';
import { seedDataDir, type Seeded } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';
import { sqljsOnly } from '../helpers/require-tools.js';

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('export --output never writes through what it finds', () => {
  const dataDir = tempDir('sessiondesk-export-');
  const outDir = tempDir('sessiondesk-out-');
  let seeded: Seeded;
  beforeAll(async () => {
    seeded = await seedDataDir(dataDir);
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
    await rm(outDir, { recursive: true, force: true });
  });

  it('a symlink planted as FILE.tmp is replaced, not followed; the file it points to is untouched', async () => {
    const victim = join(outDir, 'victim.txt');
    writeFileSync(victim, 'precious\n', { mode: 0o644 });
    const output = join(outDir, 'export.ndjson');
    symlinkSync(victim, `${output}.tmp`);
    const result = await runCli([
      'export',
      '--workspace',
      seeded.organizationId,
      '--output',
      output,
      '--data-dir',
      dataDir,
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(modeOf(victim)).toBe(0o644);
    expect(readFileSync(output, 'utf8')).toContain('"type":"sessiondesk.export"');
    expect(modeOf(output)).toBe(0o600);
  });

  it('a leftover FILE.tmp readable by everyone does not pass its mode on: the export is 0600', async () => {
    const output = join(outDir, 'again.json');
    writeFileSync(`${output}.tmp`, 'old', { mode: 0o666 });
    chmodSync(`${output}.tmp`, 0o666);
    const result = await runCli([
      'export',
      '--workspace',
      seeded.organizationId,
      '--format',
      'json',
      '--output',
      output,
      '--data-dir',
      dataDir,
    ]);
    expect(result.code).toBe(0);
    expect(modeOf(output)).toBe(0o600);
    expect(JSON.parse(readFileSync(output, 'utf8'))).toMatchObject({ type: 'sessiondesk.export' });
  });
});

describe('serve on another loopback address, and a data directory others can write', () => {
  it('serve --host 127.0.0.2 answers what it serves', { timeout: 60_000 }, async () => {
    const dataDir = tempDir('sessiondesk-host-');
    try {
      const served = await startServe(dataDir, ['--host', '127.0.0.2', '--log-level', 'silent']);
      try {
        expect(served.url).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/u);
        const response = await fetch(`${served.url}/api/setup`);
        expect(response.status).toBe(200);
        expect(await response.json()).toMatchObject({ needed: true, demo: false });
        // Still only its own names: another address in the Host is refused.
        const port = Number(new URL(served.url).port);
        const foreign = await new Promise<string>((resolve, reject) => {
          const socket = connect(port, '127.0.0.2');
          let out = '';
          socket.on('data', (d) => (out += d.toString()));
          socket.on('close', () => resolve(out));
          socket.on('error', reject);
          socket.write(`GET /api/setup HTTP/1.1\r\nHost: 127.0.0.3:${port}\r\nConnection: close\r\n\r\n`);
        });
        expect(foreign.split('\r\n')[0]).toBe('HTTP/1.1 403 Forbidden');
      } finally {
        await served.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it(
    'a group- or world-writable data directory is made private, with a warning (serve and the CLI)',
    {
      timeout: 60_000,
      ...sqljsOnly('the admin commands on a team database open no data directory to make private'),
    },
    async () => {
      const parent = tempDir('sessiondesk-loose-');
      const dataDir = join(parent, 'data');
      try {
        mkdirSync(dataDir);
        chmodSync(dataDir, 0o777);
        const created = await runCli([
          'user',
          'create',
          '--email',
          'ada@example.test',
          '--name',
          'Ada',
          '--password',
          'correct horse',
          '--data-dir',
          dataDir,
        ]);
        expect(created.code).toBe(0);
        expect(created.stderr).toContain('could be written by other users (mode 777)');
        expect(modeOf(dataDir)).toBe(0o700);

        chmodSync(dataDir, 0o775);
        const served = await startServe(dataDir, ['--log-level', 'warn']);
        await served.stop();
        expect(served.stderr()).toContain('could be written by other users (mode 775)');
        expect(modeOf(dataDir)).toBe(0o700);
      } finally {
        await rm(parent, { recursive: true, force: true });
      }
    },
  );
});
