// `sessiondesk history import` as a process: the folders it takes (each CLI's own, `~` as the
// home), the workspace by id or name, and the command the History page shows, run as shown.
import { cpSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HistorySourcesResponseSchema } from '../../src-shared/history.js';
import { runCli, runInShell } from '../helpers/cli.js';
import { cliIn, ok, PASSWORD, seedOwner, signInAt, useSandbox } from '../helpers/cli-extra.js';
import { HISTORY_FIXTURES } from '../helpers/hostile-history.js';

const sandbox = useSandbox();

/** A copy of a recorded CLI folder, in a folder of the test's own. */
function copyOf(kind: string, version: string, scenario: string): string {
  const root = join(sandbox.dataDir(), `${kind}-root`);
  cpSync(join(HISTORY_FIXTURES, kind, version, scenario), root, { recursive: true });
  return root;
}

/** The command in a home of its own that holds no CLI folder, unless a test puts one there. */
function historyIn(dataDir: string) {
  const home = sandbox.dataDir();
  const run = (...args: string[]) =>
    runCli(['history', 'import', ...args, '--data-dir', dataDir], {
      HOME: home,
      CLAUDE_CONFIG_DIR: '',
      CODEX_HOME: '',
    });
  return { home, run };
}

describe('history import: the folders it takes', () => {
  it("refuses a folder that is not that CLI's as a mistake in the command line, before the data is opened", async () => {
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const { run } = historyIn(dataDir);
    const codexRoot = copyOf('codex', '0.169.0', 'plain-answer');
    const before = readdirSync(dataDir).sort();

    const wrongKind = await run('--workspace', org, '--claude-dir', codexRoot);
    expect({ code: wrongKind.code, stdout: wrongKind.stdout }).toEqual({ code: 2, stdout: '' });
    expect(wrongKind.stderr).toContain(
      `sessiondesk: --claude-dir: ${codexRoot} has no Claude Code conversations: Claude Code keeps them in ` +
        '~/.claude/projects/<project>/<id>.jsonl; this looks like a Codex folder (~/.codex/sessions).\n',
    );
    expect(wrongKind.stderr).toContain('Usage: sessiondesk history import');

    const ownData = await run('--workspace', org, '--gemini-dir', dataDir);
    expect(ownData.code).toBe(2);
    expect(ownData.stderr).toContain(
      `--gemini-dir: ${dataDir} is Session Desk's data directory: Session Desk never imports its own files as history.`,
    );
    const missing = await run('--workspace', org, '--codex-dir', join(codexRoot, 'nowhere'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--codex-dir: There is no folder ${join(codexRoot, 'nowhere')}.`);
    for (const refused of [wrongKind, ownData, missing])
      expect(refused.stderr).not.toMatch(/ENOENT|rootDir|\bat /u);
    // Refused before the data directory was opened: not a file in it changed.
    expect(readdirSync(dataDir).sort()).toEqual(before);
  }, 60_000);

  it('takes `~/` as the home, even where the shell left it as it is', async () => {
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const { home, run } = historyIn(dataDir);
    cpSync(join(HISTORY_FIXTURES, 'codex', '0.169.0', 'plain-answer'), join(home, 'codex-elsewhere'), {
      recursive: true,
    });
    // `--codex-dir=~/…` reaches the command with its `~`: a shell expands it only at a word's start.
    const out = await ok(run('--workspace', org, '--codex-dir=~/codex-elsewhere'));
    expect(out).toMatch(new RegExp(`^codex: 1 sessions \\(1 new, 0 updated\\), \\d+ messages$`, 'mu'));
    expect(out).not.toContain('~');
  }, 60_000);

  it('names the workspace by its id or its name; an unknown one is refused with the list of them', async () => {
    const dataDir = sandbox.dataDir();
    const { org, email } = await seedOwner(dataDir);
    const other = await ok(cliIn(dataDir)('workspace', 'create', '--name', 'Team tools', '--owner', email));
    const { run } = historyIn(dataDir);
    const claudeRoot = copyOf('claude-code', '2.1.330', 'plain-answer');

    expect(await ok(run('--workspace', 'team TOOLS', '--claude-dir', claudeRoot))).toMatch(
      /^claude-code: 1 sessions \(1 new, 0 updated\), 4 messages$/mu,
    );
    const expected =
      'sessiondesk: There is no workspace "Tools" (by id or by name). The workspaces are:\n' +
      `  "Owner space" (${org})\n  "Team tools" (${other})\n`;
    const unknown = await run('--workspace', 'Tools', '--claude-dir', claudeRoot);
    expect({ code: unknown.code, stderr: unknown.stderr }).toEqual({ code: 1, stderr: expected });
    // The same through the server that holds the data directory.
    await sandbox.serve(dataDir);
    const throughServer = await run('--workspace', 'Tools', '--claude-dir', claudeRoot);
    expect({ code: throughServer.code, stderr: throughServer.stderr }).toEqual({ code: 1, stderr: expected });
    expect(await ok(run('--workspace', 'Owner space', '--claude-dir', claudeRoot))).toMatch(
      /^claude-code: 1 sessions \(1 new, 0 updated\), 4 messages$/mu,
    );
  }, 60_000);
});

describe('the command the History page shows', () => {
  /**
   * Serves `dataDir` (named with --data-dir, else as the default one under `config`), reads the
   * command the History page shows its owner, and runs it in a shell as shown, in a home that
   * holds a Claude Code folder.
   */
  async function runAsShown(dataDir: string, named: boolean, config: string) {
    const { email, org } = await seedOwner(dataDir);
    const env = { XDG_CONFIG_HOME: config, SESSIONDESK_DATA_DIR: '' };
    const serve = await sandbox.serveWithEnv(['--port', '0', ...(named ? ['--data-dir', dataDir] : [])], env);
    // Printed after the URL the start waits for, and may come in a later piece of output.
    await expect.poll(() => serve.stdout()).toContain(`Data directory: ${dataDir}\n`);
    const cookie = await signInAt(serve.url, email);
    const response = await fetch(`${serve.url}/api/workspaces/${org}/history-sources`, {
      headers: { cookie },
    });
    const { importCommand } = HistorySourcesResponseSchema.parse(await response.json());
    if (importCommand === undefined) throw new Error('a desktop suggests its history import command');
    const home = sandbox.dataDir();
    cpSync(join(HISTORY_FIXTURES, 'claude-code', '2.1.330', 'plain-answer'), join(home, '.claude'), {
      recursive: true,
    });
    const ran = await runInShell(importCommand, {
      ...env,
      HOME: home,
      CLAUDE_CONFIG_DIR: '',
      CODEX_HOME: '',
    });
    return { importCommand, org, ran, serve };
  }

  it('names the data directory when the server runs on another than the default, quoted for a shell', async () => {
    const dataDir = join(sandbox.dataDir(), "it's my data");
    const { importCommand, org, ran, serve } = await runAsShown(dataDir, true, sandbox.dataDir());
    expect(importCommand).toBe(
      `sessiondesk history import --workspace ${org} --data-dir '${dataDir.replace("it's", "it'\\''s")}'`,
    );
    expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
    expect(ran.stdout).toMatch(/^claude-code: 1 sessions \(1 new, 0 updated\), 4 messages$/mu);

    // The data directory's path is the administrator's to see: another member is shown DATA_DIR.
    const cli = cliIn(dataDir);
    const member = 'member@history.test';
    await ok(cli('user', 'create', '--email', member, '--name', 'Member', '--password', PASSWORD));
    await ok(cli('member', 'add', '--workspace', org, '--email', member));
    const response = await fetch(`${serve.url}/api/workspaces/${org}/history-sources`, {
      headers: { cookie: await signInAt(serve.url, member) },
    });
    const body = await response.text();
    expect(body).not.toContain(dataDir);
    expect(HistorySourcesResponseSchema.parse(JSON.parse(body)).importCommand).toBe(
      `sessiondesk history import --workspace ${org} --data-dir DATA_DIR`,
    );
  }, 60_000);

  it('leaves it out on the default data directory, which the command finds by itself', async () => {
    const config = sandbox.dataDir();
    const dataDir = join(config, 'Session Desk');
    mkdirSync(dataDir);
    const { importCommand, org, ran } = await runAsShown(dataDir, false, config);
    expect(importCommand).toBe(`sessiondesk history import --workspace ${org}`);
    expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
    expect(ran.stdout).toMatch(/^claude-code: 1 sessions \(1 new, 0 updated\), 4 messages$/mu);
  }, 60_000);
});
