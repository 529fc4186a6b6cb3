// A command that is refused never leaves a data directory behind: run where the default data
// directory does not exist, each fails (or is refused) and the directory still does not exist.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { occupyPort, useSandbox } from '../helpers/cli-extra.js';
import { HISTORY_FIXTURES } from '../helpers/hostile-history.js';

const sandbox = useSandbox();

/** What a command that needs the data says when the directory is not there. */
const NO_DATA = 'no data directory';

/** Each command, its arguments made in a folder of the test's own, and what it says. */
const COMMANDS: Array<[string, (folder: string) => string[], RegExp | typeof NO_DATA]> = [
  ['history import', () => ['history', 'import', '--workspace', 'Owner space'], NO_DATA],
  [
    'history import with a folder that is not the CLI’s',
    () => [
      'history',
      'import',
      '--workspace',
      'org_x',
      '--claude-dir',
      join(HISTORY_FIXTURES, 'codex', '0.169.0', 'plain-answer'),
    ],
    /has no Claude Code conversations/u,
  ],
  [
    'workspace create',
    () => ['workspace', 'create', '--name', 'W', '--owner', 'nobody@example.test'],
    NO_DATA,
  ],
  ['member add', () => ['member', 'add', '--workspace', 'org_x', '--email', 'nobody@example.test'], NO_DATA],
  [
    'member remove',
    () => ['member', 'remove', '--workspace', 'org_x', '--email', 'nobody@example.test'],
    NO_DATA,
  ],
  ['key create', () => ['key', 'create', '--workspace', 'org_x'], NO_DATA],
  ['key list', () => ['key', 'list', '--workspace', 'org_x'], NO_DATA],
  ['key revoke', () => ['key', 'revoke', '--workspace', 'org_x', '--id', 'key_x'], NO_DATA],
  ['user list', () => ['user', 'list'], NO_DATA],
  ['workspace list', () => ['workspace', 'list'], NO_DATA],
  ['export', () => ['export', '--workspace', 'org_x'], NO_DATA],
  [
    'import',
    (folder) => {
      writeFileSync(join(folder, 'export.ndjson'), '');
      return ['import', '--workspace', 'org_x', '--input', join(folder, 'export.ndjson')];
    },
    NO_DATA,
  ],
  ['backup', (folder) => ['backup', '--output', join(folder, 'backup.sqlite')], NO_DATA],
  ['agent-command list', () => ['agent-command', 'list'], NO_DATA],
  ['doctor', () => ['doctor'], /does not exist/u],
  [
    'restore of a file that is not a backup',
    (folder) => {
      writeFileSync(join(folder, 'notes.txt'), 'not a backup\n');
      return ['restore', '--input', join(folder, 'notes.txt')];
    },
    /not a usable backup/u,
  ],
];

describe('a refused command leaves no data directory behind', () => {
  it.each(COMMANDS)('%s', async (_name, args, says) => {
    const config = sandbox.dataDir();
    const dataDir = join(config, 'Session Desk');
    const result = await runCli(args(sandbox.dataDir()), {
      XDG_CONFIG_HOME: config,
      HOME: sandbox.dataDir(),
      SESSIONDESK_DATA_DIR: '',
    });
    expect(result.code, result.stderr).not.toBe(0);
    if (says === NO_DATA) {
      expect(result.stderr).toBe(
        `sessiondesk: There is no data directory at ${dataDir}. Check --data-dir and SESSIONDESK_DATA_DIR.\n`,
      );
    } else {
      expect(result.stdout + result.stderr).toMatch(says);
    }
    expect(result.stderr).not.toMatch(/\n\s+at /u);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('serve on a port in use', async () => {
    const config = sandbox.dataDir();
    const port = await occupyPort();
    sandbox.defer(() => port.close());
    const result = await runCli(['serve', '--port', String(port.port)], {
      XDG_CONFIG_HOME: config,
      SESSIONDESK_DATA_DIR: '',
    });
    expect(result.code).toBe(1);
    expect(existsSync(join(config, 'Session Desk'))).toBe(false);
  });
});
