// `sessiondesk history import --qwen-dir` as a process, over the chat files Qwen Code 0.24.4
// wrote (test/fixtures/history/qwen-code/), and the folders it takes for Qwen Code's.
import { cpSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ListSessionsResponseSchema } from '../../src-shared/sessions.js';
import { cliIn, historyImportIn, ok, seedOwner, useSandbox } from '../helpers/cli-extra.js';
import { filesUnder, HISTORY_FIXTURES } from '../helpers/hostile-history.js';

const sandbox = useSandbox();
const recorded = (kind: string, version: string, scenario: string) =>
  join(HISTORY_FIXTURES, kind, version, scenario);

/** Both Qwen Code recordings in one root, as two projects of one ~/.qwen, written an hour ago. */
function qwenRoot(): string {
  const root = join(sandbox.dataDir(), 'qwen-root');
  for (const scenario of ['write-and-commit', 'failures'])
    cpSync(recorded('qwen-code', '0.24.4', scenario), root, { recursive: true });
  const anHourAgo = new Date(Date.now() - 3_600_000);
  for (const file of filesUnder(root, /./u)) utimesSync(file, anHourAgo, anHourAgo);
  return root;
}

/** The command in a home of its own that holds no CLI folder; `env` adds to its environment. */
function historyIn(dataDir: string, env: NodeJS.ProcessEnv = {}) {
  return historyImportIn(dataDir, sandbox.dataDir(), env);
}

describe('history import --qwen-dir', () => {
  it("imports Qwen Code's chats, once, as the ACP agent qwen-code's sessions", async () => {
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const root = qwenRoot();
    const out = await ok(historyIn(dataDir)('--workspace', org, '--qwen-dir', root));
    expect(out.split('\n')).toContainEqual(
      expect.stringMatching(/^qwen-code: 2 sessions \(2 new, 0 updated\), \d+ messages$/u),
    );
    const again = await ok(historyIn(dataDir)('--workspace', org, '--qwen-dir', root));
    expect(again.split('\n')).toContainEqual(
      expect.stringMatching(/^qwen-code: 2 sessions \(0 new, 0 updated\), \d+ messages$/u),
    );

    const key = await ok(cliIn(dataDir)('key', 'create', '--workspace', org));
    const serve = await sandbox.serve(dataDir);
    const response = await fetch(`${serve.url}/api/sessions?organizationId=${org}&agent=acp:qwen-code`, {
      headers: { 'x-api-key': key },
    });
    expect(response.status).toBe(200);
    const { sessions } = ListSessionsResponseSchema.parse(await response.json());
    expect(sessions.map((s) => [s.status, s.firstMessagePreview]).sort()).toEqual([
      ['completed', 'QWEN-NOTES: write NOTES.md saying "First line" and commit it.'],
      ['failed', 'QWEN-FAIL: read MISSING.md.'],
    ]);
    for (const session of sessions)
      expect(session).toMatchObject({ agent: 'acp', acpAgent: 'qwen-code', source: { kind: 'qwen-code' } });
    await serve.stop();
  }, 120_000);

  it('takes QWEN_HOME as the default folder, as Qwen Code does', async () => {
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const root = qwenRoot();
    const out = await ok(historyIn(dataDir, { QWEN_HOME: root })('--workspace', org));
    expect(out.split('\n')).toContainEqual(
      expect.stringMatching(/^qwen-code: 2 sessions \(2 new, 0 updated\), \d+ messages$/u),
    );
  }, 90_000);

  it("refuses another CLI's folder as Qwen Code's, and Qwen Code's as another's, saying what it looks like", async () => {
    const dataDir = sandbox.dataDir();
    const { org } = await seedOwner(dataDir);
    const run = historyIn(dataDir);
    const root = qwenRoot();
    const claudeRoot = join(sandbox.dataDir(), 'claude-root');
    cpSync(recorded('claude-code', '2.1.330', 'plain-answer'), claudeRoot, { recursive: true });

    const claudeAsQwen = await run('--workspace', org, '--qwen-dir', claudeRoot);
    expect(claudeAsQwen.code).toBe(2);
    expect(claudeAsQwen.stderr).toContain(
      `sessiondesk: --qwen-dir: ${claudeRoot} has no Qwen Code conversations: Qwen Code keeps them in ` +
        '~/.qwen/projects/<project>/chats/<id>.jsonl; this looks like a Claude Code folder (~/.claude/projects).\n',
    );
    // Both keep a `projects` folder: Qwen Code's project folders hold only folders, as a fresh
    // Claude Code folder's do, and still it is not taken for one.
    const qwenAsClaude = await run('--workspace', org, '--claude-dir', root);
    expect(qwenAsClaude.code).toBe(2);
    expect(qwenAsClaude.stderr).toContain(
      `sessiondesk: --claude-dir: ${root} has no Claude Code conversations: Claude Code keeps them in ` +
        '~/.claude/projects/<project>/<id>.jsonl; this looks like a Qwen Code folder (~/.qwen/projects).\n',
    );
    const inside = await run('--workspace', org, '--qwen-dir', join(root, 'projects'));
    expect(inside.code).toBe(2);
    expect(inside.stderr).toContain(`it lies inside Qwen Code's folder ${root}: name that folder instead.`);
  }, 90_000);
});
