import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';

describe('serve --max-runs and SESSIONDESK_MAX_RUNS', () => {
  const dataDir = tempDir('sessiondesk-max-runs-');
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('refuses a flag value that is not a whole number from 1 to 1000, as bad usage', async () => {
    for (const value of ['0', 'three', '2.5', '1001']) {
      const result = await runCli(['serve', '--port', '0', '--data-dir', dataDir, '--max-runs', value]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`--max-runs must be a whole number from 1 to 1000, not "${value}"`);
      expect(result.stdout).not.toContain('running at');
    }
  });

  it('refuses such a value in the environment too', async () => {
    const result = await runCli(['serve', '--port', '0', '--data-dir', dataDir], {
      SESSIONDESK_MAX_RUNS: '-1',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('SESSIONDESK_MAX_RUNS must be a whole number from 1 to 1000, not "-1"');
  });

  it('documents the flag in the help', async () => {
    const result = await runCli(['serve', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('--max-runs');
    expect(result.stdout).toContain('SESSIONDESK_MAX_RUNS');
  });
});
